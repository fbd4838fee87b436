import type { IncomingMessage, ServerResponse } from 'node:http';
import { isFsError } from '../../seam/errors.js';

/** Headers every answer carries: nothing cached, framed or referred (the URL held the token). */
const COMMON_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
} as const;

/** The page loads only its own script and style, and talks only to this server. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  // A refused request's body is not read: the connection cannot carry another request.
  const close = res.req.complete ? {} : { Connection: 'close' };
  res.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...close, ...headers });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

export function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: { code, message } });
}

/** The status an error of the review model is answered with; other errors are not described. */
export function sendFailure(res: ServerResponse, err: unknown): void {
  if (!isFsError(err)) return sendError(res, 500, 'FS_IO_ERROR', 'the review failed');
  const status = err.code === 'FS_STALE_VERSION' || err.code === 'FS_CONFLICT' ? 409 : err.code === 'FS_INVALID_ARGUMENT' ? 400 : 500;
  sendError(res, status, err.code, err.message);
}

/** Thrown by readBody for a body over the limit. */
export class BodyTooLarge extends Error {}

/** The request's body as text, refused past `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
