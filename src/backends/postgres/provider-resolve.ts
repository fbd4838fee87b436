/** Paths resolved over the table: the seam's link rules, confined to the workspace's root. */
import { FsError, isWithin, resolveLinks, type LinkReader, type NodeKind } from '../../seam/index.js';
import type { Q } from './client.js';
import { COLUMNS, selfAndAncestors, type Row } from './rows.js';
import { ENTRIES } from './schema.js';

/** Which rows a lookup sees: the workspace, and the root nothing may resolve outside of. */
export interface Workspace {
  readonly ws: string;
  readonly root: string;
}

function outside(root: string, path: string, where: string): FsError {
  return new FsError('FS_OUTSIDE_ROOT', `"${path}" leads through a symbolic link to "${where}", which is outside the root "${root}"`);
}

/** Links resolved with the seam's resolveLinks over the table: the path's prefixes in one query, then one per link followed. */
export async function resolveKey(q: Q, { ws, root }: Workspace, path: string): Promise<string> {
  const cache = new Map<string, Row | null>();
  const load = async (paths: string[]) => {
    const missing = paths.filter((p) => !cache.has(p));
    if (missing.length === 0) return;
    const rows = await q(`SELECT ${COLUMNS} FROM ${ENTRIES} WHERE workspace = $1 AND path = ANY($2::text[])`, [ws, missing]);
    for (const p of missing) cache.set(p, null);
    for (const r of rows as Row[]) cache.set(r.path, r);
  };
  await load(selfAndAncestors(path).filter((p) => isWithin(root, p)));
  const reader: LinkReader = {
    async kind(p): Promise<NodeKind> {
      if (p !== root && isWithin(p, root)) return 'directory'; // the root's ancestors
      if (!isWithin(root, p)) throw outside(root, path, p);
      await load([p]);
      const row = cache.get(p);
      return row ? (row.kind === 'symlink' ? 'link' : row.kind) : 'missing';
    },
    readlink: (p) => cache.get(p)!.link!,
  };
  const key = await resolveLinks(path, reader, (resolved) => {
    if (!isWithin(root, resolved) && !isWithin(resolved, root)) throw outside(root, path, resolved);
  });
  if (!isWithin(root, key)) throw outside(root, path, key);
  return key;
}

/**
 * A key that is a link now (it became one after it was resolved): where it leads (FS_OUTSIDE_ROOT
 * when that is outside the root), or undefined when it does not resolve to another key.
 */
export async function redirect(q: Q, workspace: Workspace, key: string): Promise<string | undefined> {
  const next = await resolveKey(q, workspace, key);
  return next === key ? undefined : next;
}

export async function getRow(q: Q, ws: string, key: string): Promise<Row | undefined> {
  return ((await q(`SELECT ${COLUMNS} FROM ${ENTRIES} WHERE workspace = $1 AND path = $2`, [ws, key])) as Row[])[0];
}
