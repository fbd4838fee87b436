import { spawn } from 'node:child_process';
import { hash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, realpath, stat, truncate, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { png } from '../tools/images.js';
import { MAIN_JS, REPO, codeOf, ensureBuilt, project, removeTemps, runCli, serve, tempDir, textOf, type Served } from './helpers.js';

beforeAll(ensureBuilt, 600_000);
afterAll(removeTemps);

const open: Served[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

async function start(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const s = await serve(args, env);
  open.push(s);
  return s;
}

const SAMPLE = {
  'src/app.ts': 'export const answer = 41;\nexport const name = "app";\n',
  'notes.txt': 'one\ntwo\n',
  'win.ini': '[a]\r\nx = 1\r\n',
};

describe('dsh-fs serve: tools and schemas', () => {
  it('lists read, write and edit with strict JSON Schemas', async () => {
    const { root, state } = await project(SAMPLE);
    const s = await start(['--root', root, '--state', state]);
    const { tools } = await s.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].slice(0, 3)).toEqual(['read', 'write', 'edit']);

    const read = byName.get('read')!;
    expect(read.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['file_path'],
      properties: { file_path: { type: 'string' }, offset: { type: 'integer', minimum: 1 }, limit: { type: 'integer', minimum: 1 } },
    });
    expect(Object.keys(read.inputSchema.properties ?? {})).toEqual(['file_path', 'offset', 'limit']);
    expect(read.annotations?.readOnlyHint).toBe(true);

    expect(byName.get('write')!.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['file_path', 'content'],
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
    });
    const edit = byName.get('edit')!;
    expect(edit.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: { old_string: { type: 'string', minLength: 1 }, new_string: { type: 'string' }, replace_all: { type: 'boolean' } },
    });
    // replace_all has a default, so a caller may leave it out.
    // old_string and new_string, or edits: the tool checks which.
    expect(edit.inputSchema.required).toEqual(['file_path']);
    for (const t of tools) expect(t.description?.length ?? 0).toBeGreaterThan(40);
    expect(s.client.getInstructions()).toContain(await realpath(root));
  });

  it('round-trips read, edit and write, with the structured value beside the text', async () => {
    const { root, state } = await project(SAMPLE);
    const real = await realpath(root);
    const s = await start(['--root', root, '--state', state]);

    const read = await s.call('read', { file_path: 'src/app.ts' });
    expect(read.isError).toBeFalsy();
    expect(textOf(read)).toBe(
      `<path>${real}/src/app.ts</path>\n<type>file</type>\n<content>\n1: export const answer = 41;\n2: export const name = "app";\n\n(End of file - total 2 lines)\n</content>`,
    );
    expect(read.structuredContent).toMatchObject({ path: `${real}/src/app.ts`, totalLines: 2, offset: 1, bom: false });
    expect((read.structuredContent as { lines: unknown[] }).lines).toEqual([
      { number: 1, text: 'export const answer = 41;' },
      { number: 2, text: 'export const name = "app";' },
    ]);
    const readVersion = (read.structuredContent as { version: string }).version;
    expect(readVersion).toMatch(/^sha256:/);

    const edit = await s.call('edit', { file_path: 'src/app.ts', old_string: '41', new_string: '42' });
    expect(edit.isError).toBeFalsy();
    expect(textOf(edit)).toBe(`Edited "${real}/src/app.ts": 1 replacement; changed line 1.`);
    expect(edit.structuredContent).toMatchObject({ replacements: 1, replaceAll: false, lines: [{ start: 1, end: 1 }] });
    expect((edit.structuredContent as { version: string }).version).not.toBe(readVersion);

    // After its own edit the session may overwrite without reading again.
    const write = await s.call('write', { file_path: 'src/app.ts', content: 'export const answer = 43;\n' });
    expect(textOf(write)).toBe(`Updated "${real}/src/app.ts" (26 bytes).`);
    expect(write.structuredContent).toMatchObject({ operation: 'update', bytes: 26 });

    const created = await s.call('write', { file_path: 'new/dir/file.md', content: '# hi\n' });
    expect(textOf(created)).toBe(`Created "${real}/new/dir/file.md" (5 bytes).`);

    const again = await s.call('read', { file_path: `${real}/src/app.ts`, offset: 1, limit: 1 });
    expect((again.structuredContent as { lines: { text: string }[] }).lines[0]!.text).toBe('export const answer = 43;');

    // A CRLF file keeps its line endings through an LF edit.
    await s.call('read', { file_path: 'win.ini' });
    const crlf = await s.call('edit', { file_path: 'win.ini', old_string: '[a]\nx = 1', new_string: '[a]\nx = 2\ny = 3' });
    expect(crlf.isError).toBeFalsy();
    const bytes = await s.call('read', { file_path: 'win.ini' });
    expect((bytes.structuredContent as { lines: { text: string }[] }).lines.map((l) => l.text)).toEqual(['[a]', 'x = 2', 'y = 3']);

    // Sandbox: the real directory has none of it yet.
    expect(await readFile(join(root, 'src/app.ts'), 'utf8')).toBe(SAMPLE['src/app.ts']);
    expect(existsSync(join(root, 'new'))).toBe(false);
    expect(await readFile(join(root, 'win.ini'), 'utf8')).toBe(SAMPLE['win.ini']);

    const status = await runCli(['status', '--root', root, '--state', state]);
    expect(status.stdout).toBe('A new/dir/file.md\nM src/app.ts\nM win.ini\n');

    const commit = await runCli(['commit', '--root', root, '--state', state]);
    expect(commit.code).toBe(0);
    expect(await readFile(join(root, 'src/app.ts'), 'utf8')).toBe('export const answer = 43;\n');
    expect(await readFile(join(root, 'new/dir/file.md'), 'utf8')).toBe('# hi\n');
    expect(await readFile(join(root, 'win.ini'), 'utf8')).toBe('[a]\r\nx = 2\r\ny = 3\r\n');
    expect((await runCli(['status', '--root', root, '--state', state])).stdout).toBe('No changes.\n');

    // The running server picks up the commit: its session's observations still hold (same bytes, same version).
    const after = await s.call('edit', { file_path: 'src/app.ts', old_string: '43', new_string: '44' });
    expect(after.isError).toBeFalsy();
    expect((await runCli(['status', '--root', root, '--state', state])).stdout).toBe('M src/app.ts\n');
    expect(await readFile(join(root, 'src/app.ts'), 'utf8')).toBe('export const answer = 43;\n');
  });
});

describe('dsh-fs serve: the observation policy over MCP', () => {
  it('refuses a blind overwrite and an unread edit with FS_NOT_OBSERVED and the remedy', async () => {
    const { root, state } = await project(SAMPLE);
    const real = await realpath(root);
    const s = await start(['--root', root, '--state', state]);

    const write = await s.call('write', { file_path: 'notes.txt', content: 'gone\n' });
    expect(write.isError).toBe(true);
    expect(codeOf(write)).toBe('FS_NOT_OBSERVED');
    expect(textOf(write)).toBe(
      `Error: cannot overwrite "${real}/notes.txt": the file exists and has not been read in this session — read the file first, then retry`,
    );
    expect(write.structuredContent).toBeUndefined();

    const edit = await s.call('edit', { file_path: 'notes.txt', old_string: 'one', new_string: 'uno' });
    expect(codeOf(edit)).toBe('FS_NOT_OBSERVED');
    expect(textOf(edit)).toMatch(/^Error: cannot edit ".*notes\.txt": it has not been read in this session — read the file first, then retry$/);
    expect((await runCli(['status', '--root', root, '--state', state])).stdout).toBe('No changes.\n');
  });

  it('refuses an edit after an outside change with FS_STALE_VERSION and the remedy; a re-read fixes it', async () => {
    const { root, state } = await project(SAMPLE);
    const s = await start(['--root', root, '--state', state]);
    await s.call('read', { file_path: 'notes.txt' });
    await writeFile(join(root, 'notes.txt'), 'one\ntwo\nthree\n');

    const stale = await s.call('edit', { file_path: 'notes.txt', old_string: 'two', new_string: 'deux' });
    expect(stale.isError).toBe(true);
    expect(codeOf(stale)).toBe('FS_STALE_VERSION');
    expect(textOf(stale)).toMatch(/^Error: cannot edit ".*notes\.txt": .*changed.* — re-read the file, then retry$/);

    const staleWrite = await s.call('write', { file_path: 'notes.txt', content: 'x\n' });
    expect(codeOf(staleWrite)).toBe('FS_STALE_VERSION');

    await s.call('read', { file_path: 'notes.txt' });
    const ok = await s.call('edit', { file_path: 'notes.txt', old_string: 'two', new_string: 'deux' });
    expect(ok.isError).toBeFalsy();
    const diff = await runCli(['diff', '--root', root, '--state', state]);
    expect(diff.stdout).toContain('-two\n+deux\n three\n');
  });

  it('keeps sessions apart and shows each the other server’s changes', async () => {
    const { root, state } = await project(SAMPLE);
    const a = await start(['--root', root, '--state', state]);
    const b = await start(['--root', root, '--state', state]);
    await a.call('read', { file_path: 'notes.txt' });
    // A's read does not authorise B.
    expect(codeOf(await b.call('edit', { file_path: 'notes.txt', old_string: 'one', new_string: 'b' }))).toBe('FS_NOT_OBSERVED');
    expect((await a.call('edit', { file_path: 'notes.txt', old_string: 'one', new_string: 'a' })).isError).toBeFalsy();
    // B, started before A's edit, reads the sandbox as A left it.
    const seen = await b.call('read', { file_path: 'notes.txt' });
    expect((seen.structuredContent as { lines: { text: string }[] }).lines.map((l) => l.text)).toEqual(['a', 'two']);
    expect((await b.call('edit', { file_path: 'notes.txt', old_string: 'two', new_string: 'b' })).isError).toBeFalsy();
    // Now A's observation is stale.
    expect(codeOf(await a.call('edit', { file_path: 'notes.txt', old_string: 'a', new_string: 'c' }))).toBe('FS_STALE_VERSION');
    expect((await runCli(['diff', '--root', root, '--state', state])).stdout).toContain('-one\n-two\n+a\n+b\n');
  });
});

describe('dsh-fs serve: invalid arguments', () => {
  it('rejects unknown keys, wrong types and missing arguments as FS_INVALID_ARGUMENT, writing nothing', async () => {
    const { root, state } = await project(SAMPLE);
    const s = await start(['--root', root, '--state', state]);
    await s.call('read', { file_path: 'notes.txt' });

    const cases: [string, unknown, string][] = [
      ['read', { file_path: 'notes.txt', pages: 2 }, 'Error: invalid arguments for read: unknown argument "pages"; allowed arguments: file_path, offset, limit'],
      ['read', { file_path: 'notes.txt', offset: '5' }, 'Error: invalid arguments for read: argument "offset" must be a number, got the string "5"'],
      ['read', { file_path: 'notes.txt', offset: 0 }, 'Error: invalid arguments for read: argument "offset": must be 1 or more (line numbers start at 1)'],
      ['write', { file_path: 'notes.txt' }, 'Error: invalid arguments for write: missing required argument "content"'],
      ['write', { file_path: 'notes.txt', content: 7 }, 'Error: invalid arguments for write: argument "content" must be a string, got a number'],
      ['edit', { file_path: 'notes.txt', old_string: 'one', new_string: 'x', replace_all: 'yes' }, 'Error: invalid arguments for edit: argument "replace_all" must be a boolean, got the string "yes"'],
      ['edit', { file_path: 'notes.txt', old_string: '', new_string: 'x' }, 'Error: invalid arguments for edit: argument "old_string": must not be empty (to create a file, use write)'],
      ['edit', { file_path: 'notes.txt', oldString: 'one', old_string: 'one', new_string: 'x' }, 'Error: invalid arguments for edit: unknown argument "oldString"; allowed arguments: file_path, old_string, new_string, replace_all, edits'],
    ];
    for (const [name, args, text] of cases) {
      const result = await s.call(name, args);
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(textOf(result)).toBe(text);
      expect(codeOf(result)).toBe('FS_INVALID_ARGUMENT');
    }
    // An unknown tool is a protocol error (JSON-RPC InvalidParams), not a tool result.
    await expect(s.call('chmod', { file_path: 'notes.txt' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/unknown tool "chmod"; available tools: read, write, edit, list, glob, grep, move, delete/),
    });
    expect((await runCli(['status', '--root', root, '--state', state])).stdout).toBe('No changes.\n');
  });
});

describe('dsh-fs commit conflicts', () => {
  it('exits 1, reports the conflicting file and overwrites nothing; the other file is committed', async () => {
    const { root, state } = await project(SAMPLE);
    const s = await start(['--root', root, '--state', state]);
    await s.call('read', { file_path: 'notes.txt' });
    await s.call('edit', { file_path: 'notes.txt', old_string: 'one', new_string: 'sandbox' });
    await s.call('write', { file_path: 'added.txt', content: 'new\n' });
    await writeFile(join(root, 'notes.txt'), 'someone else\n');

    const commit = await runCli(['commit', '--root', root, '--state', state]);
    expect(commit.code).toBe(1);
    expect(commit.stdout).toContain('Committed 1 change to');
    expect(commit.stdout).toContain('  A added.txt\n');
    expect(commit.stdout).toMatch(/1 conflict.*\n  M notes\.txt\n {6}cannot commit ".*notes\.txt": the lower changed/);
    // Progress goes to stderr, one line per file when stderr is not a terminal.
    expect(commit.stderr).toContain('[1/2] committed added.txt');
    expect(commit.stderr).toContain('[2/2] conflict notes.txt');
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).toBe('someone else\n');
    expect(await readFile(join(root, 'added.txt'), 'utf8')).toBe('new\n');
    expect((await runCli(['status', '--root', root, '--state', state])).stdout).toBe('M notes.txt\n');
    expect(commit.stdout).toContain(`then keep the sandbox's version with:\n  dsh-fs commit --root ${root} --state ${state} --force ${join(root, 'notes.txt')}\n`);

    // After review, --force keeps the sandbox's version and says what it replaced.
    const forced = await runCli(['commit', '--root', root, '--state', state, '--force', 'notes.txt']);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/Committed 1 change to .*:\n  M notes\.txt\n {6}forced: replaced a change made in /);
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).not.toBe('someone else\n');
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).toContain('sandbox');
    expect((await runCli(['status', '--root', root, '--state', state])).stdout).toBe('No changes.\n');
  });
});

describe('dsh-fs serve: modes and state', () => {
  it('direct mode writes to the directory and keeps no state', async () => {
    const { root, base } = await project(SAMPLE);
    const xdg = join(base, 'xdg');
    const s = await start(['--root', root, '--mode', 'direct'], { XDG_STATE_HOME: xdg });
    await s.call('read', { file_path: 'notes.txt' });
    expect((await s.call('edit', { file_path: 'notes.txt', old_string: 'two', new_string: 'zwei' })).isError).toBeFalsy();
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).toBe('one\nzwei\n');
    expect(existsSync(xdg)).toBe(false);
    expect((await s.client.listTools()).tools.find((t) => t.name === 'write')?.annotations?.destructiveHint).toBe(true);
  });

  it('keeps the sandbox in $XDG_STATE_HOME/dsh-fs/<hash of the real root> by default, and review commands find it', async () => {
    const { root, base } = await project(SAMPLE);
    const xdg = join(base, 'xdg');
    const s = await start(['--root', root], { XDG_STATE_HOME: xdg });
    await s.call('write', { file_path: 'fresh.txt', content: 'x\n' });
    const expected = join(xdg, 'dsh-fs', hash('sha256', await realpath(root), 'hex').slice(0, 16));
    expect(existsSync(join(expected, 'overlay.json'))).toBe(true);
    expect(s.stderr()).toContain(expected);
    const status = await runCli(['status', '--root', root], { env: { XDG_STATE_HOME: xdg } });
    expect(status.stdout).toBe('A fresh.txt\n');
    expect(existsSync(join(root, 'fresh.txt'))).toBe(false);
  });

  it('writes nothing but MCP messages to stdout', async () => {
    const { root, state } = await project(SAMPLE);
    const child = spawn(process.execPath, [MAIN_JS, 'serve', '--root', root, '--state', state], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: { file_path: 'notes.txt' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'write', arguments: { file_path: 'notes.txt', content: '' } } },
    ];
    for (const m of messages) child.stdin.write(`${JSON.stringify(m)}\n`);
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    const lines = stdout.split('\n').filter((l) => l !== '');
    expect(lines.map((l) => (JSON.parse(l) as { id: number }).id)).toEqual([1, 2, 3]);
    for (const l of lines) expect(JSON.parse(l)).toMatchObject({ jsonrpc: '2.0' });
    expect(stderr).toContain('stopped: the client closed stdin');
  });

  it('a message over 10 MiB is accepted up to --max-request-bytes, refused past it, and the server goes on', { timeout: 120_000 }, async () => {
    const { root, state } = await project(SAMPLE);
    const big = 'x'.repeat(11 * 1024 * 1024);
    // Default limit (64 MiB): an 11 MiB write is accepted, where the SDK's transport stopped reading.
    const s = await start(['--root', root, '--state', state]);
    const wrote = await s.call('write', { file_path: 'big.txt', content: big });
    expect(wrote.isError, textOf(wrote)).toBeFalsy();
    expect(textOf(await s.call('read', { file_path: 'notes.txt' }))).toContain('1: one');
    await s.close();
    // A lower limit: the oversized call gets a tool error carrying FS_TOO_LARGE, the next call works.
    const t = await start(['--root', root, '--state', state, '--max-request-bytes', '1000000']);
    const refused = await t.call('write', { file_path: 'big2.txt', content: big });
    expect(refused.isError).toBe(true);
    expect(codeOf(refused)).toBe('FS_TOO_LARGE');
    expect(textOf(refused)).toMatch(/^Error: the request is \d+ bytes, over this server's limit of 1000000 bytes \(dsh-fs serve --max-request-bytes\)/);
    expect(textOf(await t.call('read', { file_path: 'notes.txt' }))).toContain('1: one');
    expect(t.stderr()).toMatch(/refused a message of \d+ bytes \(tools\/call\): over the limit of 1000000 bytes/);
    // Another kind of request gets a JSON-RPC error for its id.
    const listing = t.client.listTools({ cursor: 'c'.repeat(2_000_000) });
    await expect(listing).rejects.toThrow(/over this server's limit of 1000000 bytes/);
    expect((await t.client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('a binary file past 2 GiB is refused in both modes, and the server goes on', { timeout: 120_000 }, async () => {
    // Reading such a file into one buffer used to abort the whole process (args[3]->IsInt32()).
    // It is streamed now, and its first byte (NUL) says it is not text.
    const { root, state } = await project(SAMPLE);
    const huge = join(root, 'huge.bin');
    await writeFile(huge, '');
    await truncate(huge, 2 * 1024 ** 3 + 4096);
    for (const mode of [['--state', state], ['--mode', 'direct']]) {
      const s = await start(['--root', root, ...mode]);
      const read = await s.call('read', { file_path: 'huge.bin' });
      expect(codeOf(read), textOf(read)).toBe('FS_NOT_TEXT');
      // Nothing was shown, so nothing observed: the policy refuses the write, whatever the size.
      const write = await s.call('write', { file_path: 'huge.bin', content: 'small' });
      expect(codeOf(write)).toBe('FS_NOT_OBSERVED');
      const edit = await s.call('edit', { file_path: 'huge.bin', old_string: 'a', new_string: 'b' });
      expect(edit.isError).toBe(true);
      expect(textOf(await s.call('read', { file_path: 'notes.txt' }))).toContain('1: one');
      await s.close();
    }
    expect((await stat(huge)).size).toBe(2 * 1024 ** 3 + 4096);
  });

  it('a raw oversized line with its id at the end, a notification and bad JSON do not stop the server', async () => {
    const { root, state } = await project(SAMPLE);
    const child = spawn(process.execPath, [MAIN_JS, 'serve', '--root', root, '--state', state, '--max-request-bytes', '4096'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const tricky = '{"id": 99, "x": "}\\"'.repeat(1000);
    const lines = [
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'read', arguments: { file_path: tricky } }, id: 'late-id' }),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'x'.repeat(10_000) } }),
      '{ not json',
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: { file_path: 'notes.txt' } } }),
    ];
    // In small pieces, so that lines span chunks.
    const all = `${lines.join('\n')}\n`;
    for (let i = 0; i < all.length; i += 1000) child.stdin.write(all.slice(i, i + 1000));
    child.stdin.end();
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(code, stderr).toBe(0);
    const replies = stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { id: unknown; result?: CallToolResult });
    const byId = new Map(replies.map((r) => [r.id, r]));
    expect([...byId.keys()].sort()).toEqual([1, 2, 'late-id']);
    expect(byId.get('late-id')!.result).toMatchObject({ isError: true, _meta: { 'dsh-fs/error': { code: 'FS_TOO_LARGE' } } });
    expect(textOf(byId.get(2)!.result!)).toContain('1: one');
    expect(stderr).toMatch(/refused a message of \d+ bytes \(notifications\/cancelled\)/);
  });

  it('exits 1 with a message when the state directory belongs to another root', async () => {
    const one = await project(SAMPLE);
    const other = await project(SAMPLE);
    const s = await start(['--root', one.root, '--state', one.state]);
    await s.call('write', { file_path: 'x.txt', content: 'x' });
    const run = await runCli(['status', '--root', other.root, '--state', one.state]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^dsh-fs: the overlay state in ".*" belongs to a lower rooted at ".*", not ".*" \(FS_INVALID_ARGUMENT\)\n$/);
    expect(run.stdout).toBe('');
    const base = await tempDir();
    expect((await runCli(['serve', '--root', base, '--state', one.state])).code).toBe(1);
  });
});

describe('docs/cli.md', () => {
  it('its MCP client configuration starts a working server, and its review commands run', async () => {
    const docs = await readFile(join(REPO, 'docs/cli.md'), 'utf8');
    const { root, base } = await project(SAMPLE);
    const xdg = join(base, 'xdg');
    const fill = (s: string) => s.replaceAll('/absolute/path/to/dsh-fs', resolve(REPO)).replaceAll('/absolute/path/to/project', root);

    const json = /```json\n([\s\S]*?)```/.exec(docs)?.[1];
    const config = JSON.parse(fill(json!)) as { mcpServers: Record<string, { command: string; args: string[] }> };
    const entry = config.mcpServers['dsh-fs']!;
    expect(entry.command).toBe('node');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: entry.args,
      env: { ...(process.env as Record<string, string>), XDG_STATE_HOME: xdg },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'docs', version: '0' });
    await client.connect(transport);
    try {
      await client.callTool({ name: 'read', arguments: { file_path: 'notes.txt' } });
      const edit = (await client.callTool({ name: 'edit', arguments: { file_path: 'notes.txt', old_string: 'two', new_string: '2' } })) as CallToolResult;
      expect(edit.isError).toBeFalsy();
    } finally {
      await client.close();
    }

    const commands = [...docs.matchAll(/^node dist\/cli\/main\.js (status|diff|commit) +(.*)$/gm)].map((m) => [m[1]!, ...fill(m[2]!).split(' ')]);
    expect(commands.map((c) => c[0])).toEqual(['status', 'diff', 'commit']);
    const outputs = [];
    for (const argv of commands) {
      const r = await runCli(argv, { env: { XDG_STATE_HOME: xdg } });
      expect(r.code, argv.join(' ')).toBe(0);
      outputs.push(r.stdout);
    }
    expect(outputs[0]).toBe('M notes.txt\n');
    expect(outputs[1]).toContain('-two\n+2\n');
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).toBe('one\n2\n');
  });
});

describe('dsh-fs serve: list, images, move and delete, reviewed then committed', () => {
  it('lists, reads an image, moves and deletes in a sandbox; diff shows the rename and the deletion; commit applies them', async () => {
    const { root, state } = await project({ ...SAMPLE, 'old.txt': 'to be removed\n', 'docs/guide.md': '# guide\n', '.gitignore': 'build/\n', 'build/out.js': 'x\n' });
    const image = png(4, 3);
    await writeFile(join(root, 'pixel.dat'), image);
    const real = await realpath(root);
    const s = await start(['--root', root, '--state', state]);
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(['read', 'write', 'edit', 'list', 'glob', 'grep', 'move', 'delete']);

    const list = await s.call('list', {});
    expect(list.isError).toBeFalsy();
    expect(textOf(list).split('\n').slice(0, 4)).toEqual([`${real}/`, '  docs/', '    guide.md (8 B)', '  src/']);
    expect(textOf(list)).not.toContain('build');
    expect(list.structuredContent).toMatchObject({ ignored: 1 });

    const img = await s.call('read', { file_path: 'pixel.dat' });
    expect(img.isError).toBeFalsy();
    expect(img.content[1]).toEqual({ type: 'image', data: Buffer.from(image).toString('base64'), mimeType: 'image/png' });
    expect(img.structuredContent).toMatchObject({ type: 'image', width: 4, height: 3 });

    // A blind delete is refused; after a read it goes through.
    expect(codeOf(await s.call('delete', { file_path: 'old.txt' }))).toBe('FS_NOT_OBSERVED');
    await s.call('read', { file_path: 'old.txt' });
    expect((await s.call('delete', { file_path: 'old.txt' })).isError).toBeFalsy();
    const moved = await s.call('move', { from_path: 'notes.txt', to_path: 'docs/notes.txt' });
    expect(textOf(moved)).toBe(`Moved "${real}/notes.txt" to "${real}/docs/notes.txt".`);

    // Nothing reached the directory yet.
    expect(await readFile(join(root, 'old.txt'), 'utf8')).toBe('to be removed\n');
    expect(existsSync(join(root, 'docs/notes.txt'))).toBe(false);

    const status = await runCli(['status', '--root', root, '--state', state, '--json']);
    expect(JSON.parse(status.stdout).changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'old.txt', kind: 'deleted' }),
        expect.objectContaining({ path: 'docs/notes.txt', kind: 'renamed', from: 'notes.txt' }),
      ]),
    );
    const diff = await runCli(['diff', '--root', root, '--state', state, '--color', 'never']);
    expect(diff.stdout).toContain('diff --git a/notes.txt b/docs/notes.txt\nsimilarity index 100%\nrename from notes.txt\nrename to docs/notes.txt\n');
    expect(diff.stdout).toContain('diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n');

    await s.close();
    open.splice(open.indexOf(s), 1);
    const commit = await runCli(['commit', '--root', root, '--state', state]);
    expect(commit.code, commit.stderr).toBe(0);
    expect(existsSync(join(root, 'old.txt'))).toBe(false);
    expect(existsSync(join(root, 'notes.txt'))).toBe(false);
    expect(await readFile(join(root, 'docs/notes.txt'), 'utf8')).toBe(SAMPLE['notes.txt']);
    expect((await runCli(['status', '--root', root, '--state', state])).stdout).toBe('No changes.\n');
  });

  it('serves move and delete in direct mode only with --allow-delete', async () => {
    const { root } = await project(SAMPLE);
    const plain = await start(['--root', root, '--mode', 'direct']);
    expect((await plain.client.listTools()).tools.map((t) => t.name)).not.toContain('delete');
    expect(plain.stderr()).toMatch(/move and delete off, --allow-delete serves them/);
    expect(plain.client.getInstructions()).not.toMatch(/delete tools/);
    const allowed = await start(['--root', root, '--mode', 'direct', '--allow-delete']);
    const tools = (await allowed.client.listTools()).tools;
    expect(tools.map((t) => t.name).slice(-2)).toEqual(['move', 'delete']);
    // The instructions tell the model about them only when they are served.
    expect(allowed.client.getInstructions()).toMatch(/move and delete tools/);
    // Direct mode: they change the directory, and say so.
    expect(tools.find((t) => t.name === 'delete')!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    await allowed.call('read', { file_path: 'notes.txt' });
    expect((await allowed.call('delete', { file_path: 'notes.txt' })).isError).toBeFalsy();
    expect(existsSync(join(root, 'notes.txt'))).toBe(false);
  });
});
