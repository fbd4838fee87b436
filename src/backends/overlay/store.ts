import { randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { join, posix, resolve as resolveHostPath } from 'node:path';
import { FsError, isFsError, toFsError, type FileSystem } from '../../seam/index.js';

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
  /** Idempotent: blobs are named by their content digest. */
  writeBlob(id: string, bytes: Uint8Array): Promise<void>;
  /** Absent blobs are ignored. */
  deleteBlob(id: string): Promise<void>;
  listBlobs(): Promise<string[]>;
  /** The journal of changes since the state document, or undefined when there is none. */
  readJournal(): Promise<Uint8Array | undefined>;
  /** Replaces the journal atomically (a fresh journal: its header only). */
  writeJournal(bytes: Uint8Array): Promise<void>;
  /**
   * Writes `bytes` at `offset` of the journal, drops anything after them (a torn tail), and
   * flushes the journal to disk before returning. `bytes` may be empty (a truncation).
   */
  appendJournal(offset: number, bytes: Uint8Array): Promise<void>;
}

export const STATE_FILE = 'overlay.json';
export const JOURNAL_FILE = 'overlay.journal';
export const BLOB_DIR = 'blobs';
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

  const syncDir = async (path: string) => {
    const handle = await open(path, fsc.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  };

  const writeAtomic = async (dirPath: string, name: string, bytes: Uint8Array) => {
    const temp = join(dirPath, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await open(temp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o600);
    try {
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, join(dirPath, name));
    } catch (err) {
      await rm(temp, { force: true }).catch(() => {});
      throw err;
    }
    try {
      await syncDir(dirPath);
    } catch (err) {
      throw toFsError(err, `"${join(dirPath, name)}" is in place, but its directory could not be flushed to disk, so it may not survive a crash`);
    }
  };

  const readOrUndefined = async (path: string): Promise<Uint8Array | undefined> => {
    try {
      const buf = await readFile(path);
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ENOENT') return undefined;
      throw err;
    }
  };

  return {
    where: root,
    readState: () => wrap(`cannot read the overlay state in "${root}"`, () => readOrUndefined(join(root, STATE_FILE))),
    writeState: (bytes) => wrap(`cannot write the overlay state in "${root}"`, () => writeAtomic(root, STATE_FILE, bytes)),
    readBlob: (id) => wrap(`cannot read overlay blob ${id} in "${root}"`, () => readOrUndefined(join(blobs, checkId(id)))),
    writeBlob: (id, bytes) =>
      wrap(`cannot write overlay blob ${id} in "${root}"`, async () => {
        const path = join(blobs, checkId(id));
        const existing = await stat(path).catch(() => undefined);
        if (existing?.isFile() && existing.size === bytes.byteLength) return;
        await writeAtomic(blobs, id, bytes);
      }),
    deleteBlob: (id) => wrap(`cannot delete overlay blob ${id} in "${root}"`, () => rm(join(blobs, checkId(id)), { force: true })),
    listBlobs: () =>
      wrap(`cannot list the overlay blobs in "${root}"`, async () => (await readdir(blobs)).filter((n) => BLOB_NAME.test(n))),
    readJournal: () => wrap(`cannot read the overlay journal in "${root}"`, () => readOrUndefined(join(root, JOURNAL_FILE))),
    writeJournal: (bytes) => wrap(`cannot write the overlay journal in "${root}"`, () => writeAtomic(root, JOURNAL_FILE, bytes)),
    appendJournal: (offset, bytes) =>
      wrap(`cannot append to the overlay journal in "${root}"`, async () => {
        // The journal exists (writeJournal made it, and flushed its directory): an in-place write,
        // then one fsync of the file. A crash mid-write leaves a torn tail, which reopening ignores.
        const handle = await open(join(root, JOURNAL_FILE), fsc.O_RDWR);
        try {
          let done = 0;
          while (done < bytes.byteLength) {
            const { bytesWritten } = await handle.write(bytes, done, bytes.byteLength - done, offset + done);
            done += bytesWritten;
          }
          await handle.truncate(offset + bytes.byteLength);
          await handle.sync();
        } finally {
          await handle.close();
        }
      }),
  };
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
