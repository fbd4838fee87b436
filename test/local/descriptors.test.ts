import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalFs, type LocalFileSystem } from '../../src/backends/local/index.js';
import { isFsError } from '../../src/seam/errors.js';
import { FaultyIo } from '../reliability/faulty-io.js';
import { makeArea } from './helpers.js';

/**
 * Every error path closes what it opened: each directory operation runs once to count its calls,
 * then again with each call in turn failing (EIO); no descriptor may stay open after it returns.
 */

interface Op {
  readonly name: string;
  reset(root: string): void;
  run(fs: LocalFileSystem): Promise<unknown>;
}

const OPS: readonly Op[] = [
  {
    name: 'rmdir',
    reset: (root) => {
      rmSync(join(root, 'd'), { recursive: true, force: true });
      mkdirSync(join(root, 'd'));
    },
    run: async (fs) => fs.rmdir(await fs.resolve('d')),
  },
  {
    name: 'rmdir, recursive',
    reset: (root) => {
      rmSync(join(root, 'd'), { recursive: true, force: true });
      mkdirSync(join(root, 'd/e'), { recursive: true });
      writeFileSync(join(root, 'd/e/f.txt'), 'f\n');
    },
    run: async (fs) => fs.rmdir(await fs.resolve('d'), { recursive: true }),
  },
  {
    name: 'mkdir with missing parents',
    reset: (root) => rmSync(join(root, 'm'), { recursive: true, force: true }),
    run: async (fs) => fs.mkdir(await fs.resolve('m/n/o')),
  },
  {
    name: 'rename into a missing directory',
    reset: (root) => {
      rmSync(join(root, 'to'), { recursive: true, force: true });
      writeFileSync(join(root, 'from.txt'), 'moved\n');
    },
    run: async (fs) => fs.rename(await fs.resolve('from.txt'), await fs.resolve('to/here.txt')),
  },
  {
    name: 'remove',
    reset: (root) => writeFileSync(join(root, 'gone.txt'), 'gone\n'),
    run: async (fs) => fs.remove(await fs.resolve('gone.txt')),
  },
];

describe('local provider: a failing call leaves no descriptor open', () => {
  const modes = [{ label: '' }, { label: ' [inode anchoring]', anchoring: 'inode' as const }];
  for (const [op, mode] of OPS.flatMap((o) => modes.map((m) => [o, m] as const))) {
    it(`${op.name}${mode.label}`, async () => {
      const { root, cleanup } = await makeArea('descriptors');
      try {
        const f = new FaultyIo();
        const fs = createLocalFs({ root, io: f.io, ...(mode.anchoring ? { anchoring: mode.anchoring } : {}) });
        op.reset(root);
        f.reset();
        await op.run(fs);
        const total = f.calls.length;
        expect(total).toBeGreaterThan(2);
        for (let n = 1; n <= total; n++) {
          op.reset(root);
          f.arm(n, 'EIO');
          const error = await op.run(fs).then(
            () => undefined,
            (err: unknown) => err,
          );
          const where = `${op.name}, call ${n} of ${total} (${f.failed?.op ?? '?'}) fails`;
          f.reset();
          if (error !== undefined) expect(isFsError(error), `${where}: ${String(error)}`).toBe(true);
          expect(f.open.size, `${where}: descriptors left open`).toBe(0);
        }
      } finally {
        await cleanup();
      }
    });
  }
});
