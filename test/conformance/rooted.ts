import { type MemoryProvider } from '../../src/backends/memory/index.js';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import type { ConformanceSubject } from '../../src/conformance/index.js';
import { FsError, createFs, isWithin, resolveLinks, type FsProvider, type FsTarget, type LinkReader } from '../../src/seam/index.js';
import { volumeHooks } from './memory-subject.js';

/**
 * A memory provider confined to a root, so the suite's P2 rule runs in this repository's own
 * tests. Two classic bugs for P2 to catch: `'lexical'` checks the root only lexically (links
 * lead out), `'resolve'` checks links at resolve only (a file swapped for a link afterwards leads out).
 */
export function rootedSubject(confineLinks: 'always' | 'resolve' | 'lexical' | 'no-absolute'): ConformanceSubject {
  const root = '/jail';
  const outsideDir = '/elsewhere';
  const base = createMemoryProvider({ files: { [`${root}/work`]: null, [outsideDir]: null }, cwd: root });
  const provider = confineLinks === 'lexical' ? { ...base, root } : confine(base, root, confineLinks !== 'resolve', confineLinks === 'no-absolute');
  return { fs: createFs(provider), provider, base: `${root}/work`, outsideDir, ...volumeHooks(base.volume) };
}

/** `refuseAbsolute`: the over-cautious bug of refusing every absolute link, even one that stays inside. */
function confine(base: MemoryProvider, root: string, atEveryOperation: boolean, refuseAbsolute = false): FsProvider {
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
    readlink(path) {
      const text = String(vol.readlinkSync(path));
      if (refuseAbsolute && text.startsWith('/')) throw new FsError('FS_OUTSIDE_ROOT', `"${path}" is an absolute link`);
      return text;
    },
  };
  const outside = (displayPath: string) => new FsError('FS_OUTSIDE_ROOT', `"${displayPath}" leads outside the root "${root}"`);
  const inside = async (path: string, displayPath: string): Promise<string> => {
    // The root's ancestors are passed on the way down (and after an absolute link): not an escape.
    const key = await resolveLinks(path, reader, (resolved) => {
      if (!isWithin(root, resolved) && !isWithin(resolved, root)) throw outside(displayPath);
    });
    if (!isWithin(root, key)) throw outside(displayPath);
    return key;
  };
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
    swap: async (t, o) => base.swap(await checked(t), o),
    modify: async (t, o, change) => base.modify!(await checked(t), o, change),
    listDir: async (t, o) => base.listDir(await checked(t), o),
    mkdir: async (t, o) => base.mkdir(await checked(t), o),
    rmdir: async (t, o) => base.rmdir(await checked(t), o),
    rename: async (f, t, o) => base.rename(await checked(f), await checked(t), o),
    walk: undefined,
  };
}
