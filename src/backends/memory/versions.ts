/**
 * The memory provider's versions, kept per memfs node while its content stays the same, so an
 * unchanged file is not hashed again at every read or edit (a local root keeps versions by stat
 * for the same reason).
 */
import { contentVersion, type FsVersion } from '../../seam/index.js';
import type { CoreNode } from './lookup.js';

interface Known {
  readonly buf: Buffer;
  readonly mtime: Date;
  readonly size: number;
  readonly version: FsVersion;
}

const known = new WeakMap<CoreNode, Known>();

/**
 * Whether `node` is memfs's own, with the fields a kept version is checked against. memfs gives a
 * node a new Date as its modification time whenever its content changes (a write through a
 * descriptor, a truncation, writeFile, setBuffer) and whenever its times are set, and its storage
 * is replaced or grows in place only in those same calls: a version kept with the storage, the
 * size and that Date object holds while all three are the very same objects and values.
 */
function ownNode(node: CoreNode): node is CoreNode & { readonly buf: Buffer; readonly mtime: Date; readonly size: number } {
  return node.buf !== undefined && node.mtime !== undefined && node.size !== undefined;
}

/** The version of `bytes`, which are `node`'s content now: kept, or computed and kept. */
export function versionOf(node: CoreNode, bytes: Uint8Array): FsVersion {
  if (!ownNode(node)) return contentVersion(bytes);
  const hit = known.get(node);
  if (hit !== undefined && hit.buf === node.buf && hit.mtime === node.mtime && hit.size === node.size) return hit.version;
  const version = contentVersion(bytes);
  known.set(node, { buf: node.buf, mtime: node.mtime, size: node.size, version });
  return version;
}

/** `node`'s content was just set to bytes of `version`. */
export function keepVersion(node: CoreNode, version: FsVersion): void {
  if (ownNode(node)) known.set(node, { buf: node.buf, mtime: node.mtime, size: node.size, version });
}
