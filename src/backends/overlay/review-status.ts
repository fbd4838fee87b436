import { posix } from 'node:path';
import { compareNames, type FsOpOptions } from '../../seam/index.js';
import type { UpperState } from './state.js';
import { isLinkVersion } from './links.js';
import type { ReviewContext } from './review-context.js';
import { markIgnored } from './review-ignored.js';
import { picks, selectionRoots } from './review-select.js';
import type { OverlayChange } from './review-types.js';

/** Every change of the upper layer, sorted by path (at one path, a removal first). */
export function allChanges(state: UpperState): OverlayChange[] {
  const entries = [...state.entries].sort(([a], [b]) => compareNames(a, b));
  // A source whiteout is shown as part of one rename: that of the first file (by path) moved from it.
  const claimed = new Map<string, string>();
  for (const [key, e] of entries) {
    if (e.kind !== 'file' || e.origin === undefined) continue;
    const from = e.origin.path;
    if (state.entries.get(from)?.kind === 'whiteout' && !claimed.has(from)) claimed.set(from, key);
  }
  const out: OverlayChange[] = [];
  for (const [key, e] of entries) {
    if (e.kind === 'whiteout') {
      if (!claimed.has(key)) out.push({ path: key, kind: 'deleted', type: isLinkVersion(e.base) ? 'link' : 'file', baseVersion: e.base });
      continue;
    }
    if (e.kind === 'link') {
      out.push({ path: key, kind: e.base === undefined ? 'added' : 'modified', type: 'link', baseVersion: e.base, linkText: e.text });
      continue;
    }
    const renamed = e.origin !== undefined && claimed.get(e.origin.path) === key;
    out.push({
      path: key,
      kind: renamed ? 'renamed' : e.base === undefined ? 'added' : 'modified',
      type: 'file',
      ...(renamed ? { from: e.origin!.path } : {}),
      baseVersion: e.base,
      version: e.version,
      size: e.bytes.byteLength,
      ...(e.executable ? { executable: true } : {}),
    });
  }
  // Directories: only those nothing else implies (an empty one made here), and removed lower ones.
  const holders = new Set<string>();
  const hold = (key: string) => {
    for (let d = posix.dirname(key); !holders.has(d); d = posix.dirname(d)) {
      holders.add(d);
      if (d === '/') break;
    }
  };
  for (const [key, e] of entries) if (e.kind !== 'whiteout') hold(key);
  for (const dir of state.dirs) hold(dir);
  for (const dir of state.dirs) {
    if (!state.opaque.has(dir) && !holders.has(dir)) out.push({ path: dir, kind: 'added', type: 'directory', baseVersion: undefined });
  }
  for (const dir of state.opaque) {
    out.push({ path: dir, kind: state.dirs.has(dir) ? 'modified' : 'deleted', type: 'directory', baseVersion: undefined });
  }
  const rank = (c: OverlayChange) => (c.kind === 'deleted' ? 0 : 1);
  return out.sort((a, b) => compareNames(a.path, b.path) || rank(a) - rank(b));
}

export async function changes(ctx: ReviewContext, paths?: readonly string[], options: FsOpOptions = {}): Promise<OverlayChange[]> {
  const roots = await selectionRoots(ctx, paths, options.signal);
  return markIgnored(ctx, allChanges(ctx.state).filter((c) => picks(roots, c)), options.signal);
}
