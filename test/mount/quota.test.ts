import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { mountFs } from '../../src/mount/index.js';
import { cleanUp, fuseUnavailable, sh } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);

// Q1 through FUSE (what `dsh-fs run` does): a program's file that would pass the sandbox's quota
// fails at close with EDQUOT, and the sandbox keeps nothing of it.
describe.skipIf(why !== undefined)('a mounted sandbox under a quota', () => {
  it('Q1: a program writing 2 MB into a sandbox of maxBytes 1,000,000 gets EDQUOT; what fits is written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-quota-'));
    const fs = await createOverlayFs({ lower: createMemoryFs({ files: { '/kept.txt': 'kept\n' } }), maxBytes: 1_000_000 });
    const mount = await mountFs(fs, dir);
    try {
      const big = await sh(`cd "${dir}" && head -c 2000000 /dev/zero > big.bin; echo "status $?"`);
      expect(big.stdout).toContain('status 1');
      expect(big.stderr).toMatch(/quota exceeded/i);
      expect(await fs.stat(await fs.resolve('/big.bin')).then((i) => i?.size ?? 0)).toBe(0);
      const small = await sh(`cd "${dir}" && head -c 500000 /dev/zero > small.bin && echo ok`);
      expect(small.stdout).toBe('ok\n');
      expect((await fs.stat(await fs.resolve('/small.bin')))?.size).toBe(500_000);
    } finally {
      await cleanUp(mount, dir);
    }
  });
});
