import { createHash } from 'node:crypto';

/*
 * A reader of git's index file (`.git/index`, versions 2 to 4) that keeps only what
 * `git ls-files --stage` shows: mode, object id, stage and path of every entry. Stat data, flags
 * and extensions (the cache tree, the untracked cache, the fsmonitor token…) are caches git
 * rewrites whenever the stat data it recorded differ from what it sees, as they always do on an
 * overlay or a mount. Read here, without git: the bytes may come from any backend, and no process
 * is started. See docs/overlay.md, "Git's own files".
 */

/** One staged entry, as `git ls-files --stage` lists it. */
export interface StagedEntry {
  readonly mode: number;
  /** Hex object id (SHA-1 or SHA-256). */
  readonly oid: string;
  readonly stage: number;
  readonly path: string;
}

/** What an index holds besides its entries that decides them: a split index's link to its shared index. */
export interface StagedIndex {
  readonly version: number;
  readonly entries: StagedEntry[];
  /** The `link` extension's bytes (hex) when the index is split: the entries are then a delta over a shared index. */
  readonly link?: string;
}

const SIGNATURE = 0x44495243; // "DIRC"

/**
 * Whether two index files hold the same staged entries (mode, object id, stage and path of each,
 * in order). A split index (`link` extension) is equal only to one with the same link and the
 * same delta entries. Bytes that are not an index of versions 2–4 are never equal to anything.
 */
export function sameStagedEntries(a: Uint8Array, b: Uint8Array): boolean {
  const x = tryReadIndex(a);
  const y = tryReadIndex(b);
  if (x === undefined || y === undefined) return false;
  if (x.link !== y.link || x.entries.length !== y.entries.length) return false;
  return x.entries.every((e, i) => {
    const f = y.entries[i]!;
    return e.mode === f.mode && e.oid === f.oid && e.stage === f.stage && e.path === f.path;
  });
}

/** The staged entries of an index file, or undefined when the bytes are not one git can have written. */
export function tryReadIndex(bytes: Uint8Array): StagedIndex | undefined {
  try {
    return readIndex(bytes);
  } catch {
    return undefined;
  }
}

/** The staged entries of an index file; throws on bytes that are not an index of versions 2–4. */
export function readIndex(bytes: Uint8Array): StagedIndex {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12 + 20 || view.getUint32(0) !== SIGNATURE) throw new Error('not a git index');
  const version = view.getUint32(4);
  if (version < 2 || version > 4) throw new Error(`index version ${version} is not read`);
  const count = view.getUint32(8);
  const hashBytes = hashLength(bytes);
  const end = bytes.byteLength - hashBytes;
  const decoder = new TextDecoder('utf-8', { fatal: false });
  const entries: StagedEntry[] = [];
  let at = 12;
  let previous: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + 40 + hashBytes + 2 > end) throw new Error('index entry past the end');
    const mode = view.getUint32(at + 24);
    const oid = hex(bytes.subarray(at + 40, at + 40 + hashBytes));
    at += 40 + hashBytes;
    const flags = view.getUint16(at);
    at += 2;
    if (flags & 0x4000) {
      if (version < 3) throw new Error('extended flags in a version 2 index');
      at += 2;
    }
    let name: Uint8Array;
    if (version === 4) {
      const [strip, next] = varint(bytes, at);
      if (strip > previous.byteLength) throw new Error('index path prefix longer than the previous path');
      const nul = bytes.indexOf(0, next);
      if (nul === -1 || nul >= end) throw new Error('unterminated index path');
      const suffix = bytes.subarray(next, nul);
      name = new Uint8Array(previous.byteLength - strip + suffix.byteLength);
      name.set(previous.subarray(0, previous.byteLength - strip));
      name.set(suffix, previous.byteLength - strip);
      at = nul + 1;
    } else {
      const nul = bytes.indexOf(0, at);
      if (nul === -1 || nul >= end) throw new Error('unterminated index path');
      name = bytes.subarray(at, nul);
      // One to eight NULs pad the entry to a multiple of eight bytes.
      at = start + ((nul - start + 8) & ~7);
    }
    previous = name;
    entries.push({ mode, oid, stage: (flags >> 12) & 3, path: decoder.decode(name) });
  }
  return { version, entries, ...linkOf(bytes, at, end) };
}

/** The split index's `link` extension among those after the entries, if any. */
function linkOf(bytes: Uint8Array, at: number, end: number): { link?: string } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  while (at + 8 <= end) {
    const signature = String.fromCharCode(...bytes.subarray(at, at + 4));
    const size = view.getUint32(at + 4);
    if (at + 8 + size > end) throw new Error('index extension past the end');
    if (signature === 'link') return { link: hex(bytes.subarray(at + 8, at + 8 + size)) };
    at += 8 + size;
  }
  return {};
}

/**
 * The object id length: the index ends with the hash of what precedes it, SHA-1 (20 bytes) or
 * SHA-256 (32). A trailing hash of zeros (`index.skipHash`) is taken as SHA-1, git's default.
 */
function hashLength(bytes: Uint8Array): number {
  for (const [algorithm, n] of [['sha1', 20], ['sha256', 32]] as const) {
    if (bytes.byteLength < 12 + n) continue;
    const digest = createHash(algorithm).update(bytes.subarray(0, bytes.byteLength - n)).digest();
    if (Buffer.compare(digest, bytes.subarray(bytes.byteLength - n)) === 0) return n;
  }
  if (bytes.subarray(bytes.byteLength - 20).every((b) => b === 0)) return 20;
  throw new Error('index checksum does not match');
}

/** Git's offset varint (the one of index v4 and pack files): each continuation adds one before shifting. */
function varint(bytes: Uint8Array, at: number): [number, number] {
  let c = bytes[at++]!;
  let value = c & 0x7f;
  while (c & 0x80) {
    if (at >= bytes.byteLength) throw new Error('index varint past the end');
    c = bytes[at++]!;
    value = ((value + 1) * 128) + (c & 0x7f);
  }
  return [value, at];
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
