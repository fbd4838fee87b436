import { posix } from 'node:path';
import { KeyedMutex, type FileSystem, type FsTarget, type FsVersion, type FsWriteIntent } from '../seam/index.js';
import { ERRNO, fail } from './errno.js';

/**
 * The shared buffer of a file open for writing: every descriptor on it reads and writes these
 * bytes, and a flush publishes them as one contract write guarded by the version they were
 * loaded at, so a change made underneath since then fails the flush instead of being overwritten.
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
}

interface Handle {
  readonly node: OpenNode | undefined;
  /** A read-only open with no writer: the bytes as they were at open. */
  readonly snapshot: Uint8Array | undefined;
  readonly writable: boolean;
  readonly append: boolean;
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

export class OpenFiles {
  readonly #handles = new Map<number, Handle>();
  readonly #nodes = new Map<string, OpenNode>();
  readonly #lock = new KeyedMutex();
  /** Directories with deferred publishes not yet flushed. */
  readonly #unsynced = new Set<string>();
  #nextFd = 1;
  #nextNode = 1;

  constructor(
    private readonly fs: FileSystem,
    private readonly maxFileBytes: number,
  ) {}

  /** The open node of a file, for its live size. */
  node(target: FsTarget): OpenNode | undefined {
    return this.#nodes.get(target.targetKey);
  }

  async open(target: FsTarget, request: OpenRequest): Promise<number> {
    const key = target.targetKey;
    const handle = await this.#lock.run(`open:${key}`, async (): Promise<Handle> => {
      let node = this.#nodes.get(key);
      if (request.writable && node === undefined) {
        node = request.created !== undefined ? newNode(this.#nextNode++, target, new Uint8Array(0), request.created) : await this.#load(target);
        this.#nodes.set(key, node);
      }
      if (node !== undefined) {
        node.refs++;
        if (request.truncate && request.writable) resize(node, 0);
        return { node, snapshot: undefined, writable: request.writable, append: request.append };
      }
      // A reader needs no version (nothing is published from it): the store may skip the digest.
      const read = await this.fs.readBytes(target, { maxBytes: this.maxFileBytes, unversioned: true });
      return { node: undefined, snapshot: read.bytes, writable: false, append: false };
    });
    const fd = this.#nextFd++;
    this.#handles.set(fd, handle);
    return fd;
  }

  async #load(target: FsTarget): Promise<OpenNode> {
    const read = await this.fs.readBytes(target, { maxBytes: this.maxFileBytes });
    return newNode(this.#nextNode++, target, read.bytes, read.version);
  }

  read(fd: number, into: Buffer, length: number, position: number): number {
    const h = this.#handle(fd);
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
    if (at + length > this.maxFileBytes) return fail(ERRNO.EFBIG);
    if (at + length > node.length) resize(node, at + length);
    node.buf.set(from.subarray(0, length), at);
    node.dirty = true;
    node.gen++;
    return length;
  }

  truncate(fd: number, size: number): void {
    const h = this.#handle(fd);
    if (!h.writable || h.node === undefined) return fail(ERRNO.EBADF);
    if (size > this.maxFileBytes) return fail(ERRNO.EFBIG);
    resize(h.node, size);
  }

  /** Whether the descriptor was opened for writing (closing a read-only one changes nothing). */
  writes(fd: number): boolean {
    return this.#handles.get(fd)?.writable === true;
  }

  /** Publishes the descriptor's file if it has unpublished changes (flush, fsync, release). */
  async flush(fd: number): Promise<void> {
    const h = this.#handle(fd);
    if (h.node !== undefined && h.writable) await this.publish(h.node);
  }

  async publish(node: OpenNode): Promise<void> {
    await this.#lock.run(`node:${node.id}`, async () => {
      if (!node.dirty || node.unlinked) return;
      const gen = node.gen;
      const bytes = node.buf.slice(0, node.length);
      const intent: FsWriteIntent = node.base === undefined ? { kind: 'createIfAbsent' } : { kind: 'replaceIfVersion', version: node.base };
      let outcome;
      try {
        // Visible at once; on disk at the program's fsync or the unmount (see `sync`).
        outcome = await this.fs.writeBytes(node.target, bytes, intent, DEFERRED);
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
