import fc from 'fast-check';
import type { FileSystem, FsChangeEvent, FsWatch } from '../../src/seam/index.js';

/** One operation of a random sequence; paths collide often (a file where a directory is asked for). */
export type FeedOp =
  | { op: 'write'; path: string; text: string }
  | { op: 'remove'; path: string }
  | { op: 'mkdir'; path: string }
  | { op: 'rmdir'; path: string; recursive: boolean }
  | { op: 'rename'; from: string; to: string }
  | { op: 'chmod'; path: string; executable: boolean }
  | { op: 'symlink'; path: string; text: string };

const PATHS = ['/a', '/b', '/d/a', '/d/b', '/d/e/f', '/e', '/e/g'] as const;

const pathArb = fc.constantFrom(...PATHS);

export const feedOpArb: fc.Arbitrary<FeedOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('write' as const), path: pathArb, text: fc.constantFrom('', 'x', 'y\n', 'zz') }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), path: pathArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('mkdir' as const), path: fc.constantFrom('/d', '/d/e', '/e', '/n') }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rmdir' as const), path: fc.constantFrom('/d', '/d/e', '/e', '/n'), recursive: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), from: pathArb, to: fc.constantFrom(...PATHS, '/n/m') }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('chmod' as const), path: pathArb, executable: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('symlink' as const), path: pathArb, text: fc.constantFrom('/a', 'b') }) },
);

/**
 * Runs `op` on `fs`; the change the model expects from it when it succeeds, undefined when it
 * fails (a failed operation changes nothing, so it reports nothing).
 */
export async function runOp(fs: FileSystem, op: FeedOp): Promise<Omit<FsChangeEvent, 'owner'> | undefined> {
  const at = async (p: string) => (await fs.resolve(p, { noFollow: true })).targetKey;
  const follow = async (p: string) => (await fs.resolve(p)).targetKey;
  const t = (key: string) => fs.resolve(key, { noFollow: true });
  try {
    switch (op.op) {
      case 'write': {
        const key = await follow(op.path);
        const { version } = await fs.writeText(await t(key), op.text);
        return { kind: 'write', path: key, version };
      }
      case 'remove': {
        const key = await at(op.path);
        await fs.remove(await t(key));
        return { kind: 'remove', path: key };
      }
      case 'mkdir': {
        const key = await at(op.path);
        await fs.mkdir(await t(key));
        return { kind: 'mkdir', path: key };
      }
      case 'rmdir': {
        const key = await at(op.path);
        await fs.rmdir(await t(key), { recursive: op.recursive });
        return { kind: 'rmdir', path: key };
      }
      case 'rename': {
        const [from, to] = [await at(op.from), await at(op.to)];
        await fs.rename(await t(from), await t(to));
        // A move onto itself changes nothing.
        if (from === to) return undefined;
        const info = await fs.stat(await t(to));
        return { kind: 'rename', path: to, from, ...(info?.type === 'file' ? { version: info.version } : {}) };
      }
      case 'chmod': {
        const key = await follow(op.path);
        await fs.setExecutable!(await t(key), op.executable);
        return { kind: 'mode', path: key };
      }
      case 'symlink': {
        const key = await at(op.path);
        await fs.symlink!(await t(key), op.text);
        return { kind: 'link', path: key };
      }
    }
  } catch (err) {
    if ((err as { name?: string }).name !== 'FsError') throw err;
    return undefined;
  }
}

/** Everything `watch` delivered up to and including the change at `sentinel` (made by the caller). */
export async function drainUntil(watch: FsWatch, sentinel: string): Promise<FsChangeEvent[]> {
  const got: FsChangeEvent[] = [];
  for (;;) {
    const { done, value } = await watch.next();
    if (done) throw new Error('the watch ended before the sentinel');
    if (value.path === sentinel) return got;
    got.push(value);
  }
}

/** The events for each path, in order (rename events under both their sides). */
export function perPath(events: readonly Omit<FsChangeEvent, 'owner'>[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const add = (p: string, e: unknown) => out.set(p, [...(out.get(p) ?? []), e]);
  for (const e of events) {
    add(e.path, e);
    if (e.from !== undefined) add(e.from, e);
  }
  return out;
}
