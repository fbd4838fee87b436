import { spawn } from 'node:child_process';
import { mkdir, open, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { AUDIT_FILE, auditPlugin, createHarness, createJsonlAuditLog, type AuditRecord } from '../../src/harness/index.js';
import { fsTools } from '../../src/tools/index.js';
import { MAIN_JS, REPO, ensureBuilt, project, removeTemps, serve, tempDir } from './helpers.js';

afterAll(removeTemps);

async function run(argv: string[]) {
  let out = '';
  let err = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const io: Io = { stdout: stream((s) => (out += s)), stderr: stream((s) => (err += s)), env: {}, cwd: REPO };
  const code = await main(argv, io);
  return { code, stdout: out, stderr: err };
}

/** A sandbox where 'agent-1' wrote, edited (once refused) and read through an audited harness. */
async function audited() {
  const p = await project({ 'src/a.ts': 'one\n', 'README.md': '# r\n' });
  const fs = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state });
  const ctx = createHarness({ fs, plugins: [auditPlugin({ log: createJsonlAuditLog({ file: join(p.state, AUDIT_FILE) }) }), fsTools()] });
  const as = (owner: string | object) => ({ owner });
  await ctx.tools.execute('write', { file_path: 'src/b.ts', content: 'secret text\n' }, as('agent-1'));
  await ctx.tools.execute('edit', { file_path: 'src/a.ts', old_string: 'one', new_string: 'two' }, as('agent-1'));
  await ctx.tools.execute('edit', { file_path: 'src/a.ts', old_string: 'zzz', new_string: 'x' }, as({ id: 'agent-2' }));
  await ctx.tools.execute('read', { file_path: 'README.md' }, as({}));
  return { ...p, args: ['--root', p.root, '--state', p.state] };
}

describe('dsh-fs log', () => {
  it('prints one line per call: time, owner, tool, outcome, paths with versions before→after', async () => {
    const p = await audited();
    const r = await run(['log', ...p.args]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => l.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z {2}/, 'TIME  ').replace(/ +/g, ' '));
    expect(lines).toEqual([
      expect.stringMatching(/^TIME agent-1 write ok src\/b\.ts -→[\w-]{10}$/),
      expect.stringMatching(/^TIME agent-1 edit ok src\/a\.ts ([\w-]{10})→(?!\1)[\w-]{10}$/),
      expect.stringMatching(/^TIME agent-2 edit FS_EDIT_NOT_FOUND src\/a\.ts ([\w-]{10})→\1$/),
      expect.stringMatching(/^TIME - read ok README\.md ([\w-]{10})→\1$/),
    ]);
    expect(r.stdout).not.toContain('secret');
  });

  it('filters by path, owner, tool and time, and prints JSON with full versions and redacted contents', async () => {
    const p = await audited();
    const tools = async (...extra: string[]) => {
      const r = await run(['log', ...p.args, '--json', ...extra]);
      expect(r.code).toBe(0);
      return (JSON.parse(r.stdout) as { records: AuditRecord[] }).records.map((x) => `${x.tool}:${x.outcome}`);
    };
    expect(await tools('--path', 'src/a.ts')).toEqual(['edit:ok', 'edit:FS_EDIT_NOT_FOUND']);
    expect(await tools('--path', 'src')).toEqual(['write:ok', 'edit:ok', 'edit:FS_EDIT_NOT_FOUND']);
    expect(await tools('--owner', 'agent-2')).toEqual(['edit:FS_EDIT_NOT_FOUND']);
    expect(await tools('--tool', 'read')).toEqual(['read:ok']);
    expect(await tools('--limit', '1')).toEqual(['read:ok']);
    expect(await tools('--since', '2999-01-01')).toEqual([]);
    expect(await tools('--until', '2999-01-01')).toHaveLength(4);
    const r = await run(['log', ...p.args, '--json', '--tool', 'write']);
    const [rec] = (JSON.parse(r.stdout) as { records: AuditRecord[] }).records;
    expect(rec!.args).toEqual({ file_path: 'src/b.ts', content: { bytes: 12, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(rec!.paths).toEqual([{ path: 'src/b.ts', before: null, after: expect.stringMatching(/^sha256:/) }]);
  });

  it('says so when nothing is recorded, and refuses a bad time or limit (exit 2)', async () => {
    const p = await project({ 'a.txt': 'a\n' });
    expect((await run(['log', '--root', p.root, '--state', p.state])).stdout).toBe('No tool calls recorded.\n');
    expect((await run(['log', '--root', p.root, '--state', p.state, '--since', 'yesterday'])).code).toBe(2);
    expect((await run(['log', '--root', p.root, '--state', p.state, '--limit', '-1'])).code).toBe(2);
    expect((await run(['log', '--root', p.root, '--state', p.state, '--audit-file', 'x.jsonl'])).code).toBe(2);
    expect((await run(['log', '--help'])).stdout).toContain('Usage: dsh-fs log');
  });
});

describe('dsh-fs serve and the audit log', () => {
  beforeAll(ensureBuilt, 600_000);

  it('records every tool call by default, and none with --no-audit', { timeout: 120_000 }, async () => {
    const p = await project({ 'a.txt': 'a\n' });
    const served = await serve(['--root', p.root, '--state', p.state]);
    try {
      await served.call('read', { file_path: 'a.txt' });
      await served.call('write', { file_path: 'a.txt', content: 'b\n' });
      await served.call('delete', { file_path: 'nope.txt' });
    } finally {
      await served.close();
    }
    const r = await run(['log', '--root', p.root, '--state', p.state, '--json']);
    const records = (JSON.parse(r.stdout) as { records: AuditRecord[] }).records;
    expect(records.map((x) => [x.tool, x.outcome])).toEqual([
      ['read', 'ok'],
      ['write', 'ok'],
      ['delete', 'FS_NOT_FOUND'],
    ]);
    expect(new Set(records.map((x) => x.owner)).size).toBe(1);
    expect(records[0]!.owner).toMatch(/^mcp-session-/);
    expect(records[1]!.paths[0]!.before).toBe(records[0]!.paths[0]!.after);

    const q = await project({ 'a.txt': 'a\n' });
    const quiet = await serve(['--root', q.root, '--state', q.state, '--no-audit']);
    try {
      await quiet.call('read', { file_path: 'a.txt' });
      expect(quiet.stderr()).toContain('audit log off');
    } finally {
      await quiet.close();
    }
    expect((await run(['log', '--root', q.root, '--state', q.state])).stdout).toBe('No tool calls recorded.\n');

    // Direct mode over a directory: recorded only to a file the user names.
    const d = await project({ 'a.txt': 'a\n' });
    const file = join(d.base, 'calls.jsonl');
    const direct = await serve(['--root', d.root, '--mode', 'direct', '--audit-file', file]);
    try {
      await direct.call('read', { file_path: 'a.txt' });
    } finally {
      await direct.close();
    }
    const lines = (await run(['log', '--root', d.root, '--audit-file', file])).stdout.trimEnd().split('\n');
    expect(lines).toEqual([expect.stringMatching(/ mcp-session-\S+ {2}read {2}ok {2}a\.txt ([\w-]{10})→\1$/)]);
  });
});

describe('dsh-fs serve --sqlite and the audit log', () => {
  beforeAll(ensureBuilt, 600_000);

  it('records to the file\'s dsh_fs_audit table, per sandbox; log reads one sandbox or all', { timeout: 120_000 }, async () => {
    const file = join(await tempDir(), 'ws.db');
    const args = ['--sqlite', file, '--workspace', 'w'];
    for (const [extra, path] of [[['--sandbox', 's1'], '/a.txt'], [['--mode', 'direct'], '/b.txt']] as const) {
      const served = await serve([...args, ...extra]);
      try {
        await served.call('write', { file_path: path, content: 'x\n' });
      } finally {
        await served.close();
      }
    }
    const records = async (...extra: string[]) =>
      (JSON.parse((await run(['log', ...args, ...extra, '--json'])).stdout) as { records: AuditRecord[] }).records.map((r) => r.paths[0]!.path);
    expect(await records('--sandbox', 's1')).toEqual(['a.txt']);
    expect(await records()).toEqual(['a.txt', 'b.txt']);
    expect(await records('--path', '/b.txt')).toEqual(['b.txt']);
  });
});

/** The fenced block of `section` in docs/history.md that follows the line matching `after`. */
function blockAfter(doc: string, section: string, after: RegExp): string {
  const body = doc.slice(doc.indexOf(`## ${section}`));
  const at = body.search(after);
  const open = body.indexOf('```', at);
  const start = body.indexOf('\n', open) + 1;
  return body.slice(start, body.indexOf('\n```', start) + 1);
}

/** Runs node with stdout and stderr on one file, as `2>&1` in a terminal: the output in the order written. */
async function execNode(args: string[], cwd: string): Promise<string> {
  const file = join(cwd, '.out');
  const handle = await open(file, 'w');
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', handle.fd, handle.fd] });
      child.on('error', reject);
      child.on('exit', resolve);
    });
    const out = await readFile(file, 'utf8');
    if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}: ${out}`);
    return out;
  } finally {
    await handle.close();
  }
}

describe('docs/history.md, "A session, scripted"', () => {
  beforeAll(ensureBuilt, 600_000);

  it('runs as documented: the same commands give the documented output, times aside', { timeout: 180_000 }, async () => {
    const doc = await readFile(join(REPO, 'docs/history.md'), 'utf8');
    const agent = blockAfter(doc, 'A session, scripted', /^```js$/m);
    const transcript = blockAfter(doc, 'A session, scripted', /captured from a run/);
    expect(agent).toMatch(/^\/\/ agent\.mjs/);
    expect(transcript).toContain('$ dsh-fs log --root shop --state state\n');

    const dir = await realpath(await tempDir('dsh-fs-session-'));
    await mkdir(join(dir, 'node_modules'));
    await symlink(REPO, join(dir, 'node_modules', 'dsh-fs'));
    await writeFile(join(dir, 'agent.mjs'), agent);
    await mkdir(join(dir, 'shop/src'), { recursive: true });
    await writeFile(join(dir, 'shop/src/total.js'), 'export function total(items) {\n  let sum = 0;\n  for (const item of items) sum += item;\n  return sum;\n}\n');
    await writeFile(join(dir, 'shop/README.md'), '# shop\n');

    let actual = '';
    for (const line of transcript.split('\n').filter((l) => l.startsWith('$ '))) {
      const [cmd, ...args] = line.slice(2).split(' ');
      actual += `${line}\n`;
      actual += cmd === 'node' ? await execNode(args, dir) : await execNode([MAIN_JS, ...args], dir);
    }
    const normal = (text: string) => text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, 'TIME');
    expect(normal(actual.replaceAll(join(dir, 'shop'), '/tmp/demo/shop'))).toBe(normal(transcript));
  });
});
