import { zodFunction } from 'openai/helpers/zod';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createHarness, type FsErrorCode, type ToolResult } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import {
  editSchema,
  fsTools,
  readSchema,
  searchTools,
  toOpenAIStrictSchema,
  toolDefinitions,
  writeSchema,
  isImageValue,
  type ReadResultValue,
  type ReadValue,
} from '../../src/tools/index.js';
import { grepSchema } from '../../src/tools/search.js';
import { globSchema } from '../../src/tools/search.js';

type Json = Record<string, unknown>;

const NAMES = ['read', 'write', 'edit', 'list', 'glob', 'grep'];

function setup(files: Record<string, string> = {}) {
  const fs = createMemoryFs({ cwd: '/w', files });
  const ctx = createHarness({ fs, plugins: [createObservationPolicy(), fsTools(), searchTools()] });
  return { fs, ctx, run: (name: string, args: unknown) => ctx.tools.execute(name, args, { owner: 'o' }) };
}

/** Every schema node in a JSON Schema, with its path. */
function* nodes(schema: Json, path = '#'): Generator<[string, Json]> {
  yield [path, schema];
  for (const [key, value] of Object.entries((schema.properties as Record<string, Json> | undefined) ?? {})) yield* nodes(value, `${path}/${key}`);
  if (schema.items) yield* nodes(schema.items as Json, `${path}/items`);
  for (const [i, b] of ((schema.anyOf as Json[] | undefined) ?? []).entries()) yield* nodes(b, `${path}/anyOf/${i}`);
}

const STRICT_SUBSET = new Set([
  'type', 'description', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', '$defs', '$ref',
  'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems',
]);

describe('toolDefinitions({ format })', () => {
  it('anthropic (the default): { name, description, input_schema } for every tool', () => {
    const defs = toolDefinitions({ format: 'anthropic' });
    expect(defs.map((d) => d.name)).toEqual(NAMES);
    expect(toolDefinitions()).toEqual(defs);
    for (const d of defs) {
      expect(Object.keys(d).sort()).toEqual(['description', 'input_schema', 'name']);
      expect(d.input_schema).not.toHaveProperty('$schema');
    }
  });

  it('openai: { type: "function", function: { name, description, parameters } }, the listing schema as is', () => {
    // The openai package's own type for a Chat Completions tool accepts both OpenAI formats.
    const defs: ChatCompletionFunctionTool[] = toolDefinitions({ format: 'openai' });
    const strict: ChatCompletionFunctionTool[] = toolDefinitions({ format: 'openai-strict' });
    expect(strict).toHaveLength(NAMES.length);
    const anthropic = toolDefinitions();
    expect(defs.map((d) => d.type)).toEqual(NAMES.map(() => 'function'));
    expect(defs.map((d) => d.function.name)).toEqual(NAMES);
    for (const [i, d] of defs.entries()) {
      expect(Object.keys(d.function).sort()).toEqual(['description', 'name', 'parameters']);
      expect(d.function.parameters).toEqual(anthropic[i]!.input_schema);
    }
  });

  it('openai-strict: every property required, optional ones nullable, no extra keys, only strict keywords', () => {
    const defs = toolDefinitions({ format: 'openai-strict' });
    const anthropic = toolDefinitions();
    for (const [i, d] of defs.entries()) {
      expect(d.function.strict).toBe(true);
      const params = d.function.parameters;
      const props = params.properties as Record<string, Json>;
      expect(params.required).toEqual(Object.keys(props));
      expect(params.additionalProperties).toBe(false);
      const optional = Object.keys(props).filter((k) => !((anthropic[i]!.input_schema.required as string[] | undefined) ?? []).includes(k));
      for (const key of Object.keys(props)) {
        const types = props[key]!.type as string | string[];
        expect(Array.isArray(types) && types.includes('null'), `${d.function.name}.${key}`).toBe(optional.includes(key));
      }
      for (const [path, node] of nodes(params)) {
        for (const keyword of Object.keys(node)) {
          expect(STRICT_SUBSET.has(keyword), `${d.function.name} ${path}: ${keyword}`).toBe(true);
        }
      }
    }
    const read = defs.find((d) => d.function.name === 'read')!.function.parameters.properties as Record<string, Json>;
    expect(read.offset!.type).toEqual(['integer', 'null']);
    expect(read.file_path).not.toHaveProperty('minLength');
  });

  it('toOpenAIStrictSchema makes nested objects strict and nullable anyOf/enum branches', () => {
    const out = toOpenAIStrictSchema({
      type: 'object',
      properties: {
        a: { type: 'string', default: 'x', minLength: 2, title: 'A' },
        b: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        c: { type: 'string', enum: ['x', 'y'] },
        d: { type: 'object', properties: { e: { type: 'number' } }, required: ['e'] },
      },
      required: ['d'],
    });
    expect(out).toEqual({
      type: 'object',
      properties: {
        a: { type: ['string', 'null'] },
        b: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
        c: { type: ['string', 'null'], enum: ['x', 'y', null] },
        d: { type: 'object', properties: { e: { type: 'number' } }, required: ['e'], additionalProperties: false },
      },
      required: ['a', 'b', 'c', 'd'],
      additionalProperties: false,
    });
  });

  it('refuses an unknown format with an FsError', () => {
    expect(() => toolDefinitions({ format: 'gemini' as 'openai' })).toThrow(expect.objectContaining({ name: 'FsError', code: 'FS_INVALID_ARGUMENT' }));
  });
});

describe("OpenAI's zodFunction helper", () => {
  it('accepts every exported schema, making optional arguments nullable', () => {
    const schemas = { read: readSchema, write: writeSchema, edit: editSchema, glob: globSchema, grep: grepSchema };
    for (const [name, parameters] of Object.entries(schemas)) {
      const fn = zodFunction({ name, parameters });
      const params = fn.function.parameters as Json;
      expect(fn.function.strict, name).toBe(true);
      expect(params.required, name).toEqual(Object.keys(params.properties as object));
    }
  });
});

describe('null for an optional argument is taken as left out (strict mode sends it)', () => {
  it('read, edit, glob and grep accept null for each optional argument', async () => {
    const { run } = setup({ 'a.txt': 'one\ntwo\n', 'src/b.ts': 'two\n' });
    const read = await run('read', { file_path: 'a.txt', offset: null, limit: null });
    expect(read.isError).toBe(false);
    expect(read.value).toMatchObject({ offset: 1, totalLines: 2 });
    const edit = await run('edit', { file_path: 'a.txt', old_string: 'one', new_string: 'uno', replace_all: null });
    expect(edit.text).toBe('Edited "/w/a.txt": 1 replacement; changed line 1.');
    expect(edit.value).toMatchObject({ replaceAll: false });
    const glob = await run('glob', { pattern: '*.ts', path: null });
    expect(glob.text).toBe('src/b.ts');
    const grep = await run('grep', { pattern: 'two', path: null, include: null });
    expect(grep.isError).toBe(false);
    expect(grep.value).toMatchObject({ matches: [{ line: 2 }, { line: 1 }] });
  });

  it('a required argument sent as null is still refused', async () => {
    const { run } = setup();
    const r = await run('write', { file_path: 'a', content: null });
    expect(r.isError && r.error.code).toBe('FS_INVALID_ARGUMENT');
    expect(r.text).toBe('Error: invalid arguments for write: argument "content" must be a string, got null');
  });
});

describe('ToolResult types', () => {
  it('is a union on isError, with each built-in tool’s value type', async () => {
    const { run, ctx } = setup({ 'a.txt': 'x\n' });
    const r = await ctx.tools.execute('read', { file_path: 'a.txt' }, { owner: 'o' });
    expectTypeOf(r).toEqualTypeOf<ToolResult<ReadResultValue>>();
    // Narrowing needs no casts under strict mode.
    if (r.isError) {
      expectTypeOf(r.error.code).toEqualTypeOf<FsErrorCode>();
      throw new Error(r.text);
    }
    expectTypeOf(r.value).toEqualTypeOf<ReadResultValue>();
    // An image or lines of text: isImageValue tells them apart.
    if (isImageValue(r.value)) throw new Error('expected text');
    expectTypeOf(r.value).toEqualTypeOf<ReadValue>();
    expect(r.value.lines[0]!.text).toBe('x');
    const missing = await run('read', { file_path: 'nope' });
    if (!missing.isError) throw new Error('expected an error');
    expectTypeOf(missing.value).toEqualTypeOf<undefined>();
    expect(missing.error.code).toBe('FS_NOT_FOUND');
    const other = await ctx.tools.execute('custom-tool', {}, { owner: 'o' });
    expectTypeOf(other).toEqualTypeOf<ToolResult<unknown>>();
  });
});
