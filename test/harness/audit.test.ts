import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import {
  auditPlugin,
  createHarness,
  createJsonlAuditLog,
  createMemoryAuditLog,
  digestOf,
  pathsNamed,
  redactArgs,
  type AuditLog,
  type AuditRecord,
} from '../../src/harness/index.js';
import { fsTools, moveDeleteTools, patchTools } from '../../src/tools/index.js';
import { auditRecord, describeAuditLogKit } from './audit-kit.js';

const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-fs-audit-'));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describeAuditLogKit('memory', async () => createMemoryAuditLog());
describeAuditLogKit('JSON lines', async () => createJsonlAuditLog({ file: join(await tempDir(), 'state', 'audit.jsonl') }));

const PATHS = ['a.txt', 'b.txt', 'd/c.txt'];
const TEXTS = ['one\n', 'two\n', 'one two\n'];
type Call = { tool: string; args: Record<string, unknown> };
const call: fc.Arbitrary<Call> = fc.oneof(
  fc.record({ tool: fc.constant('write'), args: fc.record({ file_path: fc.constantFrom(...PATHS), content: fc.constantFrom(...TEXTS) }) }),
  fc.record({
    tool: fc.constant('edit'),
    args: fc.record({ file_path: fc.constantFrom(...PATHS), old_string: fc.constantFrom('one', 'two'), new_string: fc.constantFrom('two', 'three') }),
  }),
  fc.record({ tool: fc.constant('delete'), args: fc.record({ file_path: fc.constantFrom(...PATHS) }) }),
  fc.record({ tool: fc.constant('move'), args: fc.record({ from_path: fc.constantFrom(...PATHS), to_path: fc.constantFrom(...PATHS) }) }),
  fc.record({ tool: fc.constant('read'), args: fc.record({ file_path: fc.constantFrom(...PATHS) }) }),
  fc.record({ tool: fc.constant('write'), args: fc.record({ file_path: fc.constantFrom(...PATHS) }) }), // invalid: no content
  fc.record({ tool: fc.constant('no_such_tool'), args: fc.record({ file_path: fc.constantFrom(...PATHS) }) }),
);

describe('the audit plugin', () => {
  it('records one record per call, in order, with its outcome and the versions stat gives before and after', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 12 }), fc.constantFrom<string | object>('agent-7', { id: 'session-3' }, {}), async (calls, owner) => {
        const fs = createMemoryFs({ cwd: '/w' });
        const log = createMemoryAuditLog();
        const errors: unknown[] = [];
        const ctx = createHarness({ fs, plugins: [auditPlugin({ log, onError: (e) => errors.push(e) }), fsTools(), moveDeleteTools()] });
        const versionsOf = async (paths: string[]) =>
          Promise.all(paths.map(async (p) => (await fs.stat(await fs.resolve(p, { cwd: '/w' })))?.version ?? null));
        for (const [i, c] of calls.entries()) {
          const named = [...new Set(Object.entries(c.args).filter(([k]) => k.endsWith('path')).map(([, v]) => String(v)))];
          const before = await versionsOf(named);
          const result = await ctx.tools.execute(c.tool, c.args, { owner });
          const after = await versionsOf(named);
          expect(log.records).toHaveLength(i + 1);
          const r = log.records[i]!;
          expect(r.tool).toBe(c.tool);
          expect(r.outcome).toBe(result.isError ? result.error.code : 'ok');
          expect(r.owner).toBe(typeof owner === 'string' ? owner : (owner as { id?: string }).id);
          expect(r.paths).toEqual(named.map((p, j) => ({ path: `/w/${p}`, before: before[j], after: after[j] })));
          expect(r.args).toEqual(redactArgs(c.args));
        }
        expect(errors).toEqual([]);
        const times = log.records.map((r) => r.time);
        expect([...times].sort()).toEqual(times);
      }),
      { numRuns: 60 },
    );
  });

  it('never fails a call because the log failed: the error goes to onError and the result is the call’s', async () => {
    const fs = createMemoryFs();
    const failing: AuditLog = { append: async () => Promise.reject(new Error('disk full')), query: async () => [] };
    const errors: [unknown, string][] = [];
    const ctx = createHarness({ fs, plugins: [auditPlugin({ log: failing, onError: (e, info) => errors.push([e, info.tool]) }), fsTools()] });
    const r = await ctx.tools.execute('write', { file_path: '/x.txt', content: 'hi' }, { owner: 'a' });
    expect(r.isError).toBe(false);
    expect((await fs.readText(await fs.resolve('/x.txt'))).text).toBe('hi');
    expect(errors.map(([e, t]) => [(e as Error).message, t])).toEqual([['disk full', 'write']]);
    // A handler that throws as well: still the call's own result.
    const ctx2 = createHarness({ fs, plugins: [auditPlugin({ log: failing, onError: () => { throw new Error('handler'); } }), fsTools()] });
    const warn = console.warn;
    const warned: string[] = [];
    console.warn = (line: string) => warned.push(line);
    try {
      expect((await ctx2.tools.execute('read', { file_path: '/x.txt' }, { owner: 'a' })).isError).toBe(false);
    } finally {
      console.warn = warn;
    }
    expect(warned).toHaveLength(1);
  });

  it('records apply_patch under every path its patch names, moves included', async () => {
    const fs = createMemoryFs();
    await fs.writeText(await fs.resolve('/old.txt'), 'a\n');
    const log = createMemoryAuditLog();
    const ctx = createHarness({ fs, plugins: [auditPlugin({ log }), fsTools(), patchTools()] });
    const input = '*** Begin Patch\n*** Update File: /old.txt\n*** Move to: /new.txt\n@@\n-a\n+b\n*** Add File: /added.txt\n+x\n*** End Patch\n';
    const r = await ctx.tools.execute('apply_patch', { input }, { owner: 'o' });
    expect(r.isError).toBe(false);
    const [rec] = log.records;
    expect(rec!.paths.map((p) => [p.path, p.before === null, p.after === null])).toEqual([
      ['/old.txt', false, true],
      ['/new.txt', true, false],
      ['/added.txt', true, false],
    ]);
    expect(rec!.args).toEqual({ input: digestOf(input) });
  });
});

describe('what a record keeps of the arguments', () => {
  it('replaces contents by name at any depth, and any long string, by their size and SHA-256', () => {
    const long = 'x'.repeat(2000);
    expect(
      redactArgs({ file_path: 'a', content: 'héllo', edits: [{ old_string: 'a', new_string: '' }], pattern: 'TODO', other: long, n: 3 }),
    ).toEqual({
      file_path: 'a',
      content: digestOf('héllo'),
      edits: [{ old_string: digestOf('a'), new_string: digestOf('') }],
      pattern: 'TODO',
      other: digestOf(long),
      n: 3,
    });
    expect(digestOf('héllo').bytes).toBe(6);
    expect(digestOf('abc')).toEqual({ bytes: 3, sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' });
  });

  it('names the paths of the path arguments, each once', () => {
    expect(pathsNamed('move', { from_path: 'a', to_path: 'a' })).toEqual(['a']);
    expect(pathsNamed('grep', { pattern: 'x', path: 'src' })).toEqual(['src']);
    expect(pathsNamed('x', 'not an object')).toEqual([]);
  });
});

describe('the JSON-lines log', () => {
  it('skips a torn last line, and the next append starts a line of its own', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(auditRecord, { minLength: 1, maxLength: 5 }), fc.nat(), auditRecord, async (records, cut, next) => {
        const file = join(await tempDir(), 'audit.jsonl');
        const log = createJsonlAuditLog({ file });
        for (const r of records.slice(0, -1)) await log.append(r);
        // The last append, cut short by a crash: any proper prefix of its line.
        const line = JSON.stringify(records.at(-1));
        await appendFile(file, line.slice(0, cut % line.length));
        expect(await log.query()).toEqual(records.slice(0, -1));
        await log.append(next);
        expect(await log.query()).toEqual([...records.slice(0, -1), next]);
        expect((await readFile(file, 'utf8')).endsWith('\n')).toBe(true);
      }),
      { numRuns: 30 },
    );
  });

  it('reads a missing file as an empty log and skips lines that are not records', async () => {
    const dir = await tempDir();
    expect(await createJsonlAuditLog({ file: join(dir, 'none.jsonl') }).query()).toEqual([]);
    const file = join(dir, 'mixed.jsonl');
    const good: AuditRecord = { time: '2026-12-03T00:00:00.000Z', tool: 'read', args: {}, outcome: 'ok', paths: [] };
    await writeFile(file, `${JSON.stringify(good)}\n{"not":"a record"}\n[1]\n${JSON.stringify(good)}\n`);
    expect(await createJsonlAuditLog({ file }).query()).toEqual([good, good]);
  });
});

describe('ToolRegistry.around', () => {
  it('wraps every call, the first hook outermost, sees the arguments as given, and can be removed', async () => {
    const fs = createMemoryFs({ cwd: '/w' });
    const ctx = createHarness({ fs, plugins: [fsTools()] });
    const seen: string[] = [];
    const removeA = ctx.tools.around(async (info, next) => {
      seen.push(`a>${info.name}:${String(info.owner)}:${info.cwd}`);
      const r = await next();
      seen.push(`a<${r.isError ? r.error.code : 'ok'}`);
      return r;
    });
    ctx.tools.around(async (info, next) => {
      seen.push(`b>${JSON.stringify(info.args)}`);
      return next();
    });
    await ctx.tools.execute('read', { file_path: 'x' }, { owner: 'o', cwd: 'sub' });
    expect(seen).toEqual(['a>read:o:/w/sub', 'b>{"file_path":"x"}', 'a<FS_NOT_FOUND']);
    removeA();
    seen.length = 0;
    await ctx.tools.execute('nope', {}, { owner: 'o' });
    expect(seen).toEqual(['b>{}']);
  });

  it('turns a hook that throws into an isError result', async () => {
    const ctx = createHarness({ fs: createMemoryFs(), plugins: [fsTools()] });
    ctx.tools.around(async () => {
      throw new Error('hook broke');
    });
    const r = await ctx.tools.execute('read', { file_path: '/x' }, { owner: 'o' });
    expect(r.isError).toBe(true);
    expect(() => ctx.tools.around('no' as never)).toThrow(/function/);
  });
});
