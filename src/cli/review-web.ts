import { once } from 'node:events';
import type { Review, ReviewDecision, ReviewFile } from '../review/types.js';
import { startReviewServer } from '../review/web/server.js';
import { EXIT_OK } from './args.js';
import type { Io } from './io.js';

export interface ReviewWebOptions {
  /** 0 or absent: a free port. */
  readonly port?: number;
  readonly io: Io;
  /** Ends the serving like SIGINT does (for embedding and tests). */
  readonly signal?: AbortSignal;
}

/**
 * Serves the review page on 127.0.0.1, prints one line `review page: URL` (the URL carries the
 * token) and serves until SIGINT, SIGTERM or `signal`; resolves to the exit status.
 */
export async function reviewWeb(review: Review, options: ReviewWebOptions): Promise<number> {
  const server = await startReviewServer(review, { port: options.port });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  options.signal?.addEventListener('abort', onSignal, { once: true });
  try {
    options.io.stdout.write(`review page: ${server.url}\n`);
    if (!stop.signal.aborted && options.signal?.aborted !== true) await once(stop.signal, 'abort');
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    options.signal?.removeEventListener('abort', onSignal);
    await server.close();
  }
  return EXIT_OK;
}

/** How often a reopening review looks for changes while a page watches (ms). */
export const REOPEN_POLL_MS = 2000;

/**
 * A review read afresh from the saved sandbox at every call, its decisions taken inside `locked`
 * (the sandbox's cross-process lock). The page outlives many changes of an agent served by
 * another process: a review opened once would show the sandbox as it was when the page started,
 * and its decisions would save that old state over the agent's later changes. Those changes do
 * not reach this process's change feed, so `watch` compares the files every `pollMs`.
 */
export function reopeningReview(open: () => Promise<Review>, locked: <T>(fn: () => Promise<T>) => Promise<T>, pollMs = REOPEN_POLL_MS): Review {
  const files = async (paths?: readonly string[]) => (await open()).files(paths);
  const decide = (decisions: readonly ReviewDecision[]) => locked(async () => (await open()).decide(decisions));
  return {
    files,
    decide,
    accept: (ids) => decide(ids.map((id) => ({ id, decision: 'accept' }))),
    reject: (ids, reason) => decide(ids.map((id) => ({ id, decision: 'reject', ...(reason === undefined ? {} : { reason }) }))),
    pendingFeedback: async () => (await open()).pendingFeedback(),
    watch(listener) {
      let last: string | undefined;
      let busy = false;
      const look = async () => {
        if (busy) return;
        busy = true;
        try {
          const now = fingerprint(await files());
          if (last !== undefined && now !== last) listener();
          last = now;
        } catch {
          // Unreadable for a moment (being saved): the next look tells.
        } finally {
          busy = false;
        }
      };
      void look();
      const timer = setInterval(() => void look(), pollMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}

/** What changes when any file or hunk does: their ids (derived from paths and contents). */
function fingerprint(files: readonly ReviewFile[]): string {
  return JSON.stringify(files.map((f) => [f.id, f.hunks.map((h) => h.id)]));
}
