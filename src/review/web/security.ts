import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * The cookie the page's token is exchanged for. Browsers share 127.0.0.1's cookies among all its
 * ports: the port in the name keeps two review pages from overwriting each other's.
 */
export const cookieName = (port: number) => `dsh_review_${port}`;

/** A fresh token: 32 random bytes (256 bits), URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares in constant time, so the token cannot be guessed a character at a time. */
export function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The Set-Cookie value that carries the token: unreadable to scripts, never sent cross-site. */
export function tokenCookie(port: number, token: string): string {
  return `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

/** The token in the request's cookie, if any. */
export function cookieToken(req: IncomingMessage, port: number): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === cookieName(port)) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The names the server answers to; anything else in Host is a rebound DNS name. */
export function allowedHosts(port: number): readonly string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

/** True when the Host header names this server on the loopback address. */
export function hostAllowed(req: IncomingMessage, port: number): boolean {
  const host = req.headers.host;
  return host !== undefined && allowedHosts(port).includes(host.toLowerCase());
}

/**
 * True when a state-changing request comes from the page itself: an Origin header naming the
 * same host and port the request was sent to (browsers send it on every POST).
 */
export function originAllowed(req: IncomingMessage, port: number): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host?.toLowerCase();
  if (origin === undefined || host === undefined || !allowedHosts(port).includes(host)) return false;
  return origin.toLowerCase() === `http://${host}`;
}

/**
 * A path the page may ask about: relative, '/'-separated, inside the project. Absolute paths,
 * '..' segments, backslashes and NUL are refused.
 */
export function pathInside(path: string): boolean {
  if (path === '' || path.startsWith('/') || path.includes('\\') || path.includes('\0')) return false;
  return path.split('/').every((segment) => segment !== '..' && segment !== '.' && segment !== '');
}
