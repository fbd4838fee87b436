import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildForChildren, findTemps } from '../local/helpers.js';
import { runWrapped } from './children.js';
import { tempDir } from './subjects.js';
import { tally } from './tally.js';

/**
 * Real limits, in child processes: a disk that fills up (a 64 KiB tmpfs mounted in a private
 * mount namespace with `unshare -m`, so nothing outlives the child) and a file-size limit
 * (`ulimit -f`, which makes a write beyond it fail with EFBIG; Node ignores SIGXFSZ). Writes and
 * edits that do not fit fail with a coded error and leave the file as it was, no temp file, and
 * room for the next, smaller write. Where the machine does not allow the mount, the case is
 * skipped with the reason printed.
 */

/** The operations each child runs; the report is what it prints. */
const operations = (url: string, root: string, big: number) => `
  import { readdirSync, readFileSync } from 'node:fs';
  const { createLocalFs } = await import(${JSON.stringify(url)});
  const fs = createLocalFs({ root: ${JSON.stringify(root)} });
  const out = {};
  const attempt = async (label, fn) => {
    try { await fn(); out[label] = { ok: true }; }
    catch (e) { out[label] = { ok: false, name: e.name, code: e.code, message: String(e.message) }; }
  };
  const keep = await fs.resolve('keep.txt');
  const keepText = 'START\\n' + 'k'.repeat(20000) + '\\n';
  await attempt('create a small file', () => fs.writeText(keep, keepText, { kind: 'createIfAbsent' }));
  const v1 = (await fs.stat(keep)).version;
  await attempt('create a file that does not fit', async () => fs.writeText(await fs.resolve('big.txt'), 'b'.repeat(${big}), { kind: 'createIfAbsent' }));
  await attempt('rewrite the file larger than fits', () => fs.writeText(keep, 'r'.repeat(${big}), { kind: 'replaceIfVersion', version: v1 }));
  await attempt('edit the file larger than fits', () => fs.editText(keep, { oldString: 'START', newString: 'g'.repeat(${big}) }, { version: v1 }));
  const unchanged = readFileSync(${JSON.stringify(root)} + '/keep.txt', 'utf8') === keepText;
  await attempt('a small edit afterwards', () => fs.editText(keep, { oldString: 'START', newString: 'BEGIN' }, { version: v1 }));
  out.unchanged = unchanged;
  out.after = readFileSync(${JSON.stringify(root)} + '/keep.txt', 'utf8').slice(0, 6);
  out.files = readdirSync(${JSON.stringify(root)}).sort();
  process.stdout.write(JSON.stringify(out));
`;

interface Report {
  readonly [label: string]: unknown;
  readonly unchanged: boolean;
  readonly after: string;
  readonly files: string[];
}

function checkReport(report: Report, code: string, errno: string): void {
  expect(report['create a small file']).toEqual({ ok: true });
  for (const label of ['create a file that does not fit', 'rewrite the file larger than fits', 'edit the file larger than fits']) {
    tally.limitCases++;
    expect(report[label], label).toMatchObject({ ok: false, name: 'FsError', code });
    expect((report[label] as { message: string }).message, label).toContain(errno);
  }
  expect(report.unchanged, 'the file kept its bytes through the failures').toBe(true);
  expect(report['a small edit afterwards'], 'the next write has room and no lock in its way').toEqual({ ok: true });
  expect(report.after).toBe('BEGIN\n');
  // Only the file: no temp file, no half-written big.txt.
  expect(report.files).toEqual(['keep.txt']);
}

export function describeLimits(): void {
  describe('real disk-full and file-size limits (child processes)', () => {
    test('a full disk (64 KiB tmpfs): ENOSPC is FS_IO_ERROR, the file is intact, no temp file', async (ctx) => {
      const { dir, cleanup } = await tempDir('enospc');
      try {
        const mnt = join(dir, 'mnt');
        mkdirSync(mnt);
        const probe = await runWrapped('unshare', ['-m', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs "$1"', 'sh', mnt]).catch(
          (err: unknown) => ({ code: -1, signal: null, stdout: '', stderr: String(err) }),
        );
        if (probe.code !== 0) {
          const reason = `disk full: cannot mount a tmpfs in a private namespace here (${probe.stderr.trim().split('\n')[0]})`;
          tally.skipped.push(reason);
          console.log(`skipped: ${reason}`);
          ctx.skip();
          return;
        }
        const build = buildForChildren();
        const res = await runWrapped('unshare', [
          '-m',
          '--propagation',
          'private',
          'sh',
          '-c',
          'mount -t tmpfs -o size=64k tmpfs "$1" && exec "$2" --input-type=module -e "$3"',
          'sh',
          mnt,
          process.execPath,
          operations(build.localUrl, mnt, 48_000),
        ]);
        expect(res.code, res.stderr).toBe(0);
        const report = JSON.parse(res.stdout) as Report;
        checkReport(report, 'FS_IO_ERROR', 'ENOSPC');
        // The tmpfs went with the child's namespace: the mount point is an empty directory again.
        expect(readdirSync(mnt)).toEqual([]);
        console.log(`disk full: ${JSON.stringify(report['rewrite the file larger than fits'])}`);
      } finally {
        await cleanup();
      }
    }, 120_000);

    test('a file-size limit (ulimit -f 64): EFBIG is FS_TOO_LARGE, the file is intact, no temp file', async (ctx) => {
      const { dir, cleanup } = await tempDir('efbig');
      try {
        if (!existsSync('/bin/bash') && !existsSync('/usr/bin/bash')) {
          const reason = 'file-size limit: no bash to set ulimit -f';
          tally.skipped.push(reason);
          console.log(`skipped: ${reason}`);
          ctx.skip();
          return;
        }
        const build = buildForChildren();
        // bash counts -f in 1024-byte blocks: 64 KiB.
        const res = await runWrapped('bash', ['-c', 'ulimit -f 64 && exec "$0" --input-type=module -e "$1"', process.execPath, operations(build.localUrl, dir, 100_000)]);
        expect(res.signal, `the child died of ${res.signal}: ${res.stderr}`).toBeNull();
        expect(res.code, res.stderr).toBe(0);
        const report = JSON.parse(res.stdout) as Report;
        checkReport(report, 'FS_TOO_LARGE', 'EFBIG');
        expect(await findTemps(dir)).toEqual([]);
        expect(readFileSync(join(dir, 'keep.txt'), 'utf8').startsWith('BEGIN\n')).toBe(true);
        console.log(`file-size limit: ${JSON.stringify(report['rewrite the file larger than fits'])}`);
      } finally {
        await cleanup();
      }
    }, 120_000);
  });
}
