import { FsError, type FileSystem, type FsTarget, type FsVersion } from '../seam/index.js';
import { Patches, type PatchView } from './patches.js';
import type { RangeReader } from './range.js';

/** Bytes per chunk of the zeros a publish streams past the end of the file beneath. */
const ZERO_CHUNK = 1024 * 1024;

/**
 * A large open file: the published file beneath, read by range, with what programs wrote over
 * it. Its bytes are those of the file below `cut` (and below `baseSize`), zeros elsewhere, with
 * `patches` over both, up to the node's length.
 */
export interface LargeBody {
  readonly patches: Patches;
  /** Size of the published file beneath. */
  baseSize: number;
  /** A truncate cut the file beneath here: past it, zeros unless written. */
  cut: number;
  /** The lowest size set since the publish under way took its snapshot. */
  lowSince: number;
  /** Bumped when a publish replaces the file beneath: what readers hold of the old one is stale. */
  epoch: number;
}

export function largeBody(size: number): LargeBody {
  return { patches: new Patches(), baseSize: size, cut: size, lowSince: Infinity, epoch: 0 };
}

/** The version and size of a file, its bytes left unread (a local file is hashed once, streaming). */
export async function probe(fs: FileSystem, target: FsTarget): Promise<{ version: FsVersion; size: number }> {
  const stream = await fs.streamBytes(target);
  await stream.chunks[Symbol.asyncIterator]().return?.();
  return { version: stream.version, size: stream.size };
}

/** A large node's length and body, as a read or a publish sees them. */
export interface LargeView {
  readonly length: number;
  readonly large: LargeBody;
  readonly target: FsTarget;
}

/** What one descriptor reads with: its reader, and the epoch of the file beneath it last read. */
export interface ReadState {
  readonly reader: RangeReader;
  epoch: number;
}

/**
 * Copies the node's bytes from `pos` into `into` (at most `len`); short only at its end. A publish
 * that replaces the file beneath while the range is read makes it read again from the new one.
 */
export async function readLarge(node: LargeView, state: ReadState, into: Uint8Array, len: number, pos: number): Promise<number> {
  for (;;) {
    const { large } = node;
    const epoch = large.epoch;
    if (state.epoch !== epoch) {
      await state.reader.close();
      state.epoch = epoch;
    }
    if (pos >= node.length) return 0;
    const n = Math.min(len, node.length - pos);
    const out = into.subarray(0, n);
    out.fill(0);
    const visible = Math.min(large.cut, large.baseSize, pos + n);
    if (pos < visible) {
      const got = await state.reader.read(out.subarray(0, visible - pos), pos);
      if (large.epoch !== epoch) continue;
      if (got < visible - pos) throw changedBeneath(node.target);
      // A truncate meanwhile: what it cut reads as zeros.
      if (large.cut < pos + got) out.fill(0, Math.max(0, large.cut - pos), got);
    }
    large.patches.overlay(out, pos);
    return Math.min(n, Math.max(0, node.length - pos));
  }
}

function changedBeneath(target: FsTarget): FsError {
  return new FsError('FS_CONFLICT', `cannot read "${target.displayPath}": the file changed while it was open; open it again`);
}

/** What a publish streams: the node's state when it began. */
export interface LargeSnapshot {
  readonly length: number;
  /** Bytes of the file beneath that show (below the cut). */
  readonly visible: number;
  readonly patches: PatchView;
}

export function snapshot(node: LargeView): LargeSnapshot {
  const { large } = node;
  large.lowSince = Infinity;
  return { length: node.length, visible: Math.min(large.cut, large.baseSize, node.length), patches: large.patches.snapshot() };
}

/**
 * After a publish of `snap`: the file beneath is what it streamed. With no write since, nothing
 * is left over it; otherwise the ranges stay (they hold every later write) and only what a later
 * truncate cut is cut of the new file.
 */
export function settled(large: LargeBody, snap: LargeSnapshot, unchanged: boolean): void {
  large.epoch++;
  large.baseSize = snap.length;
  if (unchanged) {
    large.patches.clear();
    large.cut = snap.length;
  } else {
    large.cut = Math.min(snap.length, large.lowSince);
  }
}

/**
 * The bytes of `snap`, streamed: the file beneath up to `visible` (read once, in order), zeros
 * past it, the written ranges over both. Memory: one chunk, and the ranges.
 */
export async function* merged(fs: FileSystem, target: FsTarget, snap: LargeSnapshot): AsyncGenerator<Uint8Array> {
  const view = snap.patches;
  let next = 0;
  const over = (bytes: Uint8Array, at: number, own: boolean): Uint8Array => {
    const end = at + bytes.length;
    while (next < view.length && view[next]!.at + view[next]!.bytes.length <= at) next++;
    let out = bytes;
    for (let k = next; k < view.length && view[k]!.at < end; k++) {
      const { at: from, bytes: patch } = view[k]!;
      const lo = Math.max(from, at);
      const hi = Math.min(from + patch.length, end);
      if (lo >= hi) continue;
      // The provider's chunk is never changed in place: a copy takes the written bytes.
      if (out === bytes && !own) out = new Uint8Array(bytes);
      out.set(patch.subarray(lo - from, hi - from), lo - at);
    }
    return out;
  };
  let pos = 0;
  if (snap.visible > 0) {
    const stream = await fs.streamBytes(target, { unversioned: true });
    for await (const chunk of stream.chunks) {
      const piece = chunk.subarray(0, Math.min(chunk.length, snap.visible - pos));
      yield over(piece, pos, false);
      pos += piece.length;
      if (pos >= snap.visible) break;
    }
    if (pos < snap.visible) throw changedBeneath(target);
  }
  while (pos < snap.length) {
    const n = Math.min(ZERO_CHUNK, snap.length - pos);
    yield over(new Uint8Array(n), pos, true);
    pos += n;
  }
}
