import type { Review } from '../review/types.js';
import { EXIT_FAILURE } from './args.js';
import type { Io } from './io.js';

export interface ReviewWebOptions {
  readonly port?: number;
  readonly io: Io;
  readonly signal?: AbortSignal;
}

/**
 * Serves the review page on 127.0.0.1, prints one line `review page: URL` and serves until
 * SIGINT, SIGTERM or `signal`; resolves to the exit status.
 */
export async function reviewWeb(review: Review, options: ReviewWebOptions): Promise<number> {
  void review;
  options.io.stderr.write('dsh-fs review --web: not available yet\n');
  return EXIT_FAILURE;
}
