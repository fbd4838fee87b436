import { promises as fsp, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import type { FsWalkEntry } from '../../src/seam/index.js';
import { glob, grep } from '../../src/search/index.js';
import { makeArea, type Area } from '../local/helpers.js';

/**
 * The local provider's native walk checks confinement once per directory, on the descriptor it
 * lists through: a directory swapped for a link to outside the root after it was listed (the
 * swap is made from the walk's own prune hook, so the timing is exact) is never listed.
 */
describe('local walk under a symlink swap', () => {
  let area: Area | undefined;
  afterEach(async () => {
    await area?.cleanup();
    area = undefined;
  });

  for (const swapTo of ['outside', 'inside'] as const) {
    it(`a subdirectory swapped for a link (${swapTo} the root) after its entry was read is not listed through the link`, async () => {
      area = await makeArea('walk');
      const { root, outside } = area;
      await fsp.mkdir(join(root, 'a'));
      await fsp.writeFile(join(root, 'a', 'mine.txt'), 'mine\n');
      await fsp.mkdir(join(root, 'other'));
      await fsp.writeFile(join(root, 'other', 'theirs.txt'), 'theirs\n');
      await fsp.writeFile(join(outside, 'secret.txt'), 'secret\n');
      const fs = createLocalFs({ root });
      const seen: string[] = [];
      const unreadable: string[] = [];
      let error: unknown;
      try {
        for await (const entry of fs.walk(await fs.resolve('/'), {
          prune: (e: FsWalkEntry) => {
            // Swap between the listing of / and the opening of a.
            if (e.path === 'a') swap(join(root, 'a'), swapTo === 'outside' ? outside : join(root, 'other'));
            return false;
          },
          onUnreadable: (e) => unreadable.push(e.path),
        })) {
          seen.push(entry.path);
        }
      } catch (err) {
        error = err;
      }
      expect(seen.filter((p) => p.includes('secret') || p === 'a/theirs.txt')).toEqual([]);
      // Either passed over (reported) or the walk failed with a code; never listed through the link.
      if (error === undefined) expect(unreadable).toEqual(['a']);
      else expect(error).toMatchObject({ name: 'FsError' });
    });
  }

  it('glob and grep over the local provider find the same files as before', async () => {
    area = await makeArea('walk');
    const { root } = area;
    await fsp.mkdir(join(root, 'src', 'deep'), { recursive: true });
    await fsp.writeFile(join(root, 'src', 'a.ts'), 'TODO a\n');
    await fsp.writeFile(join(root, 'src', 'deep', 'b.ts'), 'none\nTODO b\r');
    await fsp.writeFile(join(root, 'README.md'), 'TODO r\n');
    await fsp.symlink(join(root, 'src'), join(root, 'link'));
    const fs = createLocalFs({ root });
    expect((await glob(fs, '**/*.ts')).matches.map((m) => m.path)).toEqual([
      `${root}/link/a.ts`,
      `${root}/link/deep/b.ts`,
      `${root}/src/a.ts`,
      `${root}/src/deep/b.ts`,
    ]);
    const found = await grep(fs, 'TODO', { include: '*.ts' });
    expect(found.matches.map((m) => [m.path.slice(root.length), m.line, m.text])).toEqual([
      ['/link/a.ts', 1, 'TODO a'],
      ['/link/deep/b.ts', 2, 'TODO b\r'],
      ['/src/a.ts', 1, 'TODO a'],
      ['/src/deep/b.ts', 2, 'TODO b\r'],
    ]);
  });
});

/** Replaces the directory `dir` by a symlink to `to`, synchronously (inside the prune hook). */
function swap(dir: string, to: string): void {
  renameSync(dir, `${dir}.moved`);
  symlinkSync(to, dir);
}
