import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { HELP, MAIN_HELP } from '../../src/cli/help.js';
import { main } from '../../src/cli/main.js';
import { SERVE_TTY_HINT } from '../../src/cli/serve-command.js';
import type { Io } from '../../src/cli/io.js';
import { MAIN_JS, REPO, ensureBuilt, project, removeTemps, runCli, tempDir } from './helpers.js';

beforeAll(ensureBuilt, 600_000);
afterAll(removeTemps);

async function run(argv: string[], cwd = REPO) {
  let out = '';
  let err = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const code = await main(argv, { stdout: stream((s) => (out += s)), stderr: stream((s) => (err += s)), env: {}, cwd });
  return { code, stdout: out, stderr: err };
}

/** A sandbox with an added, a modified and a deleted file. */
async function sandbox(extra: (overlay: Awaited<ReturnType<typeof createOverlayFs>>) => Promise<void> = async () => {}) {
  const p = await project({ 'a.txt': 'one\n', 'gone.txt': 'x\n' });
  const overlay = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state });
  await overlay.writeText(await overlay.resolve('new.txt'), 'new\n');
  await overlay.editText(await overlay.resolve('a.txt'), { oldString: 'one', newString: 'uno' });
  await overlay.remove(await overlay.resolve('gone.txt'));
  await extra(overlay);
  return { ...p, args: ['--root', p.root, '--state', p.state] };
}

describe('--json for diff, commit and discard', () => {
  it('diff --json gives one entry per changed file with its own diff', async () => {
    const p = await sandbox();
    const r = await run(['diff', ...p.args, '--json']);
    expect(r.code).toBe(0);
    const entries = JSON.parse(r.stdout) as { path: string; kind: string; diff: string }[];
    expect(entries.map((e) => [e.path, e.kind])).toEqual([
      ['a.txt', 'modified'],
      ['gone.txt', 'deleted'],
      ['new.txt', 'added'],
    ]);
    expect(entries[0]!.diff).toBe('diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-one\n+uno\n');
    expect(JSON.parse((await run(['diff', ...p.args, '--json', 'new.txt'])).stdout)).toHaveLength(1);
  });

  it('commit --json reports committed files and conflicts, with exit status 1 on a conflict', async () => {
    const p = await sandbox();
    await writeFile(join(p.root, 'a.txt'), 'changed meanwhile\n');
    const r = await run(['commit', ...p.args, '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { committed: unknown[]; conflicts: { path: string; kind: string; code: string }[]; failed: unknown[] };
    expect(report.committed).toEqual([
      { path: 'gone.txt', kind: 'deleted' },
      { path: 'new.txt', kind: 'added' },
    ]);
    expect(report.conflicts).toMatchObject([{ path: 'a.txt', kind: 'modified', code: 'FS_CONFLICT' }]);
    expect(report.failed).toEqual([]);
    const forced = JSON.parse((await run(['commit', ...p.args, '--json', '--force'])).stdout) as unknown;
    expect(forced).toEqual({ committed: [{ path: 'a.txt', kind: 'modified', forced: true }], conflicts: [], failed: [], ignored: [] });
    expect(JSON.parse((await run(['commit', ...p.args, '--json'])).stdout)).toEqual({ committed: [], conflicts: [], failed: [], ignored: [] });
  });

  it('discard --json lists what was dropped', async () => {
    const p = await sandbox();
    const r = await run(['discard', ...p.args, '--json', 'new.txt']);
    expect(JSON.parse(r.stdout)).toEqual({ discarded: [{ path: 'new.txt', kind: 'added' }] });
    expect(JSON.parse((await run(['discard', ...p.args, '--json', 'new.txt'])).stdout)).toEqual({ discarded: [] });
    expect(existsSync(join(p.root, 'gone.txt'))).toBe(true);
  });
});

describe('a closed pipe', () => {
  const pipeToHead = (command: string) =>
    spawnSync('bash', ['-c', `${command} | head -c 10 >/dev/null; echo "status=\${PIPESTATUS[0]}" >&2`], { encoding: 'utf8' });

  it('ends status, status --json and diff quietly with exit status 0 when the reader goes away', { timeout: 120_000 }, async () => {
    // Over 64 KiB of output, written in several writes, so the reader is gone before the end.
    const deep = Array.from({ length: 14 }, (_, i) => `${i}${'d'.repeat(200)}`).join('/');
    const p = await sandbox(async (overlay) => {
      for (let i = 0; i < 30; i++) await overlay.writeText(await overlay.resolve(`${deep}/f${i}.txt`), 'x\n');
      await overlay.writeText(await overlay.resolve('big.txt'), 'line of text\n'.repeat(100_000));
    });
    const cli = `node ${MAIN_JS} `;
    for (const command of ['status', 'status --json', 'diff', 'diff --json']) {
      const r = pipeToHead(`${cli}${command} --root ${p.root} --state ${p.state}`);
      expect(r.stderr, command).toBe('status=0\n');
    }
  });
});

describe('serve started by hand', () => {
  it('prints a one-line hint on stderr when stdin is a terminal', { timeout: 60_000 }, async () => {
    const p = await project({ 'a.txt': 'x\n' });
    // `script` gives the server a terminal as stdin.
    const child = spawn('script', ['-qfec', `node ${MAIN_JS} serve --root ${p.root} --mode direct`, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    try {
      const deadline = Date.now() + 30_000;
      while (!output.includes('serving') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 300));
      expect(output).toContain(`dsh-fs: ${SERVE_TTY_HINT}`);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
    }
  });

  it('prints no hint when an MCP client starts it (stdin is a pipe)', { timeout: 60_000 }, async () => {
    const p = await project({ 'a.txt': 'x\n' });
    const child = spawn(process.execPath, [MAIN_JS, 'serve', '--root', p.root, '--mode', 'direct'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const deadline = Date.now() + 30_000;
    while (!stderr.includes('serving') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    child.stdin.end();
    await new Promise((r) => child.on('close', r));
    expect(stderr).toContain('serving');
    expect(stderr).not.toContain('waiting for an MCP client');
  });
});

describe('help texts', () => {
  it('name the tools served, and every option each command takes', () => {
    expect(MAIN_HELP).toContain('read, write, edit, list, glob and grep');
    expect(HELP.serve).toContain('read, write, edit, list, glob and grep');
    expect(HELP.serve).toContain('--allow-delete');
    expect(`${MAIN_HELP}${HELP.serve}`).not.toMatch(/read, write and edit/);
    for (const command of ['status', 'diff', 'commit', 'discard'] as const) expect(HELP[command]).toContain('--json');
    expect(HELP.demo).toContain('--keep DIR');
  });
});

describe('demo --keep DIR', () => {
  it('keeps the sandbox uncommitted and prints the commands to try next, which work', { timeout: 120_000 }, async () => {
    const dir = join(await tempDir(), 'kept');
    const r = await runCli(['demo', '--keep', dir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const commands = [...r.stdout.matchAll(/^ {2}node \S+ (status|diff|commit) (.*)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(commands.map(([c]) => c)).toEqual(['status', 'diff', 'commit']);
    expect(r.stdout).toMatch(new RegExp(`\\(kept ${dir.replace(/[/.]/g, '\\$&')}\\)\\n$`));
    const [, args] = commands[0]!;
    const status = await runCli(['status', ...args.split(' ')]);
    expect(status.stdout).toBe('A NOTES.md\nM README.md\nM config.ini\nM src/util.js\n');
    expect(await readFile(join(dir, 'project/config.ini'), 'utf8')).toBe('[server]\r\nhost = localhost\r\nport = 8080\r\n');
    const again = await runCli(['demo', '--keep', dir]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/--keep ".*kept" must be an empty or new directory/);
  });
});
