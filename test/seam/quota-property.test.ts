import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { isFsError, type FileSystem, type FsUsage } from '../../src/seam/index.js';

// Q1 over random sequences of changes: what a filesystem under a quota holds never passes it, a
// refused change leaves everything as it was, and (where the seam counts exactly) a change is
// refused only when it would pass the limit.

const RUNS = Number(process.env.DSH_FS_QUOTA_RUNS ?? 60);
const PATHS = ['a', 'b', 'd/a', 'd/b', 'd/e/c', 'f/a'] as const;
const DIRS = ['d', 'd/e', 'f', 'g'] as const;
const LIMITS = { maxBytes: 120, maxFiles: 4 };

type Op =
  | { readonly kind: 'write'; readonly path: string; readonly size: number }
  | { readonly kind: 'remove'; readonly path: string }
  | { readonly kind: 'rename'; readonly from: string; readonly to: string }
  | { readonly kind: 'mkdir'; readonly path: string }
  | { readonly kind: 'rmdir'; readonly path: string }
  | { readonly kind: 'batch'; readonly writes: readonly { readonly path: string; readonly size: number }[] };

const pathArb = fc.constantFrom(...PATHS);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('write' as const), path: pathArb, size: fc.integer({ min: 0, max: 70 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), path: pathArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rename' as const), from: fc.constantFrom(...PATHS, ...DIRS), to: fc.constantFrom(...PATHS, ...DIRS, 'h', 'g/x') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('mkdir' as const), path: fc.constantFrom(...DIRS) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rmdir' as const), path: fc.constantFrom(...DIRS) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      writes: fc.uniqueArray(fc.record({ path: pathArb, size: fc.integer({ min: 0, max: 50 }) }), { maxLength: 3, selector: (w) => w.path }),
    }),
  },
);

async function runOp(fs: FileSystem, op: Op): Promise<void> {
  const at = (p: string) => fs.resolve(p);
  switch (op.kind) {
    case 'write':
      return void (await fs.writeBytes(await at(op.path), new Uint8Array(op.size).fill(0x62)));
    case 'remove':
      return fs.remove(await at(op.path));
    case 'rename':
      return fs.rename(await at(op.from), await at(op.to), { replace: true });
    case 'mkdir':
      return fs.mkdir(await at(op.path));
    case 'rmdir':
      return fs.rmdir(await at(op.path), { recursive: true });
    case 'batch': {
      const changes = [];
      for (const w of op.writes) {
        const target = await at(w.path);
        const info = await fs.stat(target).catch(() => undefined);
        const intent = info?.type === 'file' ? ({ kind: 'replaceIfVersion', version: info.version } as const) : ({ kind: 'createIfAbsent' } as const);
        changes.push({ kind: 'write', target, bytes: new Uint8Array(w.size).fill(0x63), intent } as const);
      }
      return void (await fs.applyChanges!(changes));
    }
  }
}

/** Runs `op`; the error code it failed with, if any. */
async function attempt(fs: FileSystem, op: Op): Promise<string | undefined> {
  try {
    await runOp(fs, op);
    return undefined;
  } catch (err) {
    if (!isFsError(err)) throw err;
    return err.code;
  }
}

/** Every file the view shows, by path, with its size (no links here). */
async function viewOf(fs: FileSystem): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const e of fs.walk(await fs.resolve('/'))) if (e.type === 'file') out.set(e.path, e.size ?? -1);
  return out;
}

const usageOfView = (view: Map<string, number>): FsUsage => ({ bytes: [...view.values()].reduce((a, b) => a + b, 0), files: view.size });
const within = (u: FsUsage) => u.bytes <= LIMITS.maxBytes && u.files <= LIMITS.maxFiles;

describe('Q1 property', () => {
  it('memory: usage never passes the limit, a refusal changes nothing, and a change is refused only when it would pass', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 25 }), async (ops) => {
        const fs: MemoryFileSystem = createMemoryFs(LIMITS);
        // The same changes with no quota: what each change would make.
        const free: MemoryFileSystem = createMemoryFs();
        for (const op of ops) {
          const before = await viewOf(fs);
          free.provider.restore(fs.provider.snapshot());
          const freeCode = await attempt(free, op);
          const code = await attempt(fs, op);
          const after = await viewOf(fs);
          expect(within(usageOfView(after))).toBe(true);
          if (code === 'FS_QUOTA_EXCEEDED') {
            expect(after).toEqual(before);
            // It would have passed: made without a quota, it holds more than allowed.
            expect(freeCode).toBeUndefined();
            expect(within(usageOfView(await viewOf(free)))).toBe(false);
          } else {
            expect(code).toBe(freeCode);
            expect(after).toEqual(await viewOf(free));
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('overlay: what the upper holds never passes the limit, the figure it keeps is a recount, and a refusal changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 25 }), fc.constantFrom<Record<string, string>>({}, { a: 'x'.repeat(90), 'd/a': 'y'.repeat(40) }), async (ops, files) => {
        const fs: OverlayFileSystem = await createOverlayFs({ lower: createMemoryFs({ files }), ...LIMITS });
        const root = await fs.resolve('/');
        for (const op of ops) {
          const before = await viewOf(fs);
          const code = await attempt(fs, op);
          const total = await fs.provider.usage!(undefined, {});
          expect(total).toEqual(await fs.provider.usage!(root, {}));
          expect(within(total)).toBe(true);
          if (code === 'FS_QUOTA_EXCEEDED') expect(await viewOf(fs)).toEqual(before);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
