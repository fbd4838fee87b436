import { spawn, type ChildProcess } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { isTextBytes } from '../../seam/text.js';
import { PINNED_IO } from './leaf.js';
import { openedRead, pinnedRead, readDirFiles, type PinnedIo } from './pinned.js';

/**
 * The helpers that read a search's small files: worker threads, or child processes. Both run
 * the same source text (pinned.ts's functions and `answer` below), with the same checks.
 */

export type Answer = Uint8Array | null | undefined;
/** One directory's files of a request, and where the first of them stands in the request. */
export type Group = readonly [dir: string, names: string[], first: number];
export type HelperKind = 'threads' | 'processes';

interface Request {
  readonly dirs: string[];
  readonly names: string;
  readonly counts: Int32Array;
  readonly maxBytes: number;
  readonly contains: Uint8Array | undefined;
  readonly room: number;
  /** Pinned reads (`pinnedRead`), else direct ones (`openedRead`). */
  readonly pin: boolean;
}

interface Reply {
  readonly sizes: Int32Array;
  readonly data: Uint8Array;
}

/**
 * One request's reads, in a helper. Self-contained (it refers to nothing outside its arguments):
 * helpers run its source text. Answers travel as one buffer of contents plus their lengths
 * (-1: null, -2: undefined).
 */
function answer(io: PinnedIo, read: typeof readDirFiles, leaf: { pinned: typeof pinnedRead; opened: typeof openedRead }, isText: (b: Buffer) => boolean, request: Request): Reply {
  const { dirs, counts, maxBytes, room } = request;
  const one = request.pin ? leaf.pinned : leaf.opened;
  const needle = request.contains === undefined ? undefined : Buffer.from(request.contains);
  const budget = { left: room };
  const all = request.names.split('/');
  const lengths: number[] = [];
  const parts: Buffer[] = [];
  let total = 0;
  let from = 0;
  for (let d = 0; d < dirs.length; d++) {
    const mine = all.slice(from, from + counts[d]!);
    from += counts[d]!;
    for (const got of read(io, one, dirs[d]!, mine, maxBytes, needle, isText, budget)) {
      if (got === undefined) lengths.push(-2);
      else if (got === null) lengths.push(-1);
      else {
        lengths.push(got.length);
        parts.push(got);
        total += got.length;
      }
    }
  }
  const data = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    data.set(p, at);
    at += p.length;
  }
  return { sizes: Int32Array.from(lengths), data };
}

// Plain JavaScript given as a string, so it runs the same from the TypeScript sources (tests) and
// from dist/: the leaf reads, T1's check and `answer` are the very functions above.
const COMMON_SOURCE = `
const fs = require('node:fs');
const { isUtf8 } = require('node:buffer');
const pinnedRead = ${pinnedRead.toString()};
const openedRead = ${openedRead.toString()};
const leaf = { pinned: pinnedRead, opened: openedRead };
const readDirFiles = ${readDirFiles.toString()};
const isTextBytes = ${isTextBytes.toString()};
const answer = ${answer.toString()};
const isText = (b) => isTextBytes(b, isUtf8);
const base = { openSync: fs.openSync, fstatSync: fs.fstatSync, readSync: fs.readSync, closeSync: fs.closeSync, readlinkSync: fs.readlinkSync };
`;

const THREAD_SOURCE = `${COMMON_SOURCE}
const { parentPort, workerData } = require('node:worker_threads');
const io = { ...base, ...workerData };
parentPort.on('message', (request) => {
  const reply = answer(io, readDirFiles, leaf, isText, request);
  parentPort.postMessage(reply, [reply.sizes.buffer, reply.data.buffer]);
});
`;

// A process of its own holds each directory as its working directory (see PinnedIo.chdir), and
// leaves it for / between requests. It ends with its parent (the channel closes).
const PROCESS_SOURCE = `${COMMON_SOURCE}
const io = { ...base, ...JSON.parse(process.argv[1]), chdir: process.chdir };
process.on('message', (request) => {
  let reply;
  try {
    reply = answer(io, readDirFiles, leaf, isText, request);
  } finally {
    process.chdir('/');
  }
  process.send(reply);
});
process.on('disconnect', () => process.exit(0));
`;

/** Whether `process.execPath` is node itself, which a helper process can be started from. */
export function canSpawnNode(): boolean {
  return process.release.name === 'node' && process.versions.electron === undefined && PINNED_IO !== undefined;
}

/** What a pool needs of a helper, whatever its kind. */
interface Helper {
  post(request: Request): void;
  ref(): void;
  unref(): void;
  stop(): void;
}

function ioFlags(): Record<string, number> {
  const io = PINNED_IO!;
  return { O_PATH: io.O_PATH, O_NOFOLLOW: io.O_NOFOLLOW, O_DIRECTORY: io.O_DIRECTORY, readFlags: io.readFlags };
}

function startThread(onReply: (reply: Reply) => void, onGone: () => void): Helper {
  const worker = new Worker(THREAD_SOURCE, { eval: true, name: 'dsh-fs search reads', workerData: ioFlags() });
  worker.on('message', onReply);
  // Listened to for its whole life, so that a failure while idle is no uncaught error.
  worker.on('error', onGone);
  worker.on('exit', onGone);
  return {
    post: (request) => worker.postMessage(request),
    ref: () => worker.ref(),
    unref: () => worker.unref(),
    stop: () => void worker.terminate().catch(() => undefined),
  };
}

function startProcess(onReply: (reply: Reply) => void, onGone: () => void, onRefused: () => void): Helper {
  // No exec arguments of ours (a test runner's loader or inspector) and no stdio: a bare node.
  const child: ChildProcess = spawn(process.execPath, ['-e', PROCESS_SOURCE, JSON.stringify(ioFlags())], {
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    // Started where it can be whatever the caller's working directory (which may be gone).
    cwd: '/',
    // Nothing the caller's NODE_OPTIONS would load (a loader, a preload) belongs in it.
    env: { ...process.env, NODE_OPTIONS: undefined },
    serialization: 'advanced',
    windowsHide: true,
  });
  child.on('message', (reply: Reply) => onReply(reply));
  // Not started (no such file, no permission, no room for a process), or a failure to signal it.
  child.on('error', () => {
    if (child.pid === undefined) onRefused();
    onGone();
  });
  child.on('exit', onGone);
  child.on('disconnect', onGone);
  const channel = child.channel as { ref(): void; unref(): void } | undefined | null;
  return {
    post: (request) => {
      if (!child.connected || !child.send(request)) throw new Error('not sent');
    },
    ref: () => {
      child.ref();
      channel?.ref();
    },
    unref: () => {
      child.unref();
      channel?.unref();
    },
    stop: () => {
      child.kill();
    },
  };
}

/** A helper and the requests posted to it, answered in the order posted. */
interface Slot {
  readonly helper: Helper;
  readonly pending: ((answers: Answer[] | undefined) => void)[];
}

/**
 * The helpers of one kind and size of pool: at most `size`, kept (unreferenced while idle) for
 * the next search. A request goes at once to the helper with the fewest out, so a helper that
 * finishes one starts the next from its own queue without waiting for the calling thread, which
 * may be busy walking. A helper that fails or ends leaves the pool, and its requests are answered
 * with nothing.
 */
class ReadPool {
  readonly #slots: Slot[] = [];

  constructor(
    /** Processes, until one cannot be started: then threads, for the rest of this process. */
    private kind: HelperKind,
    private readonly size: number,
  ) {}

  /** A slice's answers, or undefined when no helper read it (the caller reads them the usual way). */
  read(groups: readonly Group[], maxBytes: number, contains: Buffer | undefined, room: number, pin: boolean): Promise<Answer[] | undefined> {
    const slot = this.#pick();
    if (slot === undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      slot.pending.push(resolve);
      slot.helper.ref();
      // A name never holds a slash: the names travel as one string, a copy rather than a clone per name.
      const dirs = groups.map(([dir]) => dir);
      const names = groups.map(([, list]) => list.join('/')).join('/');
      const counts = Int32Array.from(groups, ([, list]) => list.length);
      try {
        slot.helper.post({ dirs, names, counts, maxBytes, contains, room, pin });
      } catch {
        this.#drop(slot);
      }
    });
  }

  /** An idle helper, else a new one while there is room, else the one with the fewest requests out. */
  #pick(): Slot | undefined {
    let least: Slot | undefined;
    for (const slot of this.#slots) if (least === undefined || slot.pending.length < least.pending.length) least = slot;
    if (least?.pending.length === 0 || this.#slots.length >= this.size) return least;
    try {
      return this.#start();
    } catch {
      // Not started (a machine that refuses threads or processes): nothing is counted, and the others go on.
      this.#refused();
      return least;
    }
  }

  #refused(): void {
    if (this.kind === 'processes') this.kind = 'threads';
  }

  #start(): Slot {
    let slot: Slot | undefined;
    const onReply = ({ sizes, data }: Reply) => {
      if (slot === undefined) return;
      const resolve = slot.pending.shift();
      // An idle helper never keeps the process alive.
      if (slot.pending.length === 0) slot.helper.unref();
      resolve?.(unpack(sizes, data));
    };
    const onGone = () => {
      if (slot !== undefined) this.#drop(slot);
    };
    const helper = this.kind === 'threads' ? startThread(onReply, onGone) : startProcess(onReply, onGone, () => this.#refused());
    slot = { helper, pending: [] };
    this.#slots.push(slot);
    return slot;
  }

  #drop(slot: Slot): void {
    const at = this.#slots.indexOf(slot);
    if (at === -1) return;
    this.#slots.splice(at, 1);
    slot.helper.stop();
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

const pools = new Map<string, ReadPool>();

/** The pool of `size` helpers of `kind`, shared by every provider of this process. */
export function readPool(kind: HelperKind, size: number): ReadPool {
  const key = `${kind}:${size}`;
  let p = pools.get(key);
  if (p === undefined) pools.set(key, (p = new ReadPool(kind, size)));
  return p;
}
