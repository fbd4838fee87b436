import { createHash, hash, randomFillSync } from 'node:crypto';
import { contentVersion } from '../../src/seam/index.js';
import { interleave, KiB, MiB, reps, row, type BenchRow } from '../lib.js';

const SECTION = 'versions';

/**
 * Digest cost of the version scheme: the seam's contentVersion (sha256 via one-shot crypto.hash)
 * against the streaming createHash API and, for context, other digests Node ships.
 */
export async function runVersionsBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const big = randomFillSync(Buffer.allocUnsafe(64 * MiB));
  const bigVariants = {
    'contentVersion (sha256, crypto.hash)': () => contentVersion(big),
    'sha256 createHash': () => createHash('sha256').update(big).digest('base64url'),
    'sha1 crypto.hash': () => hash('sha1', big, 'base64url'),
    'md5 crypto.hash': () => hash('md5', big, 'base64url'),
    'sha512 crypto.hash': () => hash('sha512', big, 'base64url'),
  };
  const t = await interleave(bigVariants, { reps: reps(5), warmup: 1 });
  const base = { name: 'sha256 createHash', timing: t['sha256 createHash'] };
  for (const [name, timing] of Object.entries(t)) {
    if (name === base.name) continue;
    const mbps = (64 * MiB) / 1e6 / (timing.median / 1000);
    rows.push(row({ section: SECTION, case: '64 MiB buffer', subject: name, unit: 'ms', note: `${mbps.toFixed(0)} MB/s` }, timing, base));
  }

  // Small files: per-call overhead dominates, which is what a 1 KiB read or edit pays.
  const small = randomFillSync(Buffer.allocUnsafe(KiB));
  const n = 20_000;
  const loop = (f: () => unknown) => () => {
    for (let i = 0; i < n; i++) f();
  };
  const s = await interleave(
    {
      contentVersion: loop(() => contentVersion(small)),
      createHash: loop(() => createHash('sha256').update(small).digest('base64url')),
    },
    { reps: reps(7), warmup: 1, ops: n, scale: 1000 },
  );
  rows.push(
    row(
      { section: SECTION, case: '1 KiB buffer', subject: 'contentVersion (sha256, crypto.hash)', unit: 'µs/op' },
      s.contentVersion,
      { name: 'sha256 createHash', timing: s.createHash },
    ),
  );
  return rows;
}
