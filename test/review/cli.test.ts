import { readFile } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ensureBuilt, project, removeTemps, runCli, serve, textOf } from '../cli/helpers.js';

// Builds dist/ (the scenario runs the real CLI and server as separate processes).
beforeAll(ensureBuilt, 600_000);
afterAll(removeTemps);

const numbered = (n: number, change: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => `${change[i + 1] ?? `line ${i + 1}`}\n`).join('');

interface Listed {
  files: { path: string; status: string; hunks: { id: string; oldStart: number; oldLines: number; newStart: number; newLines: number; lines: string[] }[] }[];
}

async function agentSession(root: string, state: string) {
  const agent = await serve(['--root', root, '--state', state]);
  try {
    await agent.call('read', { file_path: 'a.txt' });
    await agent.call('edit', { file_path: 'a.txt', old_string: 'line 3\n', new_string: 'changed 3\n' });
    await agent.call('edit', { file_path: 'a.txt', old_string: 'line 25\n', new_string: 'changed 25\n' });
    await agent.call('read', { file_path: 'b.txt' });
    await agent.call('edit', { file_path: 'b.txt', old_string: 'two', new_string: 'TWO' });
  } finally {
    await agent.close();
  }
}

describe('dsh-fs review, commit --hunk, reject', () => {
  it('the acceptance scenario: three hunks, one committed, one rejected with a reason the agent hears', { timeout: 120_000 }, async () => {
    const { root, state } = await project({ 'a.txt': numbered(30), 'b.txt': 'one\ntwo\n' });
    await agentSession(root, state);
    const at = ['--root', root, '--state', state];
    const listed = await runCli(['review', ...at, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const { files } = JSON.parse(listed.stdout) as Listed;
    expect(files.map((f) => [f.path, f.status, f.hunks.length])).toEqual([
      ['a.txt', 'modified', 2],
      ['b.txt', 'modified', 1],
    ]);
    const [a, b] = files[0]!.hunks;
    expect(a!.lines).toContain('+changed 3');
    expect(a).toMatchObject({ oldStart: 1, oldLines: 6, newStart: 1, newLines: 6 });

    const committed = await runCli(['commit', ...at, '--hunk', a!.id]);
    expect(committed.code, committed.stderr).toBe(0);
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(numbered(30, { 3: 'changed 3' }));
    expect(await readFile(join(root, 'b.txt'), 'utf8')).toBe('one\ntwo\n');

    const rejected = await runCli(['reject', ...at, '--hunk', b!.id, '--reason', 'keep the old API']);
    expect(rejected.code, rejected.stderr).toBe(0);
    const stale = await runCli(['reject', ...at, '--hunk', b!.id]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('FS_STALE_VERSION');

    const status = await runCli(['status', ...at]);
    expect(status.stdout).toBe('M b.txt\n');

    const agent = await serve(['--root', root, '--state', state]);
    try {
      const read = await agent.call('read', { file_path: 'a.txt' });
      expect(textOf(read)).toContain('Note: a reviewer rejected your change to a.txt (lines 25) and reverted it in the sandbox: keep the old API');
      expect(textOf(read)).toContain('changed 3');
      expect(textOf(read)).not.toContain('changed 25');
      // Handed once.
      expect(textOf(await agent.call('read', { file_path: 'b.txt' }))).not.toContain('reviewer');
    } finally {
      await agent.close();
    }
  });

  it('the terminal walk: y, r with a reason, then q; applied at the end as one change', { timeout: 120_000 }, async () => {
    const { root, state } = await project({ 'a.txt': numbered(30), 'b.txt': 'one\ntwo\n' });
    await agentSession(root, state);
    const out: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (out.push(chunk.toString()), done()) });
    const err = new Writable({ write: (_c, _e, done) => done() });
    const io = { stdout: sink, stderr: err, env: { NO_COLOR: '1' }, cwd: root, stdin: Readable.from(['y\n', 'x\n', 'r\nnot this one\n', 'q\n']) };
    const code = await main(['review', '--root', root, '--state', state], io);
    expect(code).toBe(0);
    const text = out.join('');
    expect(text).toContain('@@ -1,6 +1,6 @@');
    expect(text).toContain('r - reject this change with a reason');
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(numbered(30, { 3: 'changed 3' }));
    const listed = await runCli(['review', '--root', root, '--state', state, '--json']);
    expect((JSON.parse(listed.stdout) as Listed).files.map((f) => [f.path, f.hunks.length])).toEqual([['b.txt', 1]]);
    const feedback = JSON.parse(await readFile(join(state, 'review-feedback.json'), 'utf8')) as { pending: { path: string; reason: string }[] };
    expect(feedback.pending.map((f) => [f.path, f.reason])).toEqual([['a.txt', 'not this one']]);
  });

  it('reject PATH reverts whole files; usage mistakes exit 2', { timeout: 120_000 }, async () => {
    const { root, state } = await project({ 'a.txt': numbered(30), 'b.txt': 'one\ntwo\n' });
    await agentSession(root, state);
    const at = ['--root', root, '--state', state];
    expect((await runCli(['reject', ...at])).code).toBe(2);
    expect((await runCli(['commit', ...at, '--hunk', 'x', 'a.txt'])).code).toBe(2);
    const r = await runCli(['reject', ...at, '--json', 'b.txt']);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { rejected: string[] }).rejected).toHaveLength(1);
    expect((await runCli(['status', ...at])).stdout).toBe('M a.txt\n');
  });
});

describe('dsh-fs serve --tools review', () => {
  it('a supervising client lists and decides; the agent served without it hears the reason and has no such tools', { timeout: 120_000 }, async () => {
    const { root, state } = await project({ 'a.txt': numbered(30), 'b.txt': 'one\ntwo\n' });
    await agentSession(root, state);
    const at = ['--root', root, '--state', state];
    const supervisor = await serve([...at, '--tools', 'review']);
    let ids: string[];
    try {
      const listed = await supervisor.call('review_list', {});
      const files = (listed.structuredContent as unknown as Listed).files;
      ids = files.flatMap((f) => f.hunks.map((h) => h.id));
      expect(ids).toHaveLength(3);
      const decided = await supervisor.call('review_decide', { decisions: [{ id: ids[2], decision: 'reject', reason: 'two stays lower case' }] });
      expect(decided.isError).toBeFalsy();
      expect(decided.structuredContent).toEqual({ accepted: [], rejected: [ids[2]], conflicts: [] });
    } finally {
      await supervisor.close();
    }
    expect((await runCli(['status', ...at])).stdout).toBe('M a.txt\n');
    const agent = await serve(at);
    try {
      const names = (await agent.client.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain('review_decide');
      expect(textOf(await agent.call('list', { path: '.' }))).toContain('Note: a reviewer rejected your change to b.txt (lines 2) and reverted it in the sandbox: two stays lower case');
    } finally {
      await agent.close();
    }
  });
});

describe('review by hunk over a SQLite sandbox', () => {
  it('review --json, commit --hunk and reject --hunk work the same with --sqlite', { timeout: 120_000 }, async () => {
    const { createSqliteFs } = await import('../../src/backends/sqlite/index.js');
    const { tempDir } = await import('../cli/helpers.js');
    const file = join(await tempDir(), 'ws.db');
    const ws = createSqliteFs({ path: file, workspace: 'app' });
    await ws.writeText(await ws.resolve('/a.txt'), numbered(30));
    const args = ['--sqlite', file, '--workspace', 'app'];
    const agent = await serve(args);
    try {
      await agent.call('read', { file_path: '/a.txt' });
      await agent.call('edit', { file_path: '/a.txt', old_string: 'line 3\n', new_string: 'changed 3\n' });
      await agent.call('edit', { file_path: '/a.txt', old_string: 'line 25\n', new_string: 'changed 25\n' });
    } finally {
      await agent.close();
    }
    const listed = await runCli(['review', ...args, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const [a] = (JSON.parse(listed.stdout) as Listed).files;
    expect(a!.hunks).toHaveLength(2);
    expect((await runCli(['commit', ...args, '--hunk', a!.hunks[0]!.id])).code).toBe(0);
    expect((await ws.readText(await ws.resolve('/a.txt'))).text).toBe(numbered(30, { 3: 'changed 3' }));
    expect((await runCli(['reject', ...args, '--hunk', a!.hunks[1]!.id, '--reason', 'no'])).code).toBe(0);
    expect((await runCli(['status', ...args])).stdout).toBe('No changes.\n');
  });

  it('a reason given by reject in one process reaches the agent served by another, once', { timeout: 120_000 }, async () => {
    const { createSqliteFs } = await import('../../src/backends/sqlite/index.js');
    const { tempDir } = await import('../cli/helpers.js');
    const file = join(await tempDir(), 'ws.db');
    const ws = createSqliteFs({ path: file, workspace: 'app' });
    await ws.writeText(await ws.resolve('/a.txt'), numbered(30));
    await ws.writeText(await ws.resolve('/b.txt'), 'one\ntwo\n');
    const args = ['--sqlite', file, '--workspace', 'app'];
    const agent = await serve(args);
    try {
      await agent.call('read', { file_path: '/a.txt' });
      await agent.call('edit', { file_path: '/a.txt', old_string: 'line 25\n', new_string: 'changed 25\n' });
      const listed = await runCli(['review', ...args, '--json']);
      const [a] = (JSON.parse(listed.stdout) as Listed).files;
      const rejected = await runCli(['reject', ...args, '--hunk', a!.hunks[0]!.id, '--reason', 'keep line 25']);
      expect(rejected.code, rejected.stderr).toBe(0);
      const next = textOf(await agent.call('read', { file_path: '/b.txt' }));
      expect(next).toContain('Note: a reviewer rejected your change to a.txt (lines 25) and reverted it in the sandbox: keep line 25');
      expect(textOf(await agent.call('read', { file_path: '/a.txt' }))).not.toContain('reviewer');
    } finally {
      await agent.close();
    }
  });
});
