import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { toFsError } from '../seam/index.js';
import type { FeedbackStore, ReviewFeedback } from './types.js';

export type { FeedbackStore } from './types.js';

// Where the reasons of rejected hunks wait until the agent's next tool result carries them.
// Synchronous, as a tool result's notes are.

/** Kept in memory: a review and a harness in one process share it (see `sandboxFeedback`). */
export function memoryFeedback(): FeedbackStore {
  let items: ReviewFeedback[] = [];
  return {
    add: (more) => void items.push(...more),
    pending: () => [...items],
    take: () => {
      const out = items;
      items = [];
      return out;
    },
  };
}

const stores = new WeakMap<OverlayFileSystem, FeedbackStore>();

/** The in-memory feedback of a sandbox object (the default of `openReview`). */
export function sandboxFeedback(sandbox: OverlayFileSystem): FeedbackStore {
  let store = stores.get(sandbox);
  if (!store) stores.set(sandbox, (store = memoryFeedback()));
  return store;
}

export const FEEDBACK_FILE = 'review-feedback.json';
const FORMAT = 'dsh-fs-review-feedback';

/**
 * Kept in `dir` (a sandbox's state directory), so a review in one process reaches the agent
 * served by another. Each change replaces the file atomically.
 */
export function dirFeedback(dir: string): FeedbackStore {
  const file = join(dir, FEEDBACK_FILE);
  const read = (from = file): ReviewFeedback[] => {
    let text: string;
    try {
      text = readFileSync(from, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw toFsError(err, `cannot read the review feedback in "${file}"`);
    }
    try {
      const doc = JSON.parse(text) as { format?: unknown; pending?: unknown };
      return doc.format === FORMAT && Array.isArray(doc.pending) ? (doc.pending as ReviewFeedback[]).filter(isFeedback) : [];
    } catch {
      // A damaged file is no feedback, not a failed tool call.
      return [];
    }
  };
  const write = (items: readonly ReviewFeedback[]) => {
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      if (items.length === 0) rmSync(file, { force: true });
      else {
        writeFileSync(tmp, `${JSON.stringify({ format: FORMAT, version: 1, pending: items }, null, 1)}\n`, { flush: true });
        renameSync(tmp, file);
      }
    } catch (err) {
      rmSync(tmp, { force: true });
      throw toFsError(err, `cannot save the review feedback in "${file}"`);
    }
  };
  return {
    add: (more) => write([...read(), ...more]),
    pending: read,
    take: () => {
      // Renamed away first: a reason added meanwhile by another process lands in a new file.
      const taken = `${file}.${randomBytes(6).toString('hex')}.taken`;
      try {
        renameSync(file, taken);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw toFsError(err, `cannot take the review feedback in "${file}"`);
      }
      try {
        return read(taken);
      } finally {
        rmSync(taken, { force: true });
      }
    },
  };
}

/** Whether `v` is a feedback item (a store in a database reads back what it saved). */
export function isFeedback(v: unknown): v is ReviewFeedback {
  const f = v as Partial<ReviewFeedback> | null;
  return typeof f === 'object' && f !== null && typeof f.path === 'string' && typeof f.lines === 'string' && typeof f.reason === 'string' && typeof f.id === 'string';
}

/**
 * The note an agent's next tool result carries, one line per rejected change:
 * `Note: a reviewer rejected your change to PATH (lines L) and reverted it in the sandbox: REASON`
 * and, once, `Read those files again before editing them.`
 */
export function feedbackNote(items: readonly ReviewFeedback[]): string | undefined {
  if (items.length === 0) return undefined;
  const lines = items.map((f) => {
    const where = f.lines === '' ? f.path : `${f.path} (lines ${f.lines})`;
    const why = f.reason.trim() === '' ? ' (no reason given)' : `: ${oneLine(f.reason)}`;
    return `Note: a reviewer rejected your change to ${where} and reverted it in the sandbox${why}`;
  });
  return `${lines.join('\n')}\nRead ${items.length === 1 ? 'that file' : 'those files'} again before editing ${items.length === 1 ? 'it' : 'them'}.`;
}

function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, ' ');
}
