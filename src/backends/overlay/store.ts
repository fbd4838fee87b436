import { randomBytes } from 'node:crypto';
import { closeSync, constants as fsc, fsync, ftruncateSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { copyFile, link, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join, posix, resolve as resolveHostPath } from 'node:path';
import { FsError, isFsError, toFsError, type FileSystem } from '../../seam/index.js';
import { settleAll } from '../../seam/settle.js';

/**
 * Where the upper layer is persisted: one state document plus content-addressed blobs.
 * Every write is atomic (a reader sees the old or the new file, never a torn one).
 */
export interface UpperStore {
  /** Human-readable location, for messages. */
  readonly where: string;
  readState(): Promise<Uint8Array | undefined>;
  writeState(bytes: Uint8Array): Promise<void>;
  /** Undefined when the blob does not exist. */
  readBlob(id: string): Promise<Uint8Array | undefined>;
  /**
   * Idempotent: blobs are named by their content digest. With `sync: false` (a deferred save, on a
   * store with `syncJournal`) the blob may reach the disk only with the next flushed append,
   * `syncJournal`, `writeState`, `writeJournal` or `fork`, each of which flushes such blobs first.
   */
  writeBlob(id: string, bytes: Uint8Array, options?: { readonly sync?: boolean }): Promise<void>;
  /** Absent blobs are ignored. */
  deleteBlob(id: string): Promise<void>;
  listBlobs(): Promise<string[]>;
  /** The journal of changes since the state document, or undefined when there is none. */
  readJournal(): Promise<Uint8Array | undefined>;
  /** Replaces the journal atomically (a fresh journal: its header only). */
  writeJournal(bytes: Uint8Array): Promise<void>;
  /**
   * Writes `bytes` at `offset` of the journal, drops anything after them (a torn tail), and
   * flushes the journal to disk before returning (unless `sync` is false and the store has
   * `syncJournal`). `bytes` may be empty (a truncation).
   */
  appendJournal(offset: number, bytes: Uint8Array, options?: { readonly sync?: boolean }): Promise<void>;
  /**
   * Optional: flushes to disk what appends with `sync: false` wrote. Without it, every append is
   * flushed as it is made.
   */
  syncJournal?(): Promise<void>;

  // Forks (optional: a store without them cannot hold a fork, and its overlay forks in memory only).

  /**
   * Makes `where` (a new, empty location of the same kind) a fork of this store's saved state: a
   * store whose state document is this one's, whose blobs include `blobs`, and whose journal is
   * `journal` (a fork's first journal: it continues the fork base). The fork base — this store's
   * document and its journal's first `journalEnd` bytes — is kept with the fork, read-only, and
   * returned by the fork's `readForkBase`. Nothing written afterwards to either store shows in the
   * other. The state document is made last: a fork that did not finish is no state.
   */
  fork?(where: string, options: { readonly journalEnd: number; readonly blobs: readonly string[]; readonly journal: Uint8Array }): Promise<UpperStore>;
  /** A fork's base (see `fork`), with its journal already cut at the fork point; undefined when this store is no fork. */
  readForkBase?(): Promise<{ readonly state: Uint8Array; readonly journal: Uint8Array } | undefined>;
}

export const STATE_FILE = 'overlay.json';
export const JOURNAL_FILE = 'overlay.journal';
export const BLOB_DIR = 'blobs';
/** A fork's base: the parent's state document and journal as they were at the fork (hard links). */
export const FORK_FILE = 'fork.json';
export const FORK_STATE_FILE = 'fork-base.json';
export const FORK_JOURNAL_FILE = 'fork-base.journal';
const FORK_FORMAT = 'dsh-fs-overlay-fork';
const BLOB_NAME = /^[0-9a-f]{64}$/;

/** A store in a host directory, written with node:fs: temp file, fsync, rename, fsync of the directory. */
export async function openDirStore(dir: string): Promise<UpperStore> {
  const root = resolveHostPath(dir);
  const blobs = join(root, BLOB_DIR);
  try {
    await mkdir(blobs, { recursive: true });
  } catch (err) {
    throw toFsError(err, `cannot open the overlay state directory "${root}"`);
  }

  const wrap = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toFsError(err, what);
    }
  };

  // Blobs of deferred saves, renamed into place but not yet flushed (see UnsettledBlobs).
  const unsettled = new UnsettledBlobs(blobs);
  const settled = <A extends unknown[], T>(fn: (...args: A) => Promise<T>) => async (...args: A): Promise<T> => {
    await unsettled.settle();
    return fn(...args);
  };

  /** Shares a file that is only ever replaced, never changed in place: a hard link, or a copy across devices. */
  const share = async (from: string, to: string) => {
    try {
      await link(from, to);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw err;
      await copyFile(from, to);
    }
  };

  return {
    where: root,
    async fork(where, { journalEnd, blobs: ids, journal }) {
      await wrap(`cannot flush the overlay blobs in "${root}"`, () => unsettled.settle());
      const target = resolveHostPath(where);
      return wrap(`cannot fork the overlay state in "${root}" into "${target}"`, async () => {
        await mkdir(join(target, BLOB_DIR), { recursive: true });
        const taken = (await readdir(target)).filter((n) => n !== BLOB_DIR && n !== 'lock');
        if (taken.length > 0 || (await readdir(join(target, BLOB_DIR))).length > 0) {
          throw new FsError('FS_ALREADY_EXISTS', `"${target}" is not empty; a fork needs a new state directory`);
        }
        // Blobs are never changed in place (content-addressed): shared, so a fork copies no content.
        const all = [...new Set(ids)];
        // One link per blob: a few at a time, the way a file system keeps busy without a flood.
        for (let i = 0; i < all.length; i += 32) {
          await settleAll(all.slice(i, i + 32).map((id) => share(join(blobs, checkId(id)), join(target, BLOB_DIR, id))));
        }
        await share(join(root, STATE_FILE), join(target, FORK_STATE_FILE));
        // The parent appends to its journal in place, but only after `journalEnd`: the fork reads up to it.
        await share(join(root, JOURNAL_FILE), join(target, FORK_JOURNAL_FILE));
        const fork = { format: FORK_FORMAT, version: 1, parent: root, journalEnd };
        await writeAtomic(target, FORK_FILE, Buffer.from(`${JSON.stringify(fork, null, 1)}\n`));
        await writeAtomic(target, JOURNAL_FILE, journal);
        await share(join(root, STATE_FILE), join(target, STATE_FILE));
        await syncDir(join(target, BLOB_DIR));
        await syncDir(target);
        return openDirStore(target);
      });
    },
    readForkBase: () =>
      wrap(`cannot read the fork base in "${root}"`, async () => {
        const raw = await readOrUndefined(join(root, FORK_FILE));
        if (raw === undefined) return undefined;
        const fork = JSON.parse(Buffer.from(raw).toString('utf8')) as { format?: unknown; journalEnd?: unknown };
        if (fork.format !== FORK_FORMAT || typeof fork.journalEnd !== 'number') {
          throw new FsError('FS_IO_ERROR', `the overlay state in "${root}" is not valid: bad ${FORK_FILE}`);
        }
        const state = await readOrUndefined(join(root, FORK_STATE_FILE));
        const journal = await readOrUndefined(join(root, FORK_JOURNAL_FILE));
        if (state === undefined || journal === undefined || journal.byteLength < fork.journalEnd) {
          throw new FsError('FS_IO_ERROR', `the overlay state in "${root}" is not valid: its fork base is missing or cut short`);
        }
        return { state, journal: journal.subarray(0, fork.journalEnd) };
      }),
    readState: () => wrap(`cannot read the overlay state in "${root}"`, () => readOrUndefined(join(root, STATE_FILE))),
    writeState: (bytes) => wrap(`cannot write the overlay state in "${root}"`, settled(() => writeAtomic(root, STATE_FILE, bytes))),
    readBlob: (id) => wrap(`cannot read overlay blob ${id} in "${root}"`, () => readOrUndefined(join(blobs, checkId(id)))),
    writeBlob: (id, bytes, options) =>
      wrap(`cannot write overlay blob ${id} in "${root}"`, async () => {
        const path = join(blobs, checkId(id));
        const existing = statOrUndefined(path);
        if (existing?.isFile() && existing.size === bytes.byteLength) return;
        const sync = options?.sync !== false;
        await writeAtomic(blobs, id, bytes, sync);
        if (!sync) unsettled.add(id);
      }),
    deleteBlob: (id) =>
      wrap(`cannot delete overlay blob ${id} in "${root}"`, async () => {
        unsettled.drop(id);
        await rm(join(blobs, checkId(id)), { force: true });
      }),
    listBlobs: () =>
      wrap(`cannot list the overlay blobs in "${root}"`, async () => (await readdir(blobs)).filter((n) => BLOB_NAME.test(n))),
    readJournal: () => wrap(`cannot read the overlay journal in "${root}"`, () => readOrUndefined(join(root, JOURNAL_FILE))),
    writeJournal: (bytes) => wrap(`cannot write the overlay journal in "${root}"`, settled(() => writeAtomic(root, JOURNAL_FILE, bytes))),
    syncJournal: () => wrap(`cannot flush the overlay journal in "${root}"`, settled(() => syncFile(join(root, JOURNAL_FILE), fsc.O_RDWR))),
    appendJournal: (offset, bytes, options) =>
      wrap(`cannot append to the overlay journal in "${root}"`, async () => {
        const sync = options?.sync !== false;
        if (sync) await unsettled.settle();
        await writeAt(join(root, JOURNAL_FILE), offset, bytes, sync);
      }),
  };
}

const fsyncAsync = promisify(fsync);

const syncDir = (path: string) => syncFile(path, fsc.O_RDONLY);

// The quick calls are synchronous and only the fsyncs go to the thread pool: a round trip
// there per call was most of the time of a small write.
async function writeAtomic(dirPath: string, name: string, bytes: Uint8Array, sync = true): Promise<void> {
  const temp = join(dirPath, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o600);
  try {
    try {
      writeAll(fd, bytes, 0);
      if (sync) await fsyncAsync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, join(dirPath, name));
  } catch (err) {
    await rm(temp, { force: true }).catch(() => {});
    throw err;
  }
  if (!sync) return;
  try {
    await syncDir(dirPath);
  } catch (err) {
    throw toFsError(err, `"${join(dirPath, name)}" is in place, but its directory could not be flushed to disk, so it may not survive a crash`);
  }
}

async function readOrUndefined(path: string): Promise<Uint8Array | undefined> {
  try {
    const buf = await readFile(path);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * The blobs deferred saves wrote and renamed into place without an fsync. `settle` flushes them
 * and their directory before anything durable that may name them (a flushed journal, a state
 * document, a fork), so no durable record names a blob a crash could lose. Records of deferred
 * saves that a crash kept without their blobs are cut at load (see `lazy` in the journal record).
 */
class UnsettledBlobs {
  readonly #ids = new Set<string>();

  constructor(private readonly dir: string) {}

  add(id: string): void {
    this.#ids.add(id);
  }

  drop(id: string): void {
    this.#ids.delete(id);
  }

  async settle(): Promise<void> {
    if (this.#ids.size === 0) return;
    const ids = [...this.#ids];
    for (let i = 0; i < ids.length; i += 32) {
      await settleAll(ids.slice(i, i + 32).map((id) => syncFile(join(this.dir, id), fsc.O_RDONLY).catch((err: unknown) => {
        // Deleted meanwhile (a later save released it): nothing to flush.
        if ((err as { code?: unknown }).code !== 'ENOENT') throw err;
      })));
    }
    await syncDir(this.dir);
    for (const id of ids) this.#ids.delete(id);
  }
}

async function syncFile(path: string, flags: number): Promise<void> {
  const fd = openSync(path, flags);
  try {
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array, offset: number): void {
  for (let done = 0; done < bytes.byteLength; ) done += writeSync(fd, bytes, done, bytes.byteLength - done, offset + done);
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Writes `bytes` at `offset` of the existing file `path` and cuts what follows, then (with `sync`)
 * fsyncs it. For the journal (writeJournal made it, and flushed its directory): a crash mid-write
 * leaves a torn tail, which reopening ignores; an unflushed record may be lost, and every record
 * after it is then ignored too.
 */
async function writeAt(path: string, offset: number, bytes: Uint8Array, sync: boolean): Promise<void> {
  const fd = openSync(path, fsc.O_RDWR);
  try {
    writeAll(fd, bytes, offset);
    ftruncateSync(fd, offset + bytes.byteLength);
    if (sync) await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * A store inside any FileSystem, under its cwd, through the public contract only
 * (writeBytes is atomic by contract). The contract has no append: an append reads the journal
 * and writes it back whole, so it costs time in proportion to the journal (bounded by compaction
 * at twice the state document), not to the change.
 */
export function fsStore(fs: FileSystem): UpperStore {
  const base = fs.cwd;
  const at = (...parts: string[]) => fs.resolve(posix.join(base, ...parts));
  const maxBytes = Number.MAX_SAFE_INTEGER;
  const readOrUndefined = async (...parts: string[]) => {
    try {
      return (await fs.readBytes(await at(...parts), { maxBytes })).bytes;
    } catch (err) {
      if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
      throw err;
    }
  };
  return {
    where: base,
    readState: () => readOrUndefined(STATE_FILE),
    writeState: async (bytes) => void (await fs.writeBytes(await at(STATE_FILE), bytes)),
    readBlob: (id) => readOrUndefined(BLOB_DIR, checkId(id)),
    writeBlob: async (id, bytes) => {
      const target = await at(BLOB_DIR, checkId(id));
      if ((await fs.stat(target))?.type === 'file') return;
      await fs.writeBytes(target, bytes);
    },
    deleteBlob: async (id) => {
      try {
        await fs.remove(await at(BLOB_DIR, checkId(id)));
      } catch (err) {
        if (!isFsError(err, 'FS_NOT_FOUND')) throw err;
      }
    },
    listBlobs: async () => {
      try {
        const entries = await fs.listDir(await at(BLOB_DIR));
        return entries.filter((e) => e.type === 'file' && BLOB_NAME.test(e.name)).map((e) => e.name);
      } catch (err) {
        if (isFsError(err, 'FS_NOT_FOUND')) return [];
        throw err;
      }
    },
    readJournal: () => readOrUndefined(JOURNAL_FILE),
    writeJournal: async (bytes) => void (await fs.writeBytes(await at(JOURNAL_FILE), bytes)),
    appendJournal: async (offset, bytes) => {
      const now = (await readOrUndefined(JOURNAL_FILE)) ?? new Uint8Array(0);
      const next = new Uint8Array(offset + bytes.byteLength);
      next.set(now.subarray(0, Math.min(offset, now.byteLength)));
      next.set(bytes, offset);
      await fs.writeBytes(await at(JOURNAL_FILE), next);
    },
  };
}

function checkId(id: string): string {
  // Blob names come from our own digests; anything else would be a path trick in a corrupted state file.
  if (!BLOB_NAME.test(id)) throw new FsError('FS_IO_ERROR', `invalid overlay blob name ${JSON.stringify(id)}`);
  return id;
}
