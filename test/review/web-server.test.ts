import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { reopeningReview, reviewWeb } from '../../src/cli/review-web.js';
import { startReviewServer, type ReviewServer } from '../../src/review/web/server.js';
import { cookieName } from '../../src/review/web/security.js';
import { PAGE_HTML } from '../../src/review/web/page-html.js';
import { PAGE_SCRIPT } from '../../src/review/web/page-script.js';
import { isFsError } from '../../src/seam/errors.js';
import { FakeReview, sampleFiles } from './web-fake.js';
import { call, tokenOf } from './web-request.js';

const servers: ReviewServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(review: FakeReview, port?: number): Promise<ReviewServer> {
  const server = await startReviewServer(review, { port });
  servers.push(server);
  return server;
}

/** Opens the event stream and resolves with the first `change` event's text. */
function firstChange(server: ReviewServer): { opened: Promise<void>; change: Promise<string>; close: () => void } {
  let close = () => {};
  let opened!: () => void;
  const openedP = new Promise<void>((r) => (opened = r));
  const change = new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path: '/api/events', headers: { Host: `127.0.0.1:${server.port}`, Cookie: `${cookieName(server.port)}=${tokenOf(server.url)}` } }, (res) => {
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('retry:')) opened();
        if (text.includes('event: change')) resolve(text);
      });
    });
    req.on('error', reject);
    req.end();
    close = () => req.destroy();
  });
  return { opened: openedP, change, close };
}

describe('review page: what is served', () => {
  it('the script parses as JavaScript (where no browser runs the page tests, this still fails on a broken script)', () => {
    expect(() => new Function(PAGE_SCRIPT)).not.toThrow();
    expect(() => new Function(PAGE_SCRIPT.replace('function el(', 'function el(('))).toThrow(SyntaxError);
  });

  it('the page loads only its own script and style, no inline code', () => {
    expect(PAGE_HTML).toContain('<script src="/app.js" defer></script>');
    expect(PAGE_HTML).toContain('<link rel="stylesheet" href="/app.css">');
    expect(PAGE_HTML).not.toMatch(/<script>|<style>|\son[a-z]+=/i);
  });
});

describe('review page: the change feed', () => {
  it('sends a change event when the sandbox changes, and lets go of the watch when the page goes', async () => {
    const review = new FakeReview(sampleFiles());
    const server = await start(review);
    const events = firstChange(server);
    await events.opened;
    expect(review.listenerCount).toBe(1);
    review.replace(sampleFiles().slice(1));
    expect(await events.change).toContain('event: change');
    events.close();
    await expect.poll(() => review.listenerCount).toBe(0);
  });
});

describe('review page: the files', () => {
  it('serves the review model\'s files unchanged', async () => {
    const review = new FakeReview(sampleFiles());
    const server = await start(review);
    const answer = await call(server.port, '/api/files', { headers: { Cookie: `${cookieName(server.port)}=${tokenOf(server.url)}` } });
    expect(JSON.parse(answer.body)).toEqual({ files: sampleFiles() });
  });

  it('a port in use is an FsError, not a raw Node error', async () => {
    const first = await start(new FakeReview([]));
    const err = await startReviewServer(new FakeReview([]), { port: first.port }).catch((e: unknown) => e);
    expect(isFsError(err, 'FS_ALREADY_EXISTS')).toBe(true);
    const bad = await startReviewServer(new FakeReview([]), { port: 70000 }).catch((e: unknown) => e);
    expect(isFsError(bad, 'FS_INVALID_ARGUMENT')).toBe(true);
  });
});

describe('reviewWeb', () => {
  it('prints exactly one line with the address and token, serves until stopped, then closes and exits 0', async () => {
    const stdout = new PassThrough(), stderr = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const stop = new AbortController();
    const done = reviewWeb(new FakeReview(sampleFiles()), { io: { stdout, stderr, env: {}, cwd: process.cwd() }, signal: stop.signal });
    await expect.poll(() => out).toMatch(/\n$/);
    expect(out).toMatch(/^review page: http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}\n$/);
    const url = out.slice('review page: '.length).trim();
    const port = Number(new URL(url).port);
    expect((await call(port, new URL(url).pathname + new URL(url).search)).status).toBe(303);
    stop.abort();
    expect(await done).toBe(0);
    await expect(call(port, '/')).rejects.toThrow();
  });

  it('stops on SIGTERM', async () => {
    const stdout = new PassThrough(), stderr = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const before = process.listenerCount('SIGTERM');
    const done = reviewWeb(new FakeReview([]), { io: { stdout, stderr, env: {}, cwd: process.cwd() } });
    await expect.poll(() => out).toMatch(/\n$/);
    process.emit('SIGTERM');
    expect(await done).toBe(0);
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});

describe('reopeningReview', () => {
  it('opens afresh for every call, decides inside the lock, and its watch hears a change made elsewhere', async () => {
    let current = new FakeReview(sampleFiles());
    let opens = 0;
    const events: string[] = [];
    const review = reopeningReview(async () => (opens++, current), async (fn) => {
      events.push('lock');
      try {
        return await fn();
      } finally {
        events.push('unlock');
      }
    }, 5);
    expect((await review.files()).map((f) => f.path)).toEqual(['src/api.ts', 'notes.md', 'logo.png']);
    current = new FakeReview(sampleFiles().slice(1));
    expect((await review.files()).map((f) => f.path)).toEqual(['notes.md', 'logo.png']);
    expect(opens).toBe(2);
    await review.reject(['h-notes'], 'no');
    expect(events).toEqual(['lock', 'unlock']);
    expect(current.calls).toEqual([[{ id: 'h-notes', decision: 'reject', reason: 'no' }]]);

    let heard = 0;
    const stop = review.watch(() => heard++);
    await expect.poll(() => opens).toBeGreaterThan(4);
    expect(heard).toBe(0);
    current = new FakeReview(sampleFiles());
    await expect.poll(() => heard).toBe(1);
    stop();
    const after = opens;
    current = new FakeReview([]);
    await new Promise((r) => setTimeout(r, 50));
    expect(opens).toBeLessThanOrEqual(after + 1);
    expect(heard).toBe(1);
  });
});
