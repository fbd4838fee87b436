import { FsError, type FsProvider, type KeyedMutex } from '../../seam/index.js';
import type { LocalIo } from './provider.js';

/** What the local provider lends its link removal and move: its anchored access and its lock. */
export interface LocalLinkDeps {
  readonly io: Pick<LocalIo, 'lstat' | 'unlink' | 'rename'>;
  readonly lock: KeyedMutex;
  guard<T>(what: string, fn: () => Promise<T>): Promise<T>;
  inParent<T>(key: string, what: string, fn: (anchor: { child(name: string): string }, name: string) => Promise<T>): Promise<T>;
  /** Drops what the provider remembers of a name (its cached version). */
  forget(key: string): void;
}

/** K2 on disk: the link's own name is unlinked or renamed in its anchored parent, never followed. */
export function localLinkEdits(d: LocalLinkDeps): Required<Pick<FsProvider, 'removeLink' | 'renameLink'>> {
  const { io, lock, guard, inParent } = d;
  async function isLink(path: string): Promise<boolean | undefined> {
    const st = await io.lstat(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    return st === undefined ? undefined : st.isSymbolicLink();
  }
  return {
    removeLink(target) {
      const what = `cannot remove the link "${target.displayPath}"`;
      const key = target.targetKey;
      return guard(what, () =>
        lock.run(key, () =>
          inParent(key, what, async (anchor, name) => {
            const link = await isLink(anchor.child(name));
            if (link === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
            if (!link) throw new FsError('FS_INVALID_ARGUMENT', `${what}: not a symbolic link`);
            await io.unlink(anchor.child(name));
            d.forget(key);
          }),
        ),
      );
    },

    renameLink(from, to, { replace }) {
      const what = `cannot move the link "${from.displayPath}" to "${to.displayPath}"`;
      const [a, b] = [from.targetKey, to.targetKey].sort();
      const move = () =>
        inParent(from.targetKey, what, (src, fromName) =>
          inParent(to.targetKey, what, async (dst, toName) => {
            const link = await isLink(src.child(fromName));
            if (link === undefined) throw new FsError('FS_NOT_FOUND', `${what}: the source does not exist`);
            if (!link) throw new FsError('FS_INVALID_ARGUMENT', `${what}: the source is not a symbolic link`);
            if (from.targetKey === to.targetKey) return;
            const there = await io.lstat(dst.child(toName)).catch(() => undefined);
            if (there !== undefined && !replace) throw new FsError('FS_ALREADY_EXISTS', `${what}: the destination exists`);
            if (there?.isDirectory()) throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the destination is a directory`);
            await io.rename(src.child(fromName), dst.child(toName));
            d.forget(from.targetKey);
            d.forget(to.targetKey);
          }),
        );
      return guard(what, () => (a === b ? lock.run(a!, move) : lock.run(a!, () => lock.run(b!, move))));
    },
  };
}
