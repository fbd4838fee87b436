import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createHarness, type Tool } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { editSchema, fsTools, readSchema, toolDefinitions, writeSchema } from '../../src/tools/index.js';

function setup(files: Record<string, string> = {}) {
  const fs = createMemoryFs({ cwd: '/w', files });
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools()] });
  const run = (name: string, args: unknown) => ctx.tools.execute(name, args, { owner: 'o' });
  return { fs, ctx, run };
}

const SNAKE = /^[a-z]+(_[a-z]+)*$/;

describe('tool schemas', () => {
  const defs = Object.fromEntries(toolDefinitions().map((d) => [d.name, d]));

  it('defines read, write and edit (and glob and grep unless search is false) with their argument sets', () => {
    expect(toolDefinitions().map((d) => d.name)).toEqual(['read', 'write', 'edit', 'list', 'glob', 'grep']);
    expect(toolDefinitions({ search: false }).map((d) => d.name)).toEqual(['read', 'write', 'edit', 'list']);
    // move and delete only when asked for.
    expect(toolDefinitions({ allowDelete: true }).map((d) => d.name)).toEqual(['read', 'write', 'edit', 'list', 'glob', 'grep', 'move', 'delete']);
    const shape = (name: string) => {
      const s = defs[name]!.input_schema as { properties: Record<string, unknown>; required: string[] };
      return { properties: Object.keys(s.properties), required: s.required };
    };
    expect(shape('read')).toEqual({ properties: ['file_path', 'offset', 'limit'], required: ['file_path'] });
    expect(shape('write')).toEqual({ properties: ['file_path', 'content'], required: ['file_path', 'content'] });
    expect(shape('edit')).toEqual({
      properties: ['file_path', 'old_string', 'new_string', 'replace_all', 'edits'],
      // old_string and new_string, or edits: the tool checks which.
      required: ['file_path'],
    });
    const all = Object.fromEntries(toolDefinitions({ allowDelete: true }).map((d) => [d.name, d.input_schema as { properties: object; required?: string[] }]));
    expect({ properties: Object.keys(all.list!.properties), required: all.list!.required ?? [] }).toEqual({ properties: ['path', 'ignore'], required: [] });
    expect({ properties: Object.keys(all.move!.properties), required: all.move!.required }).toEqual({ properties: ['from_path', 'to_path'], required: ['from_path', 'to_path'] });
    expect({ properties: Object.keys(all.delete!.properties), required: all.delete!.required }).toEqual({ properties: ['file_path'], required: ['file_path'] });
    for (const d of toolDefinitions({ allowDelete: true })) {
      for (const key of Object.keys((d.input_schema as { properties: object }).properties)) expect(key).toMatch(SNAKE);
    }
  });

  it('emits plain JSON Schema objects: no $schema, no extra keys, described arguments', () => {
    for (const d of toolDefinitions()) {
      const s = d.input_schema as { type: string; additionalProperties: boolean; properties: Record<string, { description?: string }> };
      expect(s).not.toHaveProperty('$schema');
      expect(s.type).toBe('object');
      expect(s.additionalProperties).toBe(false);
      for (const [key, prop] of Object.entries(s.properties)) expect(prop.description, `${d.name}.${key}`).toBeTruthy();
      expect(JSON.parse(JSON.stringify(d))).toEqual(d);
    }
    const read = defs.read!.input_schema as { properties: Record<string, Record<string, unknown>> };
    expect(read.properties.offset).toMatchObject({ type: 'integer', minimum: 1 });
    expect(read.properties.limit).toMatchObject({ type: 'integer', minimum: 1 });
    expect((defs.edit!.input_schema as { properties: Record<string, Record<string, unknown>> }).properties.replace_all).toMatchObject({
      type: 'boolean',
      default: false,
    });
  });

  it('states the observation policy in the descriptions', () => {
    expect(defs.write!.description).toMatch(/Creating a new file needs no prior read/);
    expect(defs.write!.description).toMatch(/Replacing an existing file requires that you have read it/);
    expect(defs.edit!.description).toMatch(/Requires that you have read the file \(any part/);
    expect(defs.edit!.description).toMatch(/edit again without re-reading/);
    expect(defs.read!.description).toMatch(/lets you write or edit it afterwards/);
    expect(defs.read!.description).toMatch(/2000 lines and 50 KiB/);
    expect(toolDefinitions({ maxLines: 300, maxBytes: 4096 })[0]!.description).toMatch(/300 lines and 4 KiB/);
  });

  it('defaults replace_all to false', () => {
    expect(editSchema.parse({ file_path: 'a', old_string: 'x', new_string: 'y' }).replace_all).toBe(false);
    expect(editSchema.parse({ file_path: 'a', old_string: 'x', new_string: 'y', replace_all: true }).replace_all).toBe(true);
  });

  it('lists the same tools through the harness registry, registered by one plugin', () => {
    const { ctx } = setup();
    expect(ctx.plugins).toEqual(['observation-policy', 'fs-tools']);
    const listed = ctx.tools.list();
    expect(listed.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))).toEqual(
      toolDefinitions({ search: false }).map((d) => ({ name: d.name, description: d.description, inputSchema: d.input_schema })),
    );
    expect(listed.map((t) => t.title)).toEqual(['Read file', 'Write file', 'Edit file', 'List directory']);
  });

  it('refuses to register the suite twice or over another tool of the same name', () => {
    const { ctx } = setup();
    expect(() => ctx.use(fsTools())).toThrow(/already applied/);
    const other = createHarness({ fs: createMemoryFs() });
    const mine: Tool = { name: 'edit', description: 'mine', schema: writeSchema, execute: async () => 1, render: String };
    other.tools.register(mine);
    expect(() => other.use(fsTools())).toThrow(/"edit" is already registered/);
    // Nothing of the suite was half-registered.
    expect(other.tools.list().map((t) => t.name)).toEqual(['edit']);
    expect(other.tools.get('edit')).toBe(mine);
  });
});

describe('argument validation', () => {
  const expectInvalid = async (result: Promise<{ isError: boolean; text: string; error?: object }>, message: string) => {
    const r = await result;
    expect(r.isError).toBe(true);
    expect(r.error).toEqual({ name: 'FsError', code: 'FS_INVALID_ARGUMENT' });
    expect(r.text).toBe(`Error: ${message}`);
  };

  it('rejects unknown keys, naming them and the allowed ones', async () => {
    const { run } = setup();
    await expectInvalid(
      run('read', { file_path: 'a', pages: '1-2' }),
      'invalid arguments for read: unknown argument "pages"; allowed arguments: file_path, offset, limit',
    );
    await expectInvalid(
      run('edit', { filePath: 'a', oldString: 'x', old_string: 'x', new_string: 'y', file_path: 'a' }),
      'invalid arguments for edit: unknown arguments "filePath", "oldString"; allowed arguments: file_path, old_string, new_string, replace_all, edits',
    );
  });

  it('rejects an empty old_string before anything happens', async () => {
    const { run, fs } = setup({ 'a.txt': 'abc\n' });
    await run('read', { file_path: 'a.txt' });
    await expectInvalid(
      run('edit', { file_path: 'a.txt', old_string: '', new_string: 'x' }),
      'invalid arguments for edit: argument "old_string": must not be empty (to create a file, use write)',
    );
    expect((await fs.readText(await fs.resolve('a.txt'))).text).toBe('abc\n');
  });

  it('rejects identical old_string and new_string before asking the policy', async () => {
    const { run } = setup({ 'a.txt': 'abc\n' });
    await expectInvalid(
      run('edit', { file_path: 'a.txt', old_string: 'a\r\nb', new_string: 'a\nb' }),
      'old_string and new_string are identical; there is nothing to change',
    );
  });

  it('names missing and mistyped arguments', async () => {
    const { run } = setup();
    await expectInvalid(run('write', { file_path: 'a' }), 'invalid arguments for write: missing required argument "content"');
    await expectInvalid(
      run('read', { file_path: 'a', offset: '5' }),
      'invalid arguments for read: argument "offset" must be a number, got the string "5"',
    );
    await expectInvalid(run('read', { file_path: 'a', offset: 1.5 }), 'invalid arguments for read: argument "offset" must be an integer, got the number 1.5');
    await expectInvalid(
      run('read', { file_path: 'a', offset: 0 }),
      'invalid arguments for read: argument "offset": must be 1 or more (line numbers start at 1)',
    );
    await expectInvalid(
      run('read', { file_path: null }),
      'invalid arguments for read: argument "file_path" must be a string, got null',
    );
    await expectInvalid(run('read', { file_path: '' }), 'invalid arguments for read: argument "file_path": must be a non-empty path');
    await expectInvalid(run('edit', { file_path: 'a', old_string: 'x', new_string: 'y', replace_all: 'yes' }),
      'invalid arguments for edit: argument "replace_all" must be a boolean, got the string "yes"');
    await expectInvalid(run('read', null), 'invalid arguments for read: arguments must be a JSON object, got null');
    await expectInvalid(run('read', ['a']), 'invalid arguments for read: arguments must be a JSON object, got an array');
  });

  it('reports every problem of one call together', async () => {
    const { run } = setup();
    await expectInvalid(
      run('edit', { file_path: 3, new_string: 'y', extra: true }),
      'invalid arguments for edit: argument "file_path" must be a string, got a number; unknown argument "extra"; ' +
        'allowed arguments: file_path, old_string, new_string, replace_all, edits; missing required argument "old_string" (or give edits)',
    );
  });

  it('keeps path rules in the seam: NUL bytes and backslashes are refused there', async () => {
    const { run } = setup();
    const nul = await run('write', { file_path: 'a\0b', content: 'x' });
    expect(nul.error?.code).toBe('FS_INVALID_ARGUMENT');
    expect(nul.text).toContain('NUL');
  });

  it('accepts the exported schemas directly', () => {
    expect(readSchema.safeParse({ file_path: '/a', offset: 2, limit: 3 }).success).toBe(true);
    expect(writeSchema.safeParse({ file_path: '/a', content: '' }).success).toBe(true);
    expect(writeSchema.safeParse({ file_path: '/a', content: 'x', mode: 1 }).success).toBe(false);
  });
});
