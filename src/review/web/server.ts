import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FsError } from '../../seam/errors.js';
import type { Review } from '../types.js';
import { reviewHandler } from './handler.js';
import { sendFailure } from './respond.js';
import { newToken } from './security.js';

export interface ReviewServerOptions {
  /** The port to listen on; 0 or absent picks a free one. */
  readonly port?: number;
  /** The token the page's address carries; a fresh 256-bit one when absent. */
  readonly token?: string;
}

export interface ReviewServer {
  /** The address to open, token included: http://127.0.0.1:PORT/?token=… */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Serves the review page of `review` on 127.0.0.1 only. */
export async function startReviewServer(review: Review, options: ReviewServerOptions = {}): Promise<ReviewServer> {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new FsError('FS_INVALID_ARGUMENT', `port ${port} is not a TCP port`);
  const token = options.token ?? newToken();
  let bound = 0;
  const handle = reviewHandler({ review, token, port: () => bound });
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendFailure(res, err);
      else res.destroy();
    });
  });
  bound = await listen(server, port);
  return {
    url: `http://127.0.0.1:${bound}/?token=${token}`,
    port: bound,
    close: () => closeServer(server),
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const message = err.code === 'EADDRINUSE' ? `port ${port} on 127.0.0.1 is in use` : `cannot listen on 127.0.0.1:${port}: ${err.message}`;
      reject(new FsError(err.code === 'EADDRINUSE' ? 'FS_ALREADY_EXISTS' : 'FS_IO_ERROR', message, { cause: err }));
    };
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Event streams stay open until their page goes; end them with the server.
    server.closeAllConnections();
  });
}
