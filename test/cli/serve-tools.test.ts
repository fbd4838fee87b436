import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UsageError, parseCommand, parseToolList } from '../../src/cli/args.js';
import { HELP } from '../../src/cli/help.js';
import { codeOf, ensureBuilt, project, removeTemps, runCli, serve, textOf, type Served } from './helpers.js';

beforeAll(ensureBuilt, 600_000);
afterAll(removeTemps);

const open: Served[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

describe('dsh-fs serve --tools', () => {
  it('parses a comma list, once per name, and refuses unknown or empty names', () => {
    expect(parseToolList(undefined, 'serve')).toEqual([]);
    expect(parseToolList('patch', 'serve')).toEqual(['patch']);
    expect(parseToolList('text-editor, patch,patch', 'serve')).toEqual(['text-editor', 'patch']);
    expect(() => parseToolList('patch,vim', 'serve')).toThrow(new UsageError('--tools: unknown tool set "vim"; known: patch, text-editor, review', 'serve'));
    expect(() => parseToolList('patch,', 'serve')).toThrow(/empty name/);
    expect(parseCommand('serve', ['--root', '.', '--tools', 'patch']).values.tools).toBe('patch');
    expect(HELP.serve).toContain('--tools LIST');
  });

  it('an unknown name is a usage error from the binary, before anything is served', async () => {
    const { root, state } = await project({ 'a.txt': 'a\n' });
    const run = await runCli(['serve', '--root', root, '--state', state, '--tools', 'patch,emacs']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('unknown tool set "emacs"; known: patch, text-editor, review');
    const direct = await runCli(['serve', '--root', root, '--mode', 'direct', '--tools', 'patch']);
    expect(direct.code).toBe(2);
    expect(direct.stderr).toContain('add --allow-delete');
  });

  it('serves apply_patch and the text editor beside the usual tools, under the read-first policy', async () => {
    const { root } = await project({ 'a.txt': 'one\ntwo\n', 'b.txt': 'alpha\n' });
    const s = await serve(['--root', root, '--mode', 'direct', '--allow-delete', '--tools', 'patch,text-editor']);
    open.push(s);
    const { tools } = await s.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['read', 'edit', 'apply_patch', 'str_replace_based_edit_tool']));
    expect(tools.find((t) => t.name === 'apply_patch')!.inputSchema.required).toEqual(['input']);
    expect(s.stderr()).toContain('also patch, text-editor');

    const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** Add File: c.txt\n+new\n*** End Patch';
    // Not read yet: refused, and nothing changes.
    const blind = await s.call('apply_patch', { input: patch });
    expect(blind.isError).toBe(true);
    expect(codeOf(blind)).toMatch(/^FS_/);
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('one\ntwo\n');

    expect((await s.call('read', { file_path: 'a.txt' })).isError).toBeFalsy();
    const applied = await s.call('apply_patch', { input: patch });
    expect(applied.isError, textOf(applied)).toBeFalsy();
    expect(applied.structuredContent).toMatchObject({ files: [{ operation: 'update' }, { operation: 'add' }] });
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('one\nTWO\n');
    expect(await readFile(join(root, 'c.txt'), 'utf8')).toBe('new\n');

    const view = await s.call('str_replace_based_edit_tool', { command: 'view', path: 'b.txt' });
    expect(textOf(view)).toContain('alpha');
    const replaced = await s.call('str_replace_based_edit_tool', { command: 'str_replace', path: 'b.txt', old_str: 'alpha', new_str: 'beta' });
    expect(replaced.isError, textOf(replaced)).toBeFalsy();
    expect(await readFile(join(await realpath(root), 'b.txt'), 'utf8')).toBe('beta\n');
  });

  it('without --tools, neither is served', async () => {
    const { root, state } = await project({ 'a.txt': 'a\n' });
    const s = await serve(['--root', root, '--state', state]);
    open.push(s);
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('apply_patch');
    expect(names).not.toContain('str_replace_based_edit_tool');
  });
});
