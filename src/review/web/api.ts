import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Review, ReviewDecision } from '../types.js';
import { pathInside } from './security.js';
import { BodyTooLarge, readBody, sendError, sendFailure, sendJson } from './respond.js';

/** Decisions arrive as JSON; a review of many hunks stays far below this. */
const MAX_BODY = 1024 * 1024;
const MAX_REASON = 4096;

/** GET /api/files[?path=P…]: the review's files; a path outside the project is refused. */
export async function filesRoute(review: Review, url: URL, res: ServerResponse): Promise<void> {
  const paths = url.searchParams.getAll('path');
  const outside = paths.find((p) => !pathInside(p));
  if (outside !== undefined) return sendError(res, 403, 'FS_OUTSIDE_ROOT', `"${outside}" is not a path inside the project`);
  try {
    sendJson(res, 200, { files: await review.files(paths.length === 0 ? undefined : paths) });
  } catch (err) {
    sendFailure(res, err);
  }
}

/** POST /api/decide with `{ "decisions": [ { id, decision, reason? } ] }`: one change through the review model. */
export async function decideRoute(review: Review, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!/^application\/json(;|$)/i.test(req.headers['content-type'] ?? '')) {
    return sendError(res, 415, 'FS_INVALID_ARGUMENT', 'the body must be application/json');
  }
  let body: string;
  try {
    body = await readBody(req, MAX_BODY);
  } catch (err) {
    if (err instanceof BodyTooLarge) return sendError(res, 413, 'FS_TOO_LARGE', `the body is over ${MAX_BODY} bytes`);
    return sendError(res, 400, 'FS_IO_ERROR', 'the body could not be read');
  }
  const decisions = parseDecisions(body);
  if (typeof decisions === 'string') return sendError(res, 400, 'FS_INVALID_ARGUMENT', decisions);
  try {
    sendJson(res, 200, await review.decide(decisions));
  } catch (err) {
    sendFailure(res, err);
  }
}

/** The decisions in a request body, or what is wrong with it. */
export function parseDecisions(body: string): ReviewDecision[] | string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return 'the body is not JSON';
  }
  const list = (value as { decisions?: unknown } | null)?.decisions;
  if (!Array.isArray(list) || list.length === 0) return '"decisions" must be a non-empty array';
  const out: ReviewDecision[] = [];
  for (const item of list as unknown[]) {
    const { id, decision, reason } = (item ?? {}) as Record<string, unknown>;
    if (typeof id !== 'string' || id === '') return 'each decision needs an "id"';
    if (decision !== 'accept' && decision !== 'reject') return `decision of "${id}" must be "accept" or "reject"`;
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON)) return `reason of "${id}" must be text of at most ${MAX_REASON} characters`;
    const trimmed = typeof reason === 'string' ? reason.trim() : '';
    out.push(decision === 'reject' && trimmed !== '' ? { id, decision, reason: trimmed } : { id, decision });
  }
  return out;
}

/** GET /api/events: a server-sent event `change` after every change of the sandbox. */
export function eventsRoute(review: Review, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    Connection: 'keep-alive',
  });
  res.write('retry: 1000\n\n');
  const unsubscribe = review.watch(() => {
    res.write('event: change\ndata: {}\n\n');
  });
  const stop = () => unsubscribe();
  req.once('close', stop);
  res.once('close', stop);
}
