import { posix } from 'node:path';
import { KeyedMutex, isFsError, type FileSystem, type FsTarget, type FsVersion, type FsWriteIntent, type FsWriteOutcome } from '../seam/index.js';
import { ERRNO, fail } from './errno.js';
import { largeBody, merged, probe, readLarge, settled, snapshot, type LargeBody, type LargeView, type ReadState } from './large.js';
import { Patches } from './patches.js';
import { RangeReader } from './range.js';

/**
 * The shared state of a file open for writing: every descriptor on it reads and writes these
 * bytes, and a flush publishes them as one contract write guarded by the version they were
 * loaded at, so a change made underneath since then fails the flush instead of being overwritten.
 * A small file is held whole in `buf`; a large one (`large`) is the published file, read by
 * range, with the ranges written over it, and is published as a stream.
 */
export interface OpenNode {
  readonly id: number;
  target: FsTarget;
  buf: Uint8Array;
  length: number;
  /** Version the buffer started from (or last published); undefined: the file did not exist. */
  base: FsVersion | undefined;
  dirty: boolean;
  /** Bumped by every change, so a write during a publish keeps the node dirty. */
  gen: number;
  refs: number;
  /** Removed while open: its bytes are published nowhere, as on a disk. */
  unlinked: boolean;
  /** A publish failed and the program was told (its flush or close failed). */
  refused: boolean;
  /** Set for a large file: `buf` is then unused. */
  large?: LargeBody;
}

interface Handle {
  readonly node: OpenNode | undefined;
  /** A read-only open of a small file with no writer: the bytes as they were at open. */
  readonly snapshot: Uint8Array | undefined;
  readonly writable: boolean;
  readonly append: boolean;
  /** How this descriptor reads a large file by range (made at its first read). */
  reading?: ReadState;
}

/** Publishes reach the disk at fsync or unmount (F1), not at each close. */
export const DEFERRED = { durability: 'deferred' } as const;

export interface OpenRequest {
  readonly writable: boolean;
  readonly append: boolean;
  readonly truncate: boolean;
  /** The file was just created (empty, at this version). */
  readonly created?: FsVersion;
}

/** Default size up to which an open file is held whole. */
export const DEFAULT_WHOLE_FILE_BYTES = 8 * 1024 * 1024;

export class OpenFiles {
  readonly #handles = new Map<number, Handle>();
  readonly #nodes = new Map<string, OpenNode>();
  readonly #lock = new KeyedMutex();
  /** Directories with deferred publishes not yet flushed. */
  readonly #unsynced = new Set<string>();
  #nextFd = 1;
  #nextNode = 1;

  /** Files up to this size are held whole while open; larger ones are read by range. */
  readonly #wholeBytes: number;

  /**
   * `maxFileBytes`: the most bytes held for one open file (a whole file, or what was written to a
   * large one since its last publish); beyond it a write is EFBIG.
   */
  constructor(
    private readonly fs: FileSystem,
    private readonly maxFileBytes: number,
    wholeFileBytes = DEFAULT_WHOLE_FILE_BYTES,
  ) {
    this.#wholeBytes = Math.min(wholeFileBytes, maxFileBytes);
  }

  /** The open node of a file, for its live size. */
  node(target: FsTarget): OpenNode | undefined {
    return this.#nodes.get(target.targetKey);
  }

  async open(target: FsTarget, request: OpenRequest): Promise<number> {
    const key = target.targetKey;
    const handle = await this.#lock.run(`open:${key}`, async (): Promise<Handle> => {
      let node = this.#nodes.get(key);
      // A file whose publish was refused (its program told) is not what a new open sees: that
      // open starts from the file as published. The old descriptors keep theirs until released.
      if (node?.refused === true) {
        this.#nodes.delete(key);
        node = undefined;
      }
      if (request.writable && node === undefined) {
        node = request.created !== undefined ? newNode(this.#nextNode++, target, new Uint8Array(0), request.created) : await this.#load(target);
        this.#nodes.set(key, node);
      }
      if (node !== undefined) {
        node.refs++;
        if (request.truncate && request.writable) this.#resize(node, 0);
        return { node, snapshot: undefined, writable: request.writable, append: request.append };
      }
      // A reader needs no version (nothing is published from it): the store may skip the digest.
      const read = await this.fs.readBytes(target, { maxBytes: this.#wholeBytes, unversioned: true }).catch((err: unknown) => {
        if (isFsError(err, 'FS_TOO_LARGE')) return undefined;
        throw err;
      });
      if (read === undefined) return { node: undefined, snapshot: undefined, writable: false, append: false, reading: { reader: new RangeReader(this.fs, () => target), epoch: 0 } };
      return { node: undefined, snapshot: read.bytes, writable: false, append: false };
    });
    const fd = this.#nextFd++;
    this.#handles.set(fd, handle);
    return fd;
  }

  async #load(target: FsTarget): Promise<OpenNode> {
    // A filesystem that cannot take a stream publishes whole: held whole up to maxFileBytes, as before.
    const streams = this.fs.writeBytesFrom !== undefined;
    const read = await this.fs.readBytes(target, { maxBytes: streams ? this.#wholeBytes : this.maxFileBytes }).catch((err: unknown) => {
      if (isFsError(err, 'FS_TOO_LARGE') && streams) return undefined;
      throw err;
    });
    if (read !== undefined) return newNode(this.#nextNode++, target, read.bytes, read.version);
    // Too large to hold: its version and size now, its bytes by range when read or published.
    const { version, size } = await probe(this.fs, target);
    const node = newNode(this.#nextNode++, target, new Uint8Array(0), version);
    node.length = size;
    node.large = largeBody(size);
    return node;
  }

  async read(fd: number, into: Buffer, length: number, position: number): Promise<number> {
    const h = this.#handle(fd);
    const node = h.node;
    if (node?.large !== undefined) {
      h.reading ??= { reader: new RangeReader(this.fs, () => node.target), epoch: node.large.epoch };
      return readLarge(node as LargeView, h.reading, into, length, position);
    }
    if (h.reading !== undefined && node === undefined) return h.reading.reader.read(into.subarray(0, length), position);
    const bytes = h.node !== undefined ? h.node.buf.subarray(0, h.node.length) : h.snapshot!;
    if (position >= bytes.length) return 0;
    const slice = bytes.subarray(position, Math.min(bytes.length, position + length));
    into.set(slice);
    return slice.length;
  }

  write(fd: number, from: Buffer, length: number, position: number): number {
    const h = this.#handle(fd);
    if (!h.writable || h.node === undefined) return fail(ERRNO.EBADF);
    const node = h.node;
    const at = h.append ? node.length : position;
    if (node.large === undefined && at + length > this.#wholeBytes) this.#toLarge(node);
    if (node.large !== undefined) {
      if (node.large.patches.bytes + length > this.maxFileBytes) return fail(ERRNO.EFBIG);
      node.large.patches.write(at, from.subarray(0, length));
      if (at + length > node.length) node.length = at + length;
    } else {
      if (at + length > this.maxFileBytes) return fail(ERRNO.EFBIG);
      if (at + length > node.length) resize(node, at + length);
      node.buf.set(from.subarray(0, length), at);
    }
    node.dirty = true;
    node.gen++;
    return length;
  }

  truncate(fd: number, size: number): void {
    const h = this.#handle(fd);
    if (!h.writable || h.node === undefined) return fail(ERRNO.EBADF);
    this.#resize(h.node, size);
  }

  /** A truncate: a large file (or one growing past the whole-file size) keeps its ranges only. */
  #resize(node: OpenNode, size: number): void {
    if (node.large === undefined && size > this.#wholeBytes) this.#toLarge(node);
    const large = node.large;
    if (large === undefined) {
      if (size > this.maxFileBytes) return fail(ERRNO.EFBIG);
      return resize(node, size);
    }
    large.patches.truncate(size);
    large.cut = Math.min(large.cut, size);
    large.lowSince = Math.min(large.lowSince, size);
    if (size !== node.length) {
      node.length = size;
      node.dirty = true;
      node.gen++;
    }
  }

  /**
   * A file held whole grows past the whole-file size: what it holds becomes one written range
   * over nothing (published as a stream). Only where the filesystem takes a stream.
   */
  #toLarge(node: OpenNode): void {
    if (this.fs.writeBytesFrom === undefined) return;
    const patches = new Patches();
    if (node.length > 0) patches.write(0, node.buf.subarray(0, node.length));
    node.large = { ...largeBody(0), patches };
    node.buf = new Uint8Array(0);
  }

  /** Whether the descriptor was opened for writing (closing a read-only one changes nothing). */
  writes(fd: number): boolean {
    return this.#handles.get(fd)?.writable === true;
  }

  /** Publishes the descriptor's file if it has unpublished changes (flush, fsync, release). */
  async flush(fd: number): Promise<void> {
    const h = this.#handle(fd);
    // close(2) flushes; the release comes later: a stream of a large file is let go now (a read after reopens it).
    await h.reading?.reader.close().catch(() => undefined);
    if (h.node !== undefined && h.writable) await this.publish(h.node);
  }

  async publish(node: OpenNode): Promise<void> {
    await this.#lock.run(`node:${node.id}`, async () => {
      if (!node.dirty || node.unlinked) return;
      const gen = node.gen;
      const intent: FsWriteIntent = node.base === undefined ? { kind: 'createIfAbsent' } : { kind: 'replaceIfVersion', version: node.base };
      let outcome;
      try {
        // Visible at once; on disk at the program's fsync or the unmount (see `sync`).
        outcome = node.large !== undefined ? await this.#publishLarge(node, node.large, intent, gen) : await this.fs.writeBytes(node.target, node.buf.slice(0, node.length), intent, DEFERRED);
      } catch (err) {
        node.refused = true;
        throw err;
      }
      node.refused = false;
      this.published(node.target);
      node.base = outcome.version;
      if (node.gen === gen) node.dirty = false;
    });
  }

  /** A large file, streamed: the file beneath with the written ranges over it, as they are now. */
  async #publishLarge(node: OpenNode, large: LargeBody, intent: FsWriteIntent, gen: number): Promise<FsWriteOutcome> {
    const snap = snapshot(node as LargeView);
    const source = merged(this.fs, node.target, snap);
    let outcome;
    try {
      outcome = await this.fs.writeBytesFrom!(node.target, source, intent, DEFERRED);
    } finally {
      // A publish refused before it read everything lets the file beneath go.
      await source.return(undefined);
    }
    settled(large, snap, node.gen === gen);
    return outcome;
  }

  /** Publishes the descriptor's file and makes what was published in its directory durable (fsync). */
  async sync(fd: number): Promise<void> {
    const h = this.#handle(fd);
    await this.flush(fd);
    if (h.node !== undefined && h.writable) await this.durable([posix.dirname(h.node.target.displayPath)]);
  }

  /** Makes the deferred publishes in these directories durable (every one so far without `dirs`). */
  async durable(dirs: readonly string[] = [...this.#unsynced]): Promise<void> {
    const flush = this.fs.flush?.bind(this.fs);
    const due = dirs.filter((d) => this.#unsynced.has(d));
    if (flush === undefined || due.length === 0) return;
    const targets = await Promise.all(due.map((d) => this.fs.resolve(d).catch(() => undefined)));
    // A directory removed since is skipped (F1): what was published in it is gone too.
    await flush(targets.filter((t) => t !== undefined));
    for (const d of due) this.#unsynced.delete(d);
  }

  /** A deferred publish in `target`'s directory: durable at the next `durable` naming it. */
  published(target: FsTarget): void {
    if (this.fs.flush !== undefined) this.#unsynced.add(posix.dirname(target.displayPath));
  }

  /** Closes a descriptor; the last one on a node publishes it first. */
  async release(fd: number): Promise<void> {
    const h = this.#handle(fd);
    this.#handles.delete(fd);
    // Its stream of a large file is let go (a failure there changes nothing for the program).
    await h.reading?.reader.close().catch(() => undefined);
    if (h.node === undefined) return;
    const node = h.node;
    try {
      if (h.writable) await this.publish(node);
    } finally {
      if (--node.refs === 0 && this.#nodes.get(node.target.targetKey) === node) this.#nodes.delete(node.target.targetKey);
    }
  }

  /** A file or directory moved: open nodes at or below it follow it (what it replaced is unlinked). */
  async movedTree(from: FsTarget, to: FsTarget): Promise<void> {
    this.unlinked(to);
    const moving = [...this.#nodes.values()].filter((n) => this.fs.contains(from, n.target));
    for (const node of moving) {
      const rest = node.target.displayPath.slice(from.displayPath.length);
      const moved = rest === '' ? to : await this.fs.resolve(to.displayPath + rest);
      this.#nodes.delete(node.target.targetKey);
      node.target = moved;
      this.#nodes.set(moved.targetKey, node);
    }
  }

  /** The file was removed (or replaced by a rename): open descriptors keep their bytes to themselves. */
  unlinked(target: FsTarget): void {
    const node = this.#nodes.get(target.targetKey);
    if (node === undefined) return;
    node.unlinked = true;
    this.#nodes.delete(target.targetKey);
  }

  /** Every node with unpublished changes no program was told about (published before unmounting). */
  dirtyNodes(): OpenNode[] {
    return [...this.#nodes.values()].filter((n) => n.dirty && !n.unlinked && !n.refused);
  }

  #handle(fd: number): Handle {
    return this.#handles.get(fd) ?? fail(ERRNO.EBADF);
  }
}

function newNode(id: number, target: FsTarget, bytes: Uint8Array, base: FsVersion | undefined): OpenNode {
  return { id, target, buf: bytes, length: bytes.length, base, dirty: false, gen: 0, refs: 0, unlinked: false, refused: false };
}

/** Grows by doubling so a program writing in small pieces is not quadratic. */
function resize(node: OpenNode, size: number): void {
  if (size > node.buf.length) {
    const grown = new Uint8Array(Math.max(size, node.buf.length * 2, 4096));
    grown.set(node.buf.subarray(0, node.length));
    node.buf = grown;
  } else if (size > node.length) {
    node.buf.fill(0, node.length, size);
  }
  if (size !== node.length) {
    node.length = size;
    node.dirty = true;
    node.gen++;
  }
}
