// A library sandbox and the CLI on one state directory, in two processes: they take turns.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/index.js';
import { ensureBuilt, MAIN_JS, project, REPO, removeTemps, runCli } from '../cli/helpers.js';

beforeAll(ensureBuilt);
afterAll(removeTemps);

/** A child process, and a promise of the first line of its output (stdout or stderr) matching `line`. */
function child(args: readonly string[], line: RegExp) {
  const proc = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const seen = new Promise<string>((resolve, reject) => {
    const look = (d: string) => {
      out += d;
      const m = out.split('\n').find((l) => line.test(l));
      if (m !== undefined) resolve(m);
    };
    proc.stdout.setEncoding('utf8').on('data', look);
    proc.stderr.setEncoding('utf8').on('data', look);
    proc.on('close', (code) => reject(new Error(`exited ${code} before /${line.source}/:\n${out}`)));
  });
  const exited = new Promise<number | null>((resolve) => proc.on('close', resolve));
  return { proc, seen, exited, output: () => out };
}

const read = (sandbox: Awaited<ReturnType<typeof createSandbox>>, file_path: string) => sandbox.ctx.tools.execute('read', { file_path }, { owner: 's' });

describe('createSandbox and the CLI take the state lock in turn', () => {
  it('a CLI commit in another process waits for a call of the library sandbox, then commits what it wrote', async () => {
    const p = await project({ 'a.txt': 'one\n' });
    const sandbox = await createSandbox({ root: p.root, state: p.state, audit: false });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: (c: ReturnType<typeof child>) => void;
    const waiting = new Promise<ReturnType<typeof child>>((resolve) => (started = resolve));
    // A long operation: the lock is held from its start to its end, tool calls inside included.
    const held = sandbox.fs.label({ source: 'test' }, async () => {
      expect((await sandbox.ctx.tools.execute('write', { file_path: 'b.txt', content: 'held\n' }, { owner: 's' })).isError).toBe(false);
      const commit = child([MAIN_JS, 'commit', '--root', p.root, '--state', p.state], /waiting for process/);
      expect(await commit.seen).toContain(`process ${process.pid}`);
      expect(existsSync(join(p.root, 'b.txt'))).toBe(false);
      started(commit);
      await gate;
    });
    const commit = await Promise.race([waiting, held.then(() => Promise.reject(new Error('the operation ended before the commit waited')))]);
    release();
    await held;
    expect(await commit.exited, commit.output()).toBe(0);
    expect(await readFile(join(p.root, 'b.txt'), 'utf8')).toBe('held\n');
    await sandbox.close();
  });

  it('after a CLI discard in another process, the sandbox works on the state as the CLI left it', async () => {
    const p = await project({ 'a.txt': 'one\n' });
    const sandbox = await createSandbox({ root: p.root, state: p.state, audit: false });
    expect((await read(sandbox, 'a.txt')).isError).toBe(false);
    expect((await sandbox.ctx.tools.execute('edit', { file_path: 'a.txt', old_string: 'one', new_string: 'ONE' }, { owner: 's' })).isError).toBe(false);
    expect((await runCli(['discard', '--root', p.root, '--state', p.state])).code).toBe(0);

    // The discarded edit stays discarded: the next write saves the state the CLI left, plus itself.
    expect((await sandbox.ctx.tools.execute('write', { file_path: 'c.txt', content: 'new\n' }, { owner: 's' })).isError).toBe(false);
    expect((await runCli(['status', '--root', p.root, '--state', p.state])).stdout).toBe('A c.txt\n');
    expect((await sandbox.changes()).map((c) => c.path)).toEqual([join(p.root, 'c.txt')]);
    expect((await read(sandbox, 'a.txt')).text).toContain('1: one');
    await sandbox.close();
  });

  it('waits for another process holding the lock; past lockTimeoutMs, FS_IO_ERROR names it; a dead holder is taken over', async () => {
    const p = await project({ 'a.txt': 'one\n' });
    const sandbox = await createSandbox({ root: p.root, state: p.state, audit: false, lockTimeoutMs: 300 });
    const lock = pathToFileURL(join(REPO, 'dist/sandbox/lock.js')).href;
    const script = `const { withStateLock } = await import(${JSON.stringify(lock)});
      await withStateLock(${JSON.stringify(sandbox.stateDir)}, async () => { console.log('held'); await new Promise(() => setInterval(() => {}, 1000)); });`;
    const holder = child(['--input-type=module', '-e', script], /^held$/);
    await holder.seen;
    try {
      const refused = await sandbox.ctx.tools.execute('write', { file_path: 'b.txt', content: 'x\n' }, { owner: 's' });
      expect(refused).toMatchObject({ isError: true, error: { code: 'FS_IO_ERROR' } });
      expect(refused.text).toContain(`process ${holder.proc.pid}`);
      await expect(sandbox.commit()).rejects.toMatchObject({ name: 'FsError', code: 'FS_IO_ERROR' });
    } finally {
      holder.proc.kill('SIGKILL');
    }
    await holder.exited;
    expect((await sandbox.ctx.tools.execute('write', { file_path: 'b.txt', content: 'x\n' }, { owner: 's' })).isError).toBe(false);
    expect((await sandbox.commit()).conflicts).toEqual([]);
    expect(await readFile(join(p.root, 'b.txt'), 'utf8')).toBe('x\n');
    await sandbox.close();
  });
});
