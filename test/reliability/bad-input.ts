import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { contentVersion, type FileSystem, type HarnessContext, type ToolResult } from '../../src/index.js';
import { FS_ERROR_CODES } from '../../src/seam/errors.js';
import { searchTools, type ReadValue } from '../../src/tools/index.js';
import { runScript, treeDigest } from '../local/helpers.js';
import { agentHarness, tempDir } from './subjects.js';
import { SCALE, settleWithin, size, tally } from './tally.js';

/**
 * Bad input at the tool layer. Whatever a model sends (wrong types, huge strings, NUL, lone
 * surrogates, unknown keys, paths that try to leave the root, no arguments at all), every call
 * settles within a generous bound with a structured result: `{ isError: false, value, text }` or
 * `{ isError: true, error: { name: 'FsError', code }, text: 'Error: …' }`, serialisable as JSON, and
 * never with a stack trace in the text. Nothing outside the root changes, and an overlay never
 * writes to its lower layer. Then hostile files: binary, invalid UTF-8, UTF-16, a 100 MB file of
 * one line, and a file that grows while it is read.
 */

const CALL_BOUND_MS = 60_000;
/** `Error: ` and a message clipped to 2,000 characters, with its "… (N characters omitted) …". */
const MAX_ERROR_TEXT = 2100;
const BIG_BOUND_MS = 300_000;
const MiB = 1024 * 1024;

const HUGE = ['x'.repeat(MiB), 'é'.repeat(300_000), 'line\n'.repeat(200_000), `${'ab'.repeat(100_000)}\0`];
const NASTY = [
  '',
  '\0',
  'a\0b',
  '\uD800',
  'x\uDFFFy',
  '\uFEFF',
  '\r\n',
  '\r',
  '$&$1$$',
  '..',
  '.',
  '/',
  '~',
  '~/x',
  '$HOME/x',
  '%2e%2e/outside/secret.txt',
  '../outside/secret.txt',
  '../../../../etc/passwd',
  '/etc/passwd',
  'a\\..\\..\\x',
  'C:\\Windows\\win.ini',
  'file:///etc/passwd',
  'n'.repeat(300),
  // Deeper chains make glob and grep superlinear (docs/RELIABILITY.md, known gaps).
  `${'d/'.repeat(100)}f`,
  ' a.txt',
  'a.txt\n',
  'a.txt/',
  '\u202Etxt.exe',
  'café',
  'cafe\u0301',
  'out-file',
  'out-dir/secret.txt',
  'out-dir/new.txt',
  'dangling',
  'dir',
  'bin.dat',
  'a.txt',
  'crlf.txt',
  'dir/b.txt',
  'new/deep/file.txt',
];

const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('a', '\uD800', '\uDC00', '\0', '\n', '\r\n', 'é', '😀'), { maxLength: 12 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE) },
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined, true, false, 0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, -0, Infinity) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.array(fc.string(), { maxLength: 3 }) },
);
// grep patterns are literal (escaped) or from a fixed list: a pattern with nested quantifiers can
// backtrack catastrophically and block the event loop (see docs/RELIABILITY.md, known gaps).
const grepPattern = fc.oneof(
  fc.string({ maxLength: 12 }).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
  fc.constantFrom('TODO', 'a.c', '^line', '(?i)LINE', '[', '(', '\\', '*', 'x{2,}', '\\bword\\b', '', '\0'),
);

interface ToolCallArgs {
  readonly tool: string;
  readonly args: unknown;
  readonly exec: 'ok' | 'aborted' | 'no-owner' | 'bad-cwd' | 'odd-signal';
}

const TOOLS = ['read', 'write', 'edit', 'glob', 'grep'] as const;
const GOOD_NAMES = ['a.txt', 'crlf.txt', 'dir/b.txt', 'new/deep/file.txt'];
const pathArb = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...GOOD_NAMES) }, { weight: 3, arbitrary: fc.constantFrom(...NASTY) }, { weight: 1, arbitrary: fc.string() });
const globPattern = fc.oneof(
  fc.constantFrom('**/*', '*.txt', '**', '{a,b}.txt', '[', '***', '../*', '/etc/*', '**/..', 'dir/**', '!a.txt', '\0', '{{{{{{a}}}}}}'),
  fc.string({ maxLength: 12 }),
);
/** Every argument of each tool: mostly a plausible value, sometimes anything at all. */
const FIELDS: Record<(typeof TOOLS)[number], Record<string, fc.Arbitrary<unknown>>> = {
  read: { file_path: pathArb, offset: fc.integer({ min: 1, max: 5 }), limit: fc.integer({ min: 1, max: 5 }) },
  write: { file_path: pathArb, content: nastyString },
  edit: {
    file_path: pathArb,
    old_string: fc.oneof(fc.constantFrom('one', 'two', 'x', 'one\ntwo', '\r\n'), nastyString),
    new_string: nastyString,
    replace_all: fc.boolean(),
  },
  glob: { pattern: globPattern, path: pathArb },
  grep: { pattern: grepPattern, path: pathArb, include: fc.constantFrom('*.txt', '!x', 'a,b', '**/*.{ts,txt}', '[') },
};
const OPTIONAL = new Set(['offset', 'limit', 'replace_all', 'path', 'include']);

const argsFor = (tool: (typeof TOOLS)[number]): fc.Arbitrary<unknown> => {
  const fields = FIELDS[tool];
  const names = Object.keys(fields);
  const valued = Object.fromEntries(names.map((k) => [k, fc.oneof({ weight: 6, arbitrary: fields[k]! }, { weight: 1, arbitrary: anyValue })]));
  return fc
    .tuple(
      fc.record(valued),
      // Drop some arguments: optional ones often, required ones now and then.
      fc.subarray(names).map((drop) => drop.filter((k) => OPTIONAL.has(k) || drop.length === 1)),
      fc.oneof(
        { weight: 7, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), anyValue, { minKeys: 1, maxKeys: 2 }) },
      ),
    )
    .map(([args, drop, extra]) => {
      const out: Record<string, unknown> = { ...(extra ?? {}), ...args };
      for (const k of drop) delete out[k];
      return out;
    });
};

const callArb: fc.Arbitrary<ToolCallArgs> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .constantFrom(...TOOLS)
      .chain((tool) =>
        fc.record({
          tool: fc.constant(tool),
          args: argsFor(tool),
          exec: fc.oneof({ weight: 12, arbitrary: fc.constant('ok' as const) }, { weight: 1, arbitrary: fc.constantFrom('aborted' as const, 'no-owner' as const, 'bad-cwd' as const, 'odd-signal' as const) }),
        }),
      ),
  },
  // No arguments object at all, or an unknown tool.
  { weight: 1, arbitrary: fc.record({ tool: fc.constantFrom(...TOOLS), args: anyValue, exec: fc.constant('ok' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({ tool: fc.oneof(fc.string(), fc.constantFrom('Read', 'bash', '__proto__', 'constructor')), args: anyValue, exec: fc.constant('ok' as const) }),
  },
);

/** The second argument of execute: mostly right, sometimes aborted or malformed. */
function execOf(kind: ToolCallArgs['exec']): unknown {
  switch (kind) {
    case 'aborted':
      return { owner: 'fuzz', signal: AbortSignal.abort() };
    case 'no-owner':
      return { signal: undefined };
    case 'bad-cwd':
      return { owner: 'fuzz', cwd: 'relative/\0cwd' };
    case 'odd-signal':
      return { owner: 'fuzz', signal: { aborted: false } };
    default:
      return { owner: 'fuzz' };
  }
}

/** Checks one result's shape; returns a description of what is wrong, or undefined. */
export function structureProblem(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null) return `not an object: ${String(result)}`;
  const r = result as Partial<ToolResult> & Record<string, unknown>;
  if (typeof r.isError !== 'boolean' || typeof r.text !== 'string') return 'isError or text missing';
  if (/\n\s+at .+\(.*:\d+:\d+\)/.test(r.text)) return `a stack trace in the text: ${r.text.slice(0, 200)}`;
  try {
    JSON.stringify(result);
  } catch (err) {
    return `not serialisable: ${String(err)}`;
  }
  if (r.isError) {
    if (r.error?.name !== 'FsError' || !FS_ERROR_CODES.includes(r.error.code)) return `error without a code: ${JSON.stringify(r.error)}`;
    if (!r.text.startsWith('Error: ')) return `error text does not start with "Error: "`;
    // Messages quote arguments: a megabyte sent must not come back as a megabyte of error.
    if (r.text.length > MAX_ERROR_TEXT) return `an error text of ${r.text.length} characters`;
    if (!r.text.isWellFormed()) return 'an error text with a lone surrogate';
    if (r.value !== undefined) return 'an error result carries a value';
  } else if (r.value === undefined || r.text.length === 0) return 'a success without a value or text';
  return undefined;
}

/** FS_IO_ERROR has no business in a fuzz of arguments: each distinct one is printed for review. */
const ioErrors = new Set<string>();

async function fuzz(ctx: HarnessContext, runs: number): Promise<Record<string, number>> {
  const outcomes: Record<string, number> = {};
  await fc.assert(
    fc.asyncProperty(fc.array(callArb, { minLength: 1, maxLength: 5 }), async (calls) => {
      for (const c of calls) {
        const result = await settleWithin(
          ctx.tools.execute(c.tool, c.args, execOf(c.exec) as { owner: string }),
          CALL_BOUND_MS,
          `${c.tool}(${JSON.stringify(c.args)?.slice(0, 200)})`,
        );
        tally.fuzzedCalls++;
        const problem = structureProblem(result);
        if (problem !== undefined) {
          tally.unstructured++;
          throw new Error(`${c.tool}: ${problem}`);
        }
        const name = (TOOLS as readonly string[]).includes(c.tool) ? c.tool : 'unknown tool';
        const key = `${name}:${result.isError ? result.error!.code : 'ok'}`;
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        if (result.error?.code === 'FS_IO_ERROR') ioErrors.add(`${c.tool}: ${result.text.slice(0, 300)}`);
      }
    }),
    { numRuns: runs },
  );
  return outcomes;
}

const show = (o: Record<string, number>) => {
  const text = Object.entries(o)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const io = [...ioErrors].join('\n  ');
  ioErrors.clear();
  return io === '' ? text : `${text}\n  ${io}`;
};

/** A root with ordinary, binary and linked files, a sibling `root-evil` and an `outside` holding a secret. */
function seedArea(area: string): { root: string; outside: string; evil: string } {
  const root = join(area, 'root');
  const outside = join(area, 'outside');
  const evil = join(area, 'root-evil');
  for (const d of [root, outside, evil, join(root, 'dir')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(outside, 'secret.txt'), 'outside secret\n');
  writeFileSync(join(evil, 'x.txt'), 'evil sibling\n');
  writeFileSync(join(root, 'a.txt'), 'one\ntwo\nthree\n');
  writeFileSync(join(root, 'crlf.txt'), 'one\r\ntwo\r\n');
  writeFileSync(join(root, 'bin.dat'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13, 0xff]));
  writeFileSync(join(root, 'dir/b.txt'), 'x y x\n');
  symlinkSync('../outside/secret.txt', join(root, 'out-file'));
  symlinkSync('../outside', join(root, 'out-dir'));
  symlinkSync('../outside/nope.txt', join(root, 'dangling'));
  return { root, outside, evil };
}

// ---------------------------------------------------------------------------------------------
// Hostile files.
// ---------------------------------------------------------------------------------------------

const HOSTILE: readonly { name: string; bytes: Buffer; says: RegExp }[] = [
  { name: 'binary.png', bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]), says: /NUL byte at byte 8/ },
  { name: 'latin1.txt', bytes: Buffer.from('caf\xe9 cr\xe8me\n', 'latin1'), says: /invalid UTF-8 at byte 3/ },
  { name: 'overlong.txt', bytes: Buffer.from([0x61, 0xc0, 0xaf, 0x62]), says: /invalid UTF-8 at byte 1/ },
  { name: 'surrogate.txt', bytes: Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x62]), says: /invalid UTF-8 at byte 1/ },
  { name: 'truncated.txt', bytes: Buffer.from([0x61, 0x62, 0x63, 0xe2, 0x82]), says: /invalid UTF-8 at byte 3/ },
  { name: 'utf16le.txt', bytes: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello\n', 'utf16le')]), says: /UTF-16/ },
  { name: 'utf16be.txt', bytes: Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('hello\n', 'utf16le').swap16()]), says: /UTF-16/ },
  { name: 'utf16-nobom.txt', bytes: Buffer.from('hello\n', 'utf16le'), says: /NUL byte at byte 1/ },
];

interface Subject {
  readonly name: string;
  readonly fs: FileSystem;
  readonly dir: string;
  /** Puts exact bytes at `name` behind the filesystem's back (in its lower, for the overlay). */
  put(name: string, bytes: Uint8Array): Promise<void>;
  /** The bytes at `name` as stored (the lower's, for the overlay). */
  get(name: string): Promise<Buffer>;
}

async function hostileFiles(s: Subject): Promise<string[]> {
  const ctx = agentHarness(s.fs, s.dir);
  const notes: string[] = [];
  for (const h of HOSTILE) {
    await s.put(h.name, h.bytes);
    const file_path = `${s.dir}/${h.name}`;
    const read = await settleWithin(ctx.tools.execute('read', { file_path }, { owner: 'agent' }), CALL_BOUND_MS, `read ${h.name}`);
    expect(structureProblem(read)).toBeUndefined();
    expect(read, `${s.name} ${h.name}`).toMatchObject({ isError: true, error: { code: 'FS_NOT_TEXT' } });
    expect(read.text, `${s.name} ${h.name}`).toMatch(h.says);
    // Nothing was recorded: a model that could not read it cannot overwrite or edit it blind.
    const write = await ctx.tools.execute('write', { file_path, content: 'clobbered\n' }, { owner: 'agent' });
    expect(write, `${s.name} ${h.name}`).toMatchObject({ isError: true, error: { code: 'FS_NOT_OBSERVED' } });
    const edit = await ctx.tools.execute('edit', { file_path, old_string: 'hello', new_string: 'bye' }, { owner: 'agent' });
    expect(edit, `${s.name} ${h.name}`).toMatchObject({ isError: true, error: { code: 'FS_NOT_OBSERVED' } });
    expect(Buffer.compare(await s.get(h.name), h.bytes), `${s.name} ${h.name} changed`).toBe(0);
    tally.badFiles++;
    notes.push(`${h.name}: ${read.text.replace(/^Error: cannot read "[^"]*": /, '')}`);
  }
  expect(ctx.listenerErrors).toEqual([]);
  return notes;
}

/** One line of 100 MB: read shows it cut, with its full length; an edit at its end changes only that. */
async function hugeLine(s: Subject): Promise<void> {
  const ctx = agentHarness(s.fs, s.dir);
  const tail = 'THE-END';
  const body = Buffer.alloc(100 * 1000 * 1000 - tail.length, 'x');
  const bytes = Buffer.concat([body, Buffer.from(tail)]);
  await s.put('huge.txt', bytes);
  const file_path = `${s.dir}/huge.txt`;
  const read = (await settleWithin(ctx.tools.execute('read', { file_path }, { owner: 'agent' }), BIG_BOUND_MS, 'read of 100 MB')) as ToolResult<ReadValue>;
  expect(structureProblem(read)).toBeUndefined();
  expect(read.isError, read.text).toBe(false);
  expect(read.value!.totalLines).toBe(1);
  expect(read.value!.lines).toHaveLength(1);
  expect(read.value!.lines[0]!.fullLength).toBe(bytes.length);
  expect(read.value!.lines[0]!.text.length).toBe(2000);
  expect(read.value!.version).toBe(contentVersion(bytes));
  expect(Buffer.byteLength(read.text)).toBeLessThan(60 * 1024);
  const edit = await settleWithin(
    ctx.tools.execute('edit', { file_path, old_string: tail, new_string: `${tail}!` }, { owner: 'agent' }),
    BIG_BOUND_MS,
    'edit of 100 MB',
  );
  expect(edit.isError, edit.text).toBe(false);
  const after = await s.get('huge.txt');
  expect(after.length).toBe(bytes.length + 1);
  expect(contentVersion(after)).toBe(contentVersion(Buffer.concat([bytes, Buffer.from('!')])));
  tally.badFiles++;
}

/**
 * A file that another process appends to while the agent reads it: each read shows a consistent
 * prefix (whole lines, the last possibly cut) whose bytes have exactly the version reported, or is
 * refused with a structured error; never a torn mix.
 */
async function growingFile(s: Subject, path: string): Promise<{ reads: number; refused: number; sizes: Set<number> }> {
  const ctx = agentHarness(s.fs, s.dir);
  writeFileSync(path, '');
  const script = `
    import { appendFileSync } from 'node:fs';
    const path = ${JSON.stringify(path)};
    for (let i = 1; i <= 1500; i++) {
      appendFileSync(path, 'line ' + String(i).padStart(5, '0') + '\\n');
      const end = Date.now() + 1;
      while (Date.now() < end);
    }
  `;
  const child = runScript(script, { timeoutMs: 60_000 });
  let done = false;
  void child.finally(() => (done = true));
  const file_path = `${s.dir}/grow.txt`;
  let reads = 0;
  let refused = 0;
  const sizes = new Set<number>();
  while (!done || reads === 0) {
    const r = (await settleWithin(ctx.tools.execute('read', { file_path }, { owner: 'agent' }), CALL_BOUND_MS, 'read of a growing file')) as ToolResult<ReadValue>;
    expect(structureProblem(r)).toBeUndefined();
    reads++;
    tally.growingReads++;
    if (r.isError) {
      expect(r.error!.code, r.text).toBe('FS_IO_ERROR');
      refused++;
      continue;
    }
    const lines = r.value!.lines.map((l) => l.text);
    lines.forEach((line, i) => {
      const want = `line ${String(i + 1).padStart(5, '0')}`;
      const ok = i < lines.length - 1 ? line === want : want.startsWith(line);
      if (!ok) {
        tally.tornReads++;
        throw new Error(`a read of the growing file showed ${JSON.stringify(line)} as line ${i + 1}`);
      }
    });
    const whole = lines.map((l) => `${l}\n`).join('');
    const cut = lines.join('\n');
    if (r.value!.version !== contentVersion(Buffer.from(whole)) && r.value!.version !== contentVersion(Buffer.from(cut))) {
      tally.tornReads++;
      throw new Error(`a read of the growing file reported a version that is not that of the lines it showed (${lines.length} lines)`);
    }
    sizes.add(lines.length);
  }
  const res = await child;
  expect(res.code, res.stderr).toBe(0);
  return { reads, refused, sizes };
}

export function describeBadInput(): void {
  describe('bad input at the tool layer', () => {
    const RUNS = size(120, 1500, 40);

    test('fuzzed tool calls over memory: structured results, always settled', async () => {
      const fs = createMemoryFs({
        cwd: '/w',
        files: { '/w/a.txt': 'one\ntwo\nthree\n', '/w/crlf.txt': 'one\r\ntwo\r\n', '/w/bin.dat': new Uint8Array([0x89, 0, 0xff]), '/w/dir/b.txt': 'x y x\n' },
      });
      const outcomes = await fuzz(agentHarness(fs, '/w', [searchTools()]), RUNS);
      console.log(`fuzz, memory: ${show(outcomes)}`);
    }, 600_000);

    test('fuzzed tool calls over local: structured results, always settled, nothing outside the root changed', async () => {
      const { dir, cleanup } = await tempDir('fuzz');
      try {
        const { root, outside, evil } = seedArea(dir);
        const before = [await treeDigest(outside, { atime: false }), await treeDigest(evil, { atime: false })];
        const outcomes = await fuzz(agentHarness(createLocalFs({ root }), root, [searchTools()]), RUNS);
        const after = [await treeDigest(outside, { atime: false }), await treeDigest(evil, { atime: false })];
        if (after.join() !== before.join()) tally.escapes++;
        expect(after).toEqual(before);
        console.log(`fuzz, local: ${show(outcomes)}`);
      } finally {
        await cleanup();
      }
    }, 600_000);

    test('fuzzed tool calls over an overlay on a local lower: the lower is never written', async () => {
      const { dir, cleanup } = await tempDir('fuzz-overlay');
      try {
        const { root, outside } = seedArea(dir);
        const before = [await treeDigest(root, { atime: false }), await treeDigest(outside, { atime: false })];
        const overlay = await createOverlayFs({ lower: createLocalFs({ root }) });
        const outcomes = await fuzz(agentHarness(overlay, root, [searchTools()]), RUNS);
        const after = [await treeDigest(root, { atime: false }), await treeDigest(outside, { atime: false })];
        if (after.join() !== before.join()) tally.escapes++;
        expect(after).toEqual(before);
        console.log(`fuzz, overlay: ${show(outcomes)}; ${(await overlay.changes()).length} changes held in the upper`);
      } finally {
        await cleanup();
      }
    }, 600_000);

    test('a megabyte argument does not come back as a megabyte of text, in an error or a success', async () => {
      const fs = createMemoryFs({ cwd: '/w', files: { '/w/a.txt': 'one\n' } });
      const ctx = agentHarness(fs, '/w', [searchTools()]);
      const big = 'x'.repeat(MiB);
      const emoji = '😀'.repeat(MiB / 2);
      const cases: [string, unknown][] = [
        ['read', { file_path: big }],
        ['read', { file_path: `/w/${emoji}` }],
        ['write', { file_path: `a\0${big}`, content: 'x' }],
        ['write', { file_path: 'a.txt', content: big }],
        ['grep', { pattern: `(${big}` }],
        ['grep', { pattern: 'x', include: big }],
      ];
      for (const [tool, args] of cases) {
        const r = await ctx.tools.execute(tool, args, { owner: 'agent' });
        expect(structureProblem(r), tool).toBeUndefined();
        expect(r.isError).toBe(true);
      }
      // The end of a long message, where the remedy is, is kept.
      const r = await ctx.tools.execute('write', { file_path: `/w/${emoji}`, content: 'x' }, { owner: 'agent' });
      expect(r.isError).toBe(false);
      // Success texts quote the path clipped the same way, keeping its file name's end.
      expect(r.text.length).toBeLessThan(2100);
      expect(r.text).toMatch(/^Created "\/w\/😀+ … \(\d+ characters omitted\) … 😀+" \(1 byte\)\.$/u);
      expect(r.text.isWellFormed()).toBe(true);
      for (const [tool, args] of [
        ['read', { file_path: `/w/${emoji}` }],
        ['edit', { file_path: `/w/${emoji}`, old_string: 'x', new_string: 'z' }],
      ] as const) {
        const ok = await ctx.tools.execute(tool, args, { owner: 'agent' });
        expect(ok.isError, tool).toBe(false);
        expect(ok.text.length, tool).toBeLessThan(2200);
        expect(ok.text, tool).toContain('characters omitted');
      }
      const again = await ctx.tools.execute('write', { file_path: `/w/${emoji}`, content: 'y' }, { owner: 'other' });
      expect(again.error?.code).toBe('FS_NOT_OBSERVED');
      expect(again.text).toMatch(/characters omitted\) … .*read the file first, then retry$/s);
      expect(again.text.isWellFormed()).toBe(true);
    });

    test('the structure check rejects what a broken tool would return', () => {
      expect(structureProblem({ isError: true, text: 'Error: x', error: { name: 'FsError', code: 'FS_IO_ERROR' } })).toBeUndefined();
      expect(structureProblem({ isError: true, text: 'boom', error: { name: 'FsError', code: 'FS_IO_ERROR' } })).toBeDefined();
      expect(structureProblem({ isError: true, text: 'Error: x', error: { name: 'Error', code: 'EIO' } })).toBeDefined();
      expect(structureProblem({ isError: true, text: 'Error: x\n    at run (/src/a.ts:1:2)', error: { name: 'FsError', code: 'FS_IO_ERROR' } })).toBeDefined();
      expect(structureProblem({ isError: false, text: 'ok', value: { n: 1n } })).toBeDefined();
      expect(structureProblem({ isError: true, text: `Error: ${'x'.repeat(MiB)}`, error: { name: 'FsError', code: 'FS_NOT_FOUND' } })).toBeDefined();
      expect(structureProblem(undefined)).toBeDefined();
    });

    // Each hostile file on each provider; the overlay reads them through from a local lower.
    const subjects: { name: string; make(dir: string): Promise<Subject> }[] = [
      {
        name: 'memory',
        async make() {
          const fs = createMemoryFs({ cwd: '/w' });
          const vol = fs.provider.volume;
          return {
            name: 'memory',
            fs,
            dir: '/w',
            put: async (name, bytes) => vol.writeFileSync(`/w/${name}`, bytes),
            get: async (name) => vol.readFileSync(`/w/${name}`) as Buffer,
          };
        },
      },
      {
        name: 'local',
        async make(dir) {
          return {
            name: 'local',
            fs: createLocalFs({ root: dir }),
            dir,
            put: async (name, bytes) => writeFileSync(join(dir, name), bytes),
            get: async (name) => readFileSync(join(dir, name)),
          };
        },
      },
      {
        name: 'overlay',
        async make(dir) {
          const overlay = await createOverlayFs({ lower: createLocalFs({ root: dir }) });
          return {
            name: 'overlay',
            fs: overlay,
            dir,
            put: async (name, bytes) => writeFileSync(join(dir, name), bytes),
            // What the agent's view holds (the upper's copy once the overlay changed it).
            get: async (name) => Buffer.from((await overlay.readBytes(await overlay.resolve(`${dir}/${name}`), { maxBytes: 256 * MiB })).bytes),
          };
        },
      },
    ];

    for (const subject of subjects) {
      test(`${subject.name}: binary, invalid UTF-8 and UTF-16 files are refused as FS_NOT_TEXT and stay untouched`, async () => {
        const { dir, cleanup } = await tempDir('hostile');
        try {
          const notes = await hostileFiles(await subject.make(dir));
          if (subject.name === 'local') console.log(`hostile files: ${notes.join('; ')}`);
        } finally {
          await cleanup();
        }
      }, 120_000);

      // At the quick size on local alone; every subject at full size.
      test.skipIf(SCALE === 'quick' && subject.name !== 'local')(`${subject.name}: a 100 MB single-line file is read (cut) and edited at its end`, async () => {
        const { dir, cleanup } = await tempDir('huge');
        try {
          await hugeLine(await subject.make(dir));
        } finally {
          await cleanup();
        }
      }, 600_000);
    }

    for (const name of ['local', 'overlay'] as const) {
      test(`${name}: a file growing while it is read gives whole prefixes with their own versions`, async () => {
        const { dir, cleanup } = await tempDir('grow');
        try {
          const s = await subjects.find((x) => x.name === name)!.make(dir);
          const { reads, refused, sizes } = await growingFile(s, join(dir, 'grow.txt'));
          console.log(`growing file, ${name}: ${reads} reads while another process appended 1,500 lines; ${sizes.size} distinct prefixes seen; ${refused} refused (FS_IO_ERROR, kept changing)`);
          expect(sizes.size).toBeGreaterThan(1);
        } finally {
          await cleanup();
        }
      }, 120_000);
    }
  });
}

