import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieName } from '../../src/review/web/security.js';
import { MAIN_JS, ensureBuilt, project, removeTemps, runCli, serve, textOf } from '../cli/helpers.js';
import { call, tokenOf } from './web-request.js';

// Runs the real CLI: `dsh-fs serve` for the agent and `dsh-fs review --web` in processes of their own.
beforeAll(ensureBuilt, 600_000);
afterAll(removeTemps);

const numbered = (n: number, change: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${change[i + 1] ?? `line ${i + 1}`}\n`).join('');

function startWeb(args: readonly string[]) {
  const child = spawn(process.execPath, [MAIN_JS, 'review', ...args, '--web'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    void exited.then((code) => reject(new Error(`review --web exited with ${code}: ${stderr}`)));
  });
  return { child, firstLine, exited, output: () => ({ stdout, stderr }) };
}

describe('dsh-fs review --web', () => {
  it('prints one line with the address, refuses requests without the token, decides through the page, stops on SIGTERM; the agent hears the reason', { timeout: 120_000 }, async () => {
    const { root, state } = await project({ 'a.txt': numbered(30), 'b.txt': 'one\ntwo\n' });
    const agent = await serve(['--root', root, '--state', state]);
    try {
      await agent.call('read', { file_path: 'a.txt' });
      await agent.call('edit', { file_path: 'a.txt', old_string: 'line 3\n', new_string: 'changed 3\n' });
      await agent.call('edit', { file_path: 'a.txt', old_string: 'line 25\n', new_string: 'changed 25\n' });
    } finally {
      await agent.close();
    }

    const web = startWeb(['--root', root, '--state', state]);
    try {
      const line = await web.firstLine;
      expect(line).toMatch(/^review page: http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
      const url = new URL(line.slice('review page: '.length));
      const port = Number(url.port);
      for (const path of ['/', '/api/files', '/api/events', '/app.js']) expect((await call(port, path)).status, path).toBe(403);
      expect((await call(port, '/?token=x')).status).toBe(403);
      expect((await call(port, `/?token=${tokenOf(url.href)}`)).status).toBe(303);

      const cookie = `${cookieName(port)}=${tokenOf(url.href)}`;
      const listed = JSON.parse((await call(port, '/api/files', { headers: { Cookie: cookie } })).body) as { files: { path: string; hunks: { id: string }[] }[] };
      expect(listed.files.map((f) => [f.path, f.hunks.length])).toEqual([['a.txt', 2]]);
      const [top, bottom] = listed.files[0]!.hunks;
      const decisions = [{ id: top!.id, decision: 'reject', reason: 'keep the old API' }, { id: bottom!.id, decision: 'accept' }];
      const headers = { Cookie: cookie, Origin: `http://127.0.0.1:${port}`, 'Content-Type': 'application/json' };
      expect((await call(port, '/api/decide', { method: 'POST', headers: { ...headers, Origin: 'http://evil.example' }, body: JSON.stringify({ decisions }) })).status).toBe(403);
      const decided = await call(port, '/api/decide', { method: 'POST', headers, body: JSON.stringify({ decisions }) });
      expect(decided.status, decided.body).toBe(200);
      expect(JSON.parse(decided.body)).toEqual({ accepted: [bottom!.id], rejected: [top!.id], conflicts: [] });
    } finally {
      web.child.kill('SIGTERM');
    }
    expect(await web.exited).toBe(0);
    expect(web.output().stdout.trim().split('\n')).toHaveLength(1);
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(numbered(30, { 25: 'changed 25' }));

    const next = await serve(['--root', root, '--state', state]);
    try {
      const text = textOf(await next.call('read', { file_path: 'b.txt' }));
      expect(text).toContain('Note: a reviewer rejected your change to a.txt (lines 3) and reverted it in the sandbox: keep the old API');
    } finally {
      await next.close();
    }
  });

  it('while an agent is served: the page sees its later changes, and a decision keeps them', { timeout: 120_000 }, async () => {
    const { root, state } = await project({ 'a.txt': numbered(30), 'b.txt': 'one\ntwo\n' });
    const agent = await serve(['--root', root, '--state', state]);
    const web = startWeb(['--root', root, '--state', state]);
    try {
      await agent.call('read', { file_path: 'a.txt' });
      await agent.call('edit', { file_path: 'a.txt', old_string: 'line 3\n', new_string: 'changed 3\n' });
      const url = new URL((await web.firstLine).slice('review page: '.length));
      const port = Number(url.port);
      const cookie = `${cookieName(port)}=${tokenOf(url.href)}`;
      const listed = async () => (JSON.parse((await call(port, '/api/files', { headers: { Cookie: cookie } })).body) as { files: { path: string; hunks: { id: string }[] }[] }).files;
      expect((await listed()).map((f) => f.path)).toEqual(['a.txt']);

      await agent.call('read', { file_path: 'b.txt' });
      await agent.call('edit', { file_path: 'b.txt', old_string: 'two', new_string: 'TWO' });
      const files = await listed();
      expect(files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
      const headers = { Cookie: cookie, Origin: `http://127.0.0.1:${port}`, 'Content-Type': 'application/json' };
      const decided = await call(port, '/api/decide', { method: 'POST', headers, body: JSON.stringify({ decisions: [{ id: files[0]!.hunks[0]!.id, decision: 'accept' }] }) });
      expect(decided.status, decided.body).toBe(200);
      expect((await listed()).map((f) => f.path)).toEqual(['b.txt']);
    } finally {
      await agent.close();
      web.child.kill('SIGTERM');
    }
    expect(await web.exited).toBe(0);
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(numbered(30, { 3: 'changed 3' }));
    expect((await runCli(['status', '--root', root, '--state', state])).stdout).toBe('M b.txt\n');
  });
});
