import { once } from 'node:events';
import type { Review } from '../review/types.js';
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
