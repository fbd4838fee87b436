import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { cookieName } from '../../src/review/web/security.js';
import { project, removeTemps } from '../cli/helpers.js';
import { call, tokenOf } from './web-request.js';

// review, commit --hunk and reject with --against-parent, through the CLI in this process.

afterAll(removeTemps);

const numbered = (n: number, change: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${change[i + 1] ?? `line ${i + 1}`}\n`).join('');

interface Listed {
  files: { path: string; status: string; hunks: { id: string; lines: string[] }[] }[];
}

function start(argv: string[], stdin?: string[]) {
  const out = { stdout: '', stderr: '' };
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const io: Io = { stdout: stream((s) => (out.stdout += s)), stderr: stream((s) => (out.stderr += s)), env: { NO_COLOR: '1' }, cwd: '/', ...(stdin ? { stdin: Readable.from(stdin) } : {}) };
  return { out, done: main(argv, io) };
}

async function run(argv: string[], stdin?: string[]) {
  const { out, done } = start(argv, stdin);
  const code = await done;
  return { code, ...out };
}

/** Parent P changed a.txt's line 15; fork F (made by "dsh-fs fork --into") changed lines 3 and 25 of a.txt, and b.txt. */
async function scene() {
  const { root, state, base } = await project({ 'a.txt': numbered(30), 'b.txt': 'one\ntwo\n' });
  const parent = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: state });
  await parent.writeText(await parent.resolve('a.txt'), numbered(30, { 15: 'parent 15' }));
  const forkDir = join(base, 'attempt');
  expect((await run(['fork', '--root', root, '--state', state, '--into', forkDir])).code).toBe(0);
  const fork = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: forkDir });
  await fork.writeText(await fork.resolve('a.txt'), numbered(30, { 3: 'changed 3', 15: 'parent 15', 25: 'changed 25' }));
  await fork.writeText(await fork.resolve('b.txt'), 'one\nTWO\n');
  const read = async (stateDir: string, path: string) => {
    const o = await createOverlayFs({ lower: createLocalFs({ root }), stateDir });
    return (await o.readText(await o.resolve(path))).text;
  };
  return { root, state, forkDir, read, at: ['--root', root, '--state', forkDir, '--against-parent'] };
}

async function listed(at: string[]): Promise<Listed> {
  const r = await run(['review', ...at, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Listed;
}

describe('dsh-fs review --against-parent', () => {
  it('three hunks; commit --hunk A reaches the parent only, reject --hunk B reverts it in the fork and is heard', async () => {
    const { root, state, forkDir, read, at } = await scene();
    const { files } = await listed(at);
    expect(files.map((f) => [f.path, f.status, f.hunks.length])).toEqual([
      ['a.txt', 'modified', 2],
      ['b.txt', 'modified', 1],
    ]);
    const [a, b] = files[0]!.hunks;
    expect(a!.lines).toContain('+changed 3');

    const committed = await run(['commit', ...at, '--hunk', a!.id]);
    expect(committed.code, committed.stderr).toBe(0);
    expect(committed.stdout).toContain(`to the parent sandbox (${state})`);
    expect(await read(state, 'a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15' }));
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(numbered(30));
    expect(await read(forkDir, 'a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15', 25: 'changed 25' }));

    const rejected = await run(['reject', ...at, '--hunk', b!.id, '--reason', 'keep the old API']);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(await read(forkDir, 'a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15' }));
    expect(await read(state, 'a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15' }));
    const feedback = JSON.parse(await readFile(join(forkDir, 'review-feedback.json'), 'utf8')) as { pending: { path: string; lines: string; reason: string }[] };
    expect(feedback.pending.map((f) => [f.path, f.lines, f.reason])).toEqual([['a.txt', '25', 'keep the old API']]);
    // Only the second file is left to review against the parent; a used id is stale.
    expect((await listed(at)).files.map((f) => f.path)).toEqual(['b.txt']);
    const stale = await run(['reject', ...at, '--hunk', b!.id]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('FS_STALE_VERSION');
  });

  it('a file the parent changed since the fork is a conflict: nothing written, exit status 1', async () => {
    const { state, forkDir, read, at, root } = await scene();
    const parent = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: state });
    await parent.writeText(await parent.resolve('a.txt'), numbered(30, { 10: 'parent 10', 15: 'parent 15' }));
    const hunk = (await listed(at)).files[0]!.hunks.find((h) => h.lines.includes('+changed 3'))!;
    const r = await run(['commit', ...at, '--hunk', hunk.id, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ accepted: [], conflicts: [{ path: 'a.txt', code: 'FS_CONFLICT' }] });
    expect(await read(state, 'a.txt')).toBe(numbered(30, { 10: 'parent 10', 15: 'parent 15' }));
    expect(await read(forkDir, 'a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15', 25: 'changed 25' }));
  });

  it('the terminal walk accepts into the parent', async () => {
    const { state, read, at } = await scene();
    const r = await run(['review', ...at], ['?\n', 'y\n', 'q\n']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('commit it to the parent sandbox');
    expect(await read(state, 'a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15' }));
  });

  it('the page: lists against the parent and accepts into it', async () => {
    const { state, read, at } = await scene();
    const web = start(['review', ...at, '--web']);
    try {
      await expect.poll(() => web.out.stdout).toMatch(/^review page: /);
      const url = new URL(web.out.stdout.trim().slice('review page: '.length));
      const port = Number(url.port);
      const headers = { Cookie: `${cookieName(port)}=${tokenOf(url.href)}`, Origin: `http://127.0.0.1:${port}`, 'Content-Type': 'application/json' };
      const { files } = JSON.parse((await call(port, '/api/files', { headers })).body) as Listed;
      expect(files.map((f) => [f.path, f.hunks.length])).toEqual([['a.txt', 2], ['b.txt', 1]]);
      const decisions = [{ id: files[0]!.hunks[0]!.id, decision: 'accept' }];
      const decided = await call(port, '/api/decide', { method: 'POST', headers, body: JSON.stringify({ decisions }) });
      expect(decided.status, decided.body).toBe(200);
      expect(await read(state, 'a.txt')).toBe(numbered(30, { 3: 'changed 3', 15: 'parent 15' }));
    } finally {
      // The page serves until SIGINT or SIGTERM: its own listener ends it.
      process.emit('SIGTERM');
    }
    expect(await web.done).toBe(0);
  });

  it('refuses what is no fork, a plain commit, and a database sandbox (exit 2)', async () => {
    const { root, state, at } = await scene();
    const notFork = await run(['review', '--root', root, '--state', state, '--against-parent', '--json']);
    expect(notFork.code).toBe(2);
    expect(notFork.stderr).toContain('holds no fork');
    expect((await run(['commit', ...at])).code).toBe(2);
    expect((await run(['reject', '--sqlite', join(root, 'x.db'), '--against-parent', '--hunk', 'x'])).code).toBe(2);
  });
});
