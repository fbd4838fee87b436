import { FsError } from '../seam/errors.js';
import { FsTargetKey, type FsDirEntry, type FsTarget } from '../seam/model.js';
import type { FsCurrent, FsProviderInfo, FsProviderReadOptions } from '../seam/provider.js';
import { resolveLinks, type LinkReader } from '../seam/resolve.js';
import { childKey, childrenOf, headAt } from './tx.js';
import type { StoreChild, StoreTx } from './types.js';

/** The links of a path followed inside one transaction (P4). */
export function resolveKey(tx: StoreTx, path: string): Promise<string> {
  const reader: LinkReader = {
    async kind(p) {
      const head = await headAt(tx, p);
      return head === undefined ? 'missing' : head.kind;
    },
    async readlink(p) {
      const head = await headAt(tx, p);
      if (head?.kind !== 'link') throw new FsError('FS_CONFLICT', `"${p}" changed while it was resolved`);
      return head.text;
    },
  };
  return resolveLinks(path, reader);
}

export async function statKey(tx: StoreTx, key: string): Promise<FsProviderInfo | undefined> {
  const head = await headAt(tx, key);
  switch (head?.kind) {
    case undefined:
      return undefined;
    case 'file':
      return { type: 'file', version: head.version, size: head.size, mtimeMs: head.mtimeMs, executable: head.executable === true };
    case 'directory':
      return { type: 'directory', ...(head.mtimeMs === undefined ? {} : { mtimeMs: head.mtimeMs }) };
    default:
      return { type: 'other' }; // a link that resolves to nothing
  }
}

export async function readKey(tx: StoreTx, target: FsTarget, { maxBytes }: FsProviderReadOptions): Promise<FsCurrent> {
  const what = `cannot read "${target.displayPath}"`;
  const head = await headAt(tx, target.targetKey);
  if (head === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (head.kind !== 'file') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: not a regular file`);
  if (head.size > maxBytes) throw new FsError('FS_TOO_LARGE', `${what}: ${head.size} bytes exceeds the ${maxBytes}-byte limit`);
  const entry = await tx.get(target.targetKey);
  if (entry?.kind !== 'file') throw new FsError('FS_CONFLICT', `${what}: it changed while it was read`);
  return { bytes: new Uint8Array(entry.bytes), version: entry.version };
}

export async function listKey(tx: StoreTx, target: FsTarget): Promise<FsDirEntry[]> {
  const what = `cannot list "${target.displayPath}"`;
  const dir = target.targetKey;
  const head = await headAt(tx, dir);
  if (head === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (head.kind !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
  const display = target.displayPath === '/' ? '' : target.displayPath;
  const entries: FsDirEntry[] = [];
  for (const child of await childrenOf(tx, dir)) {
    const lexical = childKey(dir, child.name);
    const displayPath = `${display}/${child.name}`;
    if (child.kind !== 'link') {
      entries.push(entryOf(child, child, lexical, displayPath));
      continue;
    }
    // P4: a link is listed as what it leads to; dangling, as `other` under the key it leads to (a
    // layer above may hold something there); looping, as `other` under its own key.
    const key = await resolveKey(tx, lexical).catch(() => undefined);
    const there = key === undefined ? undefined : await headAt(tx, key);
    if (key === undefined || there === undefined || there.kind === 'link') entries.push({ name: child.name, type: 'other', target: { targetKey: FsTargetKey(key ?? lexical), displayPath } });
    else entries.push(entryOf(child, { name: child.name, ...there }, key, displayPath));
  }
  return entries;
}

function entryOf(listed: StoreChild, what: StoreChild, key: string, displayPath: string): FsDirEntry {
  const target = { targetKey: FsTargetKey(key), displayPath };
  if (what.kind === 'directory') return { name: listed.name, type: 'directory', target, mtimeMs: what.mtimeMs };
  if (what.kind !== 'file') return { name: listed.name, type: 'other', target };
  const size = 'size' in what ? what.size : what.bytes.byteLength;
  return { name: listed.name, type: 'file', target, size, mtimeMs: what.mtimeMs, executable: what.executable === true };
}
