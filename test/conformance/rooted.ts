import { createMemoryProvider, type MemoryProvider } from '../../src/backends/memory/index.js';
import type { ConformanceSubject } from '../../src/conformance/index.js';
import { FsError, createFs, isWithin, resolveLinks, type FsProvider, type FsTarget, type LinkReader } from '../../src/seam/index.js';
import { volumeHooks } from './memory-subject.js';

/**
 * A memory provider confined to a root, so the suite's P2 rule runs in this repository's own
 * tests. Two classic bugs for P2 to catch: `'lexical'` checks the root only lexically (links
 * lead out), `'resolve'` checks links at resolve only (a file swapped for a link afterwards leads out).
 */
export function rootedSubject(confineLinks: 'always' | 'resolve' | 'lexical'): ConformanceSubject {
  const root = '/jail';
  const outsideDir = '/elsewhere';
  const base = createMemoryProvider({ files: { [`${root}/work`]: null, [outsideDir]: null }, cwd: root });
  const provider = confineLinks === 'lexical' ? { ...base, root } : confine(base, root, confineLinks === 'always');
  return { fs: createFs(provider), base: `${root}/work`, outsideDir, ...volumeHooks(base.volume) };
}

function confine(base: MemoryProvider, root: string, atEveryOperation: boolean): FsProvider {
  const vol = base.volume;
  const reader: LinkReader = {
    kind(path) {
      try {
        const st = vol.lstatSync(path);
        return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other';
      } catch {
        return 'missing';
      }
    },
    readlink: (path) => String(vol.readlinkSync(path)),
  };
  const inside = async (path: string, displayPath: string): Promise<string> =>
    resolveLinks(path, reader, (resolved) => {
      if (!isWithin(root, resolved)) throw new FsError('FS_OUTSIDE_ROOT', `"${displayPath}" leads outside the root "${root}"`);
    });
  // Re-checked at every operation, so a file swapped for a link after resolve is refused too.
  const checked = async (target: FsTarget): Promise<FsTarget> => {
    if (atEveryOperation) await inside(target.targetKey, target.displayPath);
    return target;
  };
  return {
    ...base,
    root,
    async resolve(path, options) {
      await inside(path, path);
      return base.resolve(path, options);
    },
    stat: async (t, o) => base.stat(await checked(t), o),
    read: async (t, o) => base.read(await checked(t), o),
    write: async (t, o) => base.write(await checked(t), o),
    listDir: async (t, o) => base.listDir(await checked(t), o),
    remove: async (t, o) => base.remove(await checked(t), o),
  };
}
