import { Worker } from 'node:worker_threads';
import { FsError, toFsError } from '../seam/errors.js';
import { splitLines } from '../seam/text.js';

/**
 * The default of `GrepOptions.matchTimeoutMs`: how long the matcher may work on one batch of
 * lines (one chunk of a file, at most 64 KiB plus the line it ends inside) before the search is
 * stopped with FS_TIMEOUT.
 */
export const DEFAULT_MATCH_TIMEOUT_MS = 10_000;

// The worker is plain JavaScript given as a string, so it runs the same from the TypeScript
// sources (tests) and from dist/. It splits a batch with the seam's one line splitter (its source
// text is part of the worker's) and answers the indexes of the matching lines.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const splitLines = ${splitLines.toString()};
let re = null;
let progress = null;
parentPort.on('message', (m) => {
  if (m.source !== undefined) { re = new RegExp(m.source, m.flags); progress = new Int32Array(m.progress); return; }
  const out = [];
  for (const b of m) {
    Atomics.store(progress, 0, b.id);
    const lines = splitLines(b.text, b.brokenAfter);
    const hits = [];
    for (let i = 0; i < lines.length; i++) if (re.test(lines[i])) hits.push(i);
    out.push({ id: b.id, hits, lines: lines.length });
  }
  parentPort.postMessage(out);
});
`;

/** Idle workers kept for the next search (each costs a few MiB; starting one takes tens of ms). */
const MAX_IDLE = 2;
const idle: Worker[] = [];

function takeWorker(): Worker {
  const reused = idle.pop();
  if (reused !== undefined) return reused;
  const worker = new Worker(WORKER_SOURCE, { eval: true, name: 'dsh-fs grep' });
  // An idle worker never keeps the process alive; a pending batch does, through its timer.
  worker.unref();
  return worker;
}

/**
 * Batches waiting while the worker is busy travel together in its next message, up to this many
 * UTF-16 units (one batch alone may be larger): one round trip for many small files.
 */
const MESSAGE_CHARS = 64 * 1024;

interface Batch {
  readonly id: number;
  readonly text: string;
  readonly brokenAfter: boolean;
}

interface Pending {
  readonly id: number;
  readonly where: string;
  resolve(value: { hits: number[]; lines: number }): void;
  reject(err: unknown): void;
}

/**
 * Tests lines against one regular expression in a worker thread, so that a pattern that
 * backtracks for a long time never holds the caller's event loop, and is stopped (the worker is
 * terminated) once it has made no progress for `timeoutMs`. Batches are answered in order.
 */
export class LineMatcher {
  private worker: Worker | undefined;
  private readonly pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;
  private failure: FsError | undefined;
  /** Batches not yet sent: one message is in flight at a time. */
  private readonly queued: Batch[] = [];
  private inFlight = 0;
  /** The id of the batch the worker is on, written by the worker: a timeout names that file. */
  private readonly progress = new Int32Array(new SharedArrayBuffer(4));

  /** No repetition at all: matching is bounded by line × pattern length, so it runs here. */
  private readonly inline: boolean;

  constructor(
    private readonly regex: RegExp,
    private readonly timeoutMs: number,
    private readonly quote: string,
  ) {
    // Nested classes (the v flag) are beyond this scan: such patterns go to the worker.
    this.inline = !regex.flags.includes('v') && withoutRepetition(regex.source);
  }

  /** The indexes of the lines of `text` (split by `splitLines(text, brokenAfter)`) that match. */
  match(text: string, where: string, brokenAfter = true): Promise<{ hits: number[]; lines: number }> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.inline) {
      const lines = splitLines(text, brokenAfter);
      const hits: number[] = [];
      for (let i = 0; i < lines.length; i++) if (this.regex.test(lines[i]!)) hits.push(i);
      return Promise.resolve({ hits, lines: lines.length });
    }
    if (this.worker === undefined) {
      try {
        this.worker = takeWorker();
      } catch (err) {
        return Promise.reject(toFsError(err, 'cannot start the grep matcher'));
      }
      this.worker.on('message', this.onMessage);
      this.worker.on('error', this.onError);
      this.worker.on('exit', this.onExit);
      this.worker.postMessage({ source: this.regex.source, flags: this.regex.flags, progress: this.progress.buffer });
    }
    const id = this.seq;
    this.seq = (this.seq + 1) | 0;
    return new Promise((resolve, reject) => {
      this.pending.push({ id, where, resolve, reject });
      this.queued.push({ id, text, brokenAfter });
      if (this.inFlight === 0) this.send();
    });
  }

  /** Sends what is queued (up to MESSAGE_CHARS) as one message, and times it. */
  private send(): void {
    let chars = 0;
    let n = 0;
    while (n < this.queued.length && (n === 0 || chars + this.queued[n]!.text.length <= MESSAGE_CHARS)) chars += this.queued[n++]!.text.length;
    const message = this.queued.splice(0, n);
    this.inFlight = message.length;
    this.arm();
    this.worker!.postMessage(message);
  }

  /** Stops whatever is pending (an abort): the worker is terminated, not reused. */
  cancel(reason: FsError): void {
    if (this.pending.length > 0) this.fail(reason);
  }

  /** Hands a healthy, idle worker back to the pool. */
  release(): void {
    const worker = this.worker;
    if (worker === undefined) return;
    this.worker = undefined;
    worker.off('message', this.onMessage);
    worker.off('error', this.onError);
    worker.off('exit', this.onExit);
    if (this.pending.length === 0 && this.failure === undefined && idle.length < MAX_IDLE) idle.push(worker);
    else void worker.terminate();
  }

  private arm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const current = Atomics.load(this.progress, 0);
      const stuck = this.pending.find((p) => p.id === current) ?? this.pending[0];
      if (stuck === undefined) return;
      const on = stuck.where;
      this.fail(
        new FsError(
          'FS_TIMEOUT',
          `grep stopped: the pattern ${this.quote} took longer than ${this.timeoutMs} ms on ${on}; ` +
            'it backtracks too much on that text. Narrow it: anchor it (^, $), replace ".*" by a class that ' +
            'cannot overlap what follows (e.g. "[^=]*=" for ".*="), or search fewer files (path, include)',
        ),
      );
    }, this.timeoutMs);
  }

  private readonly onMessage = (answers: { id: number; hits: number[]; lines: number }[]) => {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight = 0;
    const done: [Pending, { hits: number[]; lines: number }][] = [];
    for (const m of answers) {
      const first = this.pending[0];
      if (first === undefined || first.id !== m.id) break;
      this.pending.shift();
      done.push([first, { hits: m.hits, lines: m.lines }]);
    }
    if (this.queued.length > 0 && this.worker !== undefined) this.send();
    for (const [p, answer] of done) p.resolve(answer);
  };

  private readonly onError = (err: unknown) => this.fail(toFsError(err, 'the grep matcher failed'));
  private readonly onExit = () => this.fail(new FsError('FS_IO_ERROR', 'the grep matcher stopped unexpectedly'));

  private fail(error: FsError): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.failure ??= error;
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) {
      worker.off('message', this.onMessage);
      worker.off('error', this.onError);
      worker.off('exit', this.onExit);
      void worker.terminate();
    }
    this.queued.length = 0;
    this.inFlight = 0;
    for (const p of this.pending.splice(0)) p.reject(error);
  }
}

/**
 * Whether a pattern has no quantifier (`*`, `+`, `?`, `{…}`) outside a class: then no input can
 * make it backtrack for long, and a worker round trip per batch would only cost time. Errs on the
 * side of the worker: any `{` counts, and so does a `?` that is not a group's own `(?`.
 */
export function withoutRepetition(source: string): boolean {
  let inClass = false;
  let groupOpened = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    const opened = groupOpened;
    groupOpened = false;
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') groupOpened = true;
    else if (c === '*' || c === '+' || c === '{') return false;
    else if (c === '?' && !opened) return false;
  }
  return true;
}
