import type { FileSystem, FsTarget } from '../seam/index.js';

/** A gap a sequential reader may skip by reading on rather than opening the file again. */
const SKIP_BYTES = 1024 * 1024;
/** Chunks kept after they are read: the kernel's read-ahead may ask for a range out of order. */
const KEPT_CHUNKS = 2;

/**
 * Reads a large file by range for one open descriptor. One stream of the file stays open while
 * the program reads on from where it stopped (cat, tar, a search), so a run of 128 KiB reads opens
 * the file once; a read elsewhere opens it again from there. Memory: a few of the provider's chunks.
 */
export class RangeReader {
  #chunks: AsyncIterator<Uint8Array> | undefined;
  /** File offset of the next chunk the open stream gives. */
  #next = 0;
  #kept: { at: number; bytes: Uint8Array }[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  constructor(
    private readonly fs: FileSystem,
    private readonly target: () => FsTarget,
  ) {}

  /**
   * Copies the file's bytes from `pos` into `into` (up to its length); the number copied is short
   * only at the end of the file. Reads of one descriptor run one at a time.
   */
  read(into: Uint8Array, pos: number): Promise<number> {
    const run = this.#queue.then(() => this.#read(into, pos));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Lets the open stream go (its descriptor or cursor is released), and what is kept. */
  close(): Promise<void> {
    const run = this.#queue.then(() => this.#drop());
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #read(into: Uint8Array, pos: number): Promise<number> {
    let done = 0;
    while (done < into.length) {
      const at = pos + done;
      const kept = this.#kept.find((c) => at >= c.at && at < c.at + c.bytes.length);
      if (kept !== undefined) {
        const piece = kept.bytes.subarray(at - kept.at, Math.min(kept.bytes.length, at - kept.at + into.length - done));
        into.set(piece, done);
        done += piece.length;
        continue;
      }
      if (this.#chunks === undefined || at < this.#next || at - this.#next > SKIP_BYTES) {
        if (!(await this.#open(at))) break;
      }
      const next = await this.#pull();
      if (next === undefined) break;
    }
    return done;
  }

  /** Opens the file from `at`; false when `at` is at or past its end. */
  async #open(at: number): Promise<boolean> {
    await this.#drop();
    const stream = await this.fs.streamBytes(this.target(), { start: at, unversioned: true });
    const chunks = stream.chunks[Symbol.asyncIterator]();
    if (at >= stream.size) {
      await chunks.return?.();
      return false;
    }
    this.#chunks = chunks;
    this.#next = at;
    return true;
  }

  /** The open stream's next chunk, kept; undefined at its end (the stream is then let go). */
  async #pull(): Promise<Uint8Array | undefined> {
    const chunks = this.#chunks!;
    let step: IteratorResult<Uint8Array>;
    try {
      step = await chunks.next();
    } catch (err) {
      this.#chunks = undefined;
      this.#kept = [];
      throw err;
    }
    if (step.done === true) {
      this.#chunks = undefined;
      return undefined;
    }
    if (step.value.length === 0) return step.value;
    this.#kept.push({ at: this.#next, bytes: step.value });
    if (this.#kept.length > KEPT_CHUNKS) this.#kept.shift();
    this.#next += step.value.length;
    return step.value;
  }

  async #drop(): Promise<void> {
    const chunks = this.#chunks;
    this.#chunks = undefined;
    this.#kept = [];
    await chunks?.return?.();
  }
}
