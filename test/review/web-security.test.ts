import { networkInterfaces } from 'node:os';
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startReviewServer, type ReviewServer } from '../../src/review/web/server.js';
import { cookieName, pathInside } from '../../src/review/web/security.js';
import { FakeReview, sampleFiles } from './web-fake.js';
import { call, tokenOf } from './web-request.js';

let review: FakeReview;
let server: ReviewServer;
let cookie: string;
let origin: string;

beforeEach(async () => {
  review = new FakeReview(sampleFiles());
  server = await startReviewServer(review);
  cookie = `${cookieName(server.port)}=${tokenOf(server.url)}`;
  origin = `http://127.0.0.1:${server.port}`;
});
afterEach(() => server.close());

const decideBody = JSON.stringify({ decisions: [{ id: 'h-top', decision: 'accept' }] });
const post = (headers: Record<string, string>, body = decideBody) =>
  call(server.port, '/api/decide', { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

describe('review page: the token', () => {
  it('prints an address on 127.0.0.1 with a token of at least 128 bits, fresh for each server', async () => {
    const url = new URL(server.url);
    expect(url.hostname).toBe('127.0.0.1');
    expect(Buffer.from(tokenOf(server.url), 'base64url').length * 8).toBeGreaterThanOrEqual(128);
    const other = await startReviewServer(review);
    try {
      expect(tokenOf(other.url)).not.toBe(tokenOf(server.url));
    } finally {
      await other.close();
    }
  });

  it('refuses every page and call without the token', async () => {
    for (const path of ['/', '/app.js', '/app.css', '/api/files', '/api/events']) {
      expect((await call(server.port, path)).status, path).toBe(403);
    }
    expect((await call(server.port, '/?token=wrong')).status).toBe(403);
    // 127.0.0.1's cookies reach every port: only the cookie named by this server's port counts.
    expect((await call(server.port, '/', { headers: { Cookie: `${cookieName(server.port + 1)}=${tokenOf(server.url)}` } })).status).toBe(403);
    expect((await call(server.port, '/', { headers: { Cookie: `${cookieName(server.port)}=${tokenOf(server.url).slice(0, -1)}x` } })).status).toBe(403);
  });

  it('exchanges the token in the address for an HttpOnly, SameSite=Strict cookie and drops it from the address', async () => {
    const answer = await call(server.port, `/?token=${tokenOf(server.url)}`);
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe('/');
    const set = String(answer.headers['set-cookie']);
    expect(set).toContain(`${cookieName(server.port)}=${tokenOf(server.url)}`);
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Strict/);
    const page = await call(server.port, '/', { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>dsh-fs review</title>');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
  });
});

describe('review page: Host and Origin', () => {
  it('refuses a Host that is not this server (DNS rebinding), even with the token', async () => {
    for (const host of [`evil.example:${server.port}`, 'localhost:1', `127.0.0.1:${server.port + 1}`, `127.0.0.1`]) {
      expect((await call(server.port, '/api/files', { headers: { Host: host, Cookie: cookie } })).status, host).toBe(403);
      expect((await call(server.port, `/?token=${tokenOf(server.url)}`, { headers: { Host: host } })).status, host).toBe(403);
    }
    expect((await call(server.port, '/api/files', { headers: { Host: `localhost:${server.port}`, Cookie: cookie } })).status).toBe(200);
  });

  it('refuses a change without an Origin, from another origin or without the token; the review sees none of them', async () => {
    expect((await post({ Cookie: cookie })).status).toBe(403);
    expect((await post({ Cookie: cookie, Origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ Cookie: cookie, Origin: `http://127.0.0.1:${server.port + 1}` })).status).toBe(403);
    expect((await post({ Cookie: cookie, Origin: 'null' })).status).toBe(403);
    expect((await post({ Origin: origin })).status).toBe(403);
    expect((await post({ Origin: origin, Cookie: `${cookieName(server.port)}=nope` })).status).toBe(403);
    expect((await post({ Cookie: cookie, Origin: origin, Host: `evil.example:${server.port}` })).status).toBe(403);
    expect(review.calls).toEqual([]);
    const ok = await post({ Cookie: cookie, Origin: origin });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ accepted: ['h-top'], rejected: [], conflicts: [] });
    expect(review.calls).toEqual([[{ id: 'h-top', decision: 'accept' }]]);
  });

  it('refuses a read from another origin', async () => {
    expect((await call(server.port, '/api/files', { headers: { Cookie: cookie, Origin: 'http://evil.example' } })).status).toBe(403);
  });
});

describe('review page: what a change may be', () => {
  const ok = () => ({ Cookie: cookie, Origin: origin });

  it('takes decisions only as JSON (a cross-site form cannot send them)', async () => {
    const form = await call(server.port, '/api/decide', { method: 'POST', headers: { ...ok(), 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'id=h-top' });
    expect(form.status).toBe(415);
    expect((await post(ok(), '{"decisions": [')).status).toBe(400);
    expect((await post(ok(), '{"decisions": []}')).status).toBe(400);
    expect((await post(ok(), '{"decisions": [{"id": "h-top", "decision": "maybe"}]}')).status).toBe(400);
    expect((await post(ok(), `{"decisions": [{"id": "h-top", "decision": "reject", "reason": "${'x'.repeat(5000)}"}]}`)).status).toBe(400);
    expect((await post(ok(), JSON.stringify({ decisions: [{ id: 'x'.repeat(2 * 1024 * 1024), decision: 'accept' }] }))).status).toBe(413);
    expect(review.calls).toEqual([]);
  });

  it('answers a stale id with 409 and its code, nothing applied', async () => {
    const answer = await post(ok(), JSON.stringify({ decisions: [{ id: 'h-top', decision: 'accept' }, { id: 'gone', decision: 'reject' }] }));
    expect(answer.status).toBe(409);
    expect(JSON.parse(answer.body).error.code).toBe('FS_STALE_VERSION');
    expect(review.calls).toEqual([]);
  });

  it('allows no other method or address to change anything', async () => {
    for (const [method, path] of [['PUT', '/api/decide'], ['DELETE', '/api/files'], ['POST', '/api/files'], ['POST', '/'], ['PATCH', '/app.js']] as const) {
      expect((await call(server.port, path, { method, headers: { ...ok(), 'Content-Type': 'application/json' }, body: decideBody })).status, `${method} ${path}`).toBe(405);
    }
    for (const path of ['/package.json', '/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/src/api.ts', '/api/file']) {
      expect((await call(server.port, path, { headers: ok() })).status, path).toBe(404);
    }
    expect(review.calls).toEqual([]);
  });

  it('refuses paths outside the project', async () => {
    for (const path of ['../outside.txt', '/etc/passwd', 'src/../../x', 'a\\..\\b', './src/api.ts', '']) {
      const answer = await call(server.port, `/api/files?path=${encodeURIComponent(path)}`, { headers: ok() });
      expect(answer.status, path).toBe(403);
      expect(JSON.parse(answer.body).error.code).toBe('FS_OUTSIDE_ROOT');
    }
    const inside = await call(server.port, '/api/files?path=src/api.ts', { headers: ok() });
    expect(JSON.parse(inside.body).files.map((f: { path: string }) => f.path)).toEqual(['src/api.ts']);
  });

  it('pathInside: no path with a ".." segment, a leading "/" or a backslash is inside', () => {
    const segment = fc.stringMatching(/^[a-z.\\]{1,4}$/);
    fc.assert(fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.boolean(), (segments, absolute) => {
      const path = (absolute ? '/' : '') + segments.join('/');
      const bad = absolute || path.includes('\\') || segments.some((s) => s === '..' || s === '.');
      expect(pathInside(path)).toBe(!bad);
    }));
  });
});

describe('review page: the address it listens on', () => {
  it('is not reachable on another interface', async () => {
    const external = Object.values(networkInterfaces()).flat().find((i) => i !== undefined && !i.internal && i.family === 'IPv4');
    // A machine with loopback only has nothing else to try; the address is checked above.
    if (external === undefined) return;
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: external.address, port: server.port });
      socket.once('connect', () => { socket.destroy(); resolve(false); });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
