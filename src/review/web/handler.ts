import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Review } from '../types.js';
import { decideRoute, eventsRoute, filesRoute } from './api.js';
import { PAGE_HTML } from './page-html.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';
import { CONTENT_SECURITY_POLICY, send, sendError } from './respond.js';
import { cookieToken, hostAllowed, originAllowed, sameToken, tokenCookie } from './security.js';

export interface HandlerOptions {
  readonly review: Review;
  readonly token: string;
  /** The port the server listens on (known once it does). */
  readonly port: () => number;
}

const ASSETS: Record<string, { readonly type: string; readonly body: string }> = {
  '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
  '/app.js': { type: 'text/javascript; charset=utf-8', body: PAGE_SCRIPT },
  '/app.css': { type: 'text/css; charset=utf-8', body: PAGE_STYLE },
};

/**
 * Every request: a Host naming this server (else a rebound DNS name: 403), the token (in the
 * URL once, then in the cookie), and for a change an Origin naming this server. Nothing is
 * read from or written to disk here; the only write is review.decide.
 */
export function reviewHandler(options: HandlerOptions) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const port = options.port();
    if (!hostAllowed(req, port)) return sendError(res, 403, 'FS_PERMISSION_DENIED', 'this Host is not the review server');
    if (req.headers.origin !== undefined && !originAllowed(req, port)) {
      return sendError(res, 403, 'FS_PERMISSION_DENIED', 'requests from other origins are refused');
    }
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const given = url.searchParams.get('token');
    if (req.method === 'GET' && url.pathname === '/' && given !== null) {
      if (!sameToken(given, options.token)) return sendError(res, 403, 'FS_PERMISSION_DENIED', 'the token is wrong');
      // The token leaves the address bar (and history) for the cookie.
      return send(res, 303, 'text/plain; charset=utf-8', 'see /\n', { Location: '/', 'Set-Cookie': tokenCookie(port, options.token) });
    }
    if (!sameToken(cookieToken(req, port), options.token)) {
      return sendError(res, 403, 'FS_PERMISSION_DENIED', 'open the page with the address dsh-fs printed (it carries the token)');
    }
    await route(options.review, req, res, url, port);
  };
}

async function route(review: Review, req: IncomingMessage, res: ServerResponse, url: URL, port: number): Promise<void> {
  const method = req.method ?? 'GET';
  const asset = ASSETS[url.pathname];
  const known = asset !== undefined || url.pathname.startsWith('/api/');
  if (method === 'POST' && url.pathname === '/api/decide') {
    if (!originAllowed(req, port)) {
      return sendError(res, 403, 'FS_PERMISSION_DENIED', 'a change needs the Origin of this page');
    }
    return decideRoute(review, req, res);
  }
  if (method !== 'GET' && method !== 'HEAD') {
    return known ? sendError(res, 405, 'FS_INVALID_ARGUMENT', `${method} is not allowed here`) : sendError(res, 404, 'FS_NOT_FOUND', 'no such page');
  }
  if (asset !== undefined) return send(res, 200, asset.type, asset.body, { 'Content-Security-Policy': CONTENT_SECURITY_POLICY });
  if (url.pathname === '/api/files') return filesRoute(review, url, res);
  if (url.pathname === '/api/events') return eventsRoute(review, req, res);
  return sendError(res, 404, 'FS_NOT_FOUND', 'no such page');
}
