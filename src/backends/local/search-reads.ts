import { isUtf8 } from 'node:buffer';
import { availableParallelism } from 'node:os';
import { posix } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FsError, throwIfAborted } from '../../seam/errors.js';
import { isWithin } from '../../seam/path.js';
import type { FsSearchReadQuery } from '../../seam/provider.js';
import { isTextBytes } from '../../seam/text.js';
import type { FsOpOptions, FsTarget } from '../../seam/types.js';
import type { LocalContext } from './context.js';
import { PINNED_IO, SYNC_READ_BYTES } from './leaf.js';
import { pinnedRead, readDirFiles, type PinnedIo } from './pinned.js';

/**
 * `searchReads` of the local provider: a search's small reads, spread over a few worker threads
 * so that every core works. Each worker runs the same pinned reads as the calling thread (the
 * source of pinned.ts), with the same checks: the directory held and its real path read back
 * before each file, the inode pinned with O_PATH and its type checked before it is opened. What a
 * worker does not read plainly is left to the usual read.
 */

/** Below this many files a request is read on the calling thread: a round trip to a worker costs more. */
const MIN_WORKER_FILES = 64;
/**
 * A request is cut among workers only above this many files each: a search keeps several requests
 * out (one per worker), and each message to a worker costs a wake-up of a thread on a busy core.
 */
const MIN_PER_WORKER = 1024;

/** The default of LocalProviderOptions.searchThreads: two where there are two cores or more. */
export function defaultSearchThreads(): number {
  return availableParallelism() >= 2 ? 2 : 0;
}

export function checkSearchThreads(n: unknown): number {
  if (n === undefined) return defaultSearchThreads();
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0 || n > 64) {
    throw new FsError('FS_INVALID_ARGUMENT', `searchThreads must be an integer from 0 to 64, got ${String(n)}`);
  }
  return n;
}

type Answer = Uint8Array | null | undefined;
/** One directory's files of a request, and where the first of them stands in the request. */
type Group = readonly [dir: string, names: string[], first: number];

export async function searchReads(
  ctx: LocalContext,
  threads: number,
  targets: readonly FsTarget[],
  query: FsSearchReadQuery,
  { signal }: FsOpOptions,
): Promise<Answer[]> {
  throwIfAborted(signal, 'cannot read for a search');
  const out: Answer[] = new Array<Answer>(targets.length).fill(undefined);
  if (!ctx.syncWalk || PINNED_IO === undefined) return out;
  const groups: Group[] = [];
  let last: Group | undefined;
  for (let i = 0; i < targets.length; i++) {
    const key: string = targets[i]!.targetKey;
    const cut = key.lastIndexOf('/');
    const name = key.slice(cut + 1);
    if (last !== undefined && cut === last[0].length && key.startsWith(last[0]) && last[2] + last[1].length === i) {
      last[1].push(name);
      continue;
    }
    last = undefined;
    const dir = key.slice(0, cut);
    // The root itself, or a key that is not a path below it, is read the usual way (which says why).
    if (cut <= 0 || key === ctx.root || !isWithin(ctx.root, dir) || posix.normalize(key) !== key) continue;
    groups.push((last = [dir, [name], i]));
  }
  const maxBytes = Math.min(query.maxBytes, SYNC_READ_BYTES);
  const contains = query.contains === undefined ? undefined : Buffer.from(query.contains.buffer, query.contains.byteOffset, query.contains.byteLength);
  const count = groups.reduce((n, g) => n + g[1].length, 0);
  const inThread = threads === 0 || count < MIN_WORKER_FILES;
  const slices = inThread ? [groups] : split(groups, Math.max(1, Math.min(threads, Math.floor(count / MIN_PER_WORKER))));
  // Each slice holds its share of the total.
  const room = Math.floor(query.maxTotalBytes / slices.length);
  const answers = inThread
    ? [here(PINNED_IO, groups, maxBytes, contains, room)]
    : await Promise.all(slices.map((slice) => pool(threads).read(slice, maxBytes, contains, room)));
  slices.forEach((slice, s) => {
    const answer = answers[s];
    if (answer === undefined) return;
    let at = 0;
    for (const [, names, first] of slice) for (let j = 0; j < names.length; j++) out[first + j] = answer[at++];
  });
  throwIfAborted(signal, 'cannot read for a search');
  return out;
}

const isText = (bytes: Buffer): boolean => isTextBytes(bytes, isUtf8);

function here(io: PinnedIo, groups: readonly Group[], maxBytes: number, contains: Buffer | undefined, room: number): Answer[] {
  const out: Answer[] = [];
  const budget = { left: room };
  for (const [dir, names] of groups) for (const one of readDirFiles(io, pinnedRead, dir, names, maxBytes, contains, isText, budget)) out.push(one);
  return out;
}

/** `groups` cut into `n` slices of about as many files each (a directory's files may be cut too). */
function split(groups: readonly Group[], n: number): Group[][] {
  const total = groups.reduce((sum, g) => sum + g[1].length, 0);
  const per = Math.ceil(total / n);
  const slices: Group[][] = [[]];
  let room = per;
  for (const [dir, names, first] of groups) {
    for (let start = 0; start < names.length; ) {
      if (room === 0) {
        slices.push([]);
        room = per;
      }
      const take = Math.min(room, names.length - start);
      slices[slices.length - 1]!.push([dir, names.slice(start, start + take), first + start]);
      start += take;
      room -= take;
    }
  }
  return slices;
}

// The worker is plain JavaScript given as a string, so it runs the same from the TypeScript
// sources (tests) and from dist/: the pinned reads and T1's check are the very functions above.
// Answers travel as one buffer of contents plus their lengths (-1: null, -2: undefined).
const WORKER_SOURCE = `
const fs = require('node:fs');
const { isUtf8 } = require('node:buffer');
const { parentPort, workerData } = require('node:worker_threads');
const pinnedRead = ${pinnedRead.toString()};
const readDirFiles = ${readDirFiles.toString()};
const isTextBytes = ${isTextBytes.toString()};
const io = { openSync: fs.openSync, fstatSync: fs.fstatSync, readSync: fs.readSync, closeSync: fs.closeSync, readlinkSync: fs.readlinkSync, ...workerData };
const isText = (b) => isTextBytes(b, isUtf8);
parentPort.on('message', ({ dirs, names, counts, maxBytes, contains, room }) => {
  const needle = contains === undefined ? undefined : Buffer.from(contains);
  const budget = { left: room };
  const all = names.split('/');
  const lengths = [];
  const parts = [];
  let total = 0;
  let from = 0;
  for (let d = 0; d < dirs.length; d++) {
    const mine = all.slice(from, from + counts[d]);
    from += counts[d];
    for (const one of readDirFiles(io, pinnedRead, dirs[d], mine, maxBytes, needle, isText, budget)) {
      if (one === undefined) lengths.push(-2);
      else if (one === null) lengths.push(-1);
      else { lengths.push(one.length); parts.push(one); total += one.length; }
    }
  }
  const data = new Uint8Array(total);
  let at = 0;
  for (const p of parts) { data.set(p, at); at += p.length; }
  const sizes = Int32Array.from(lengths);
  parentPort.postMessage({ sizes, data }, [sizes.buffer, data.buffer]);
});
`;

/** A worker and the requests posted to it, answered in the order posted. */
interface Slot {
  readonly worker: Worker;
  readonly pending: ((answers: Answer[] | undefined) => void)[];
}

/**
 * The workers of one size of pool: at most `size`, kept (unreferenced while idle) for the next
 * search. A request goes at once to the worker with the fewest out, so a worker that finishes one
 * starts the next from its own queue without waiting for the calling thread, which may be busy
 * walking. A worker that fails or ends leaves the pool, and its requests are answered with nothing.
 */
class ReadPool {
  readonly #slots: Slot[] = [];

  constructor(private readonly size: number) {}

  /** A slice's answers, or undefined when no worker read it (the caller reads them the usual way). */
  read(groups: readonly Group[], maxBytes: number, contains: Buffer | undefined, room: number): Promise<Answer[] | undefined> {
    const slot = this.#pick();
    if (slot === undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      slot.pending.push(resolve);
      slot.worker.ref();
      // A name never holds a slash: the names travel as one string, a copy rather than a clone per name.
      const dirs = groups.map(([dir]) => dir);
      const names = groups.map(([, list]) => list.join('/')).join('/');
      const counts = Int32Array.from(groups, ([, list]) => list.length);
      try {
        slot.worker.postMessage({ dirs, names, counts, maxBytes, contains, room });
      } catch {
        this.#drop(slot);
      }
    });
  }

  /** An idle worker, else a new one while there is room, else the one with the fewest requests out. */
  #pick(): Slot | undefined {
    let least: Slot | undefined;
    for (const slot of this.#slots) if (least === undefined || slot.pending.length < least.pending.length) least = slot;
    if (least?.pending.length === 0 || this.#slots.length >= this.size) return least;
    try {
      return this.#start();
    } catch {
      // Not started (a machine that refuses threads): nothing is counted, and the others go on.
      return least;
    }
  }

  #start(): Slot {
    const io = PINNED_IO!;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      name: 'dsh-fs search reads',
      workerData: { O_PATH: io.O_PATH, O_NOFOLLOW: io.O_NOFOLLOW, O_DIRECTORY: io.O_DIRECTORY, readFlags: io.readFlags },
    });
    const slot: Slot = { worker, pending: [] };
    worker.on('message', ({ sizes, data }: { sizes: Int32Array; data: Uint8Array }) => {
      const resolve = slot.pending.shift();
      // An idle worker never keeps the process alive.
      if (slot.pending.length === 0) worker.unref();
      resolve?.(unpack(sizes, data));
    });
    // Listened to for its whole life, so that a failure while idle is no uncaught error.
    worker.on('error', () => this.#drop(slot));
    worker.on('exit', () => this.#drop(slot));
    this.#slots.push(slot);
    return slot;
  }

  #drop(slot: Slot): void {
    const at = this.#slots.indexOf(slot);
    if (at === -1) return;
    this.#slots.splice(at, 1);
    void slot.worker.terminate().catch(() => undefined);
    for (const resolve of slot.pending.splice(0)) resolve(undefined);
  }
}

function unpack(sizes: Int32Array, data: Uint8Array): Answer[] {
  const out: Answer[] = [];
  let at = 0;
  for (const size of sizes) {
    if (size === -2) out.push(undefined);
    else if (size === -1) out.push(null);
    else {
      out.push(data.subarray(at, at + size));
      at += size;
    }
  }
  return out;
}

const pools = new Map<number, ReadPool>();

function pool(size: number): ReadPool {
  let p = pools.get(size);
  if (p === undefined) pools.set(size, (p = new ReadPool(size)));
  return p;
}
