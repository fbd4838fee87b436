import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { createLocalProvider } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { FsError, applyEdit, contentVersion, createFs, expectHolds, observe, type FileSystem, type FsProvider, type ToolResult } from '../../src/index.js';
import { FS_ERROR_CODES } from '../../src/seam/errors.js';
import type { EditValue, ReadValue, WriteValue } from '../../src/tools/index.js';
import { FS_METHODS, PROVIDER_METHODS, agentHarness, seamPerCall, tempDir, withPoints } from './subjects.js';
import { size, tally } from './tally.js';

/**
 * Concurrency at the tool layer. 2–8 owners (agent sessions) each run a short script of
 * read/write/edit tool calls over 1–3 shared files, through the observation policy, while
 * `fc.scheduler` picks the interleaving at every call of the contract and of the provider below
 * it. Afterwards, per file:
 *
 * - every successful mutation replaced exactly the version its owner had been shown, and the
 *   successes chain from the initial version to the final one, each used once (an Eulerian path in
 *   the graph version → version): every success is the final content or was superseded by a later
 *   success whose owner had seen it. A lost update breaks the chain;
 * - an edit's result is the reference `applyEdit` of the text its owner had seen;
 * - every read returned a version some success (or the initial state) produced, with exactly its
 *   lines: no torn read;
 * - every refusal is FS_STALE_VERSION or FS_NOT_OBSERVED, or an edit outcome (FS_NOT_FOUND,
 *   FS_EDIT_NOT_FOUND, FS_AMBIGUOUS_EDIT) that the text the owner had seen explains.
 *
 * Versions of the built-in providers are content digests (`contentVersion`), which the check uses
 * to name states.
 */

const ABSENT = 'ABSENT';
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const vOf = (text: string) => contentVersion(utf8(text)) as string;

type Call =
  | { readonly tool: 'read'; readonly file: number; readonly link: boolean }
  | { readonly tool: 'write'; readonly file: number; readonly link: boolean; readonly content: string }
  | { readonly tool: 'edit'; readonly file: number; readonly link: boolean; readonly old: string; readonly new: string; readonly all: boolean };

interface Scenario {
  /** Initial content of each file; undefined: absent. */
  readonly initial: readonly (string | undefined)[];
  /** One script per owner. */
  readonly owners: readonly (readonly Call[])[];
}

// No CR and no BOM, so bytes are exactly the UTF-8 of the text and line splitting is simple.
const textArb = fc.array(fc.constantFrom('a', 'b', 'ab', '\n', 'c '), { maxLength: 8 }).map((parts) => parts.join(''));
const callArb = (files: number): fc.Arbitrary<Call> => {
  const file = fc.nat(files - 1);
  const link = fc.boolean();
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ tool: fc.constant('read' as const), file, link }) },
    { weight: 2, arbitrary: fc.record({ tool: fc.constant('write' as const), file, link, content: textArb }) },
    {
      weight: 3,
      arbitrary: fc.record({
        tool: fc.constant('edit' as const),
        file,
        link,
        old: fc.constantFrom('a', 'b', 'ab', 'a\n', 'b\n'),
        new: fc.constantFrom('', 'c', 'ba', 'x\n', 'aa'),
        all: fc.boolean(),
      }),
    },
  );
};
/** Mostly "read, then change what was read", as agents work; sometimes a blind call. */
const scriptArb = (files: number): fc.Arbitrary<Call[]> =>
  fc
    .array(
      fc.oneof(
        { weight: 1, arbitrary: callArb(files).map((c) => [c]) },
        {
          weight: 2,
          arbitrary: fc
            .tuple(callArb(files), fc.boolean())
            .map(([c, link]): Call[] => [{ tool: 'read', file: c.file, link }, c]),
        },
      ),
      { minLength: 1, maxLength: 2 },
    )
    .map((steps) => steps.flat());
const scenarioArb: fc.Arbitrary<Scenario> = fc.integer({ min: 1, max: 3 }).chain((files) =>
  fc.record({
    initial: fc.array(fc.option(textArb, { nil: undefined }), { minLength: files, maxLength: files }),
    owners: fc.array(scriptArb(files), { minLength: 2, maxLength: 8 }),
  }),
);

type Seen = { readonly kind: 'present'; readonly version: string } | { readonly kind: 'absent' } | undefined;

interface Outcome {
  readonly owner: number;
  readonly call: Call;
  /** What the owner had been shown of the file when it made the call. */
  readonly seen: Seen;
  readonly result: ToolResult;
}

/** Builds a fresh subject for one run: the files seeded, the filesystem wrapped with scheduler points. */
type Prepare = (scenario: Scenario, point: (label: string) => Promise<unknown>, run: number) => Promise<{ fs: FileSystem; dir: string; raw: FileSystem }>;

const fileName = (k: number) => `f${k}.txt`;
const linkName = (k: number) => `l${k}.txt`;

/** Off while the check is pointed at deliberately broken providers, whose failures are expected. */
let counting = true;
const count = (key: 'schedules' | 'toolCalls' | 'successes' | 'staleRefusals' | 'notObservedRefusals' | 'lostUpdates' | 'tornReads' | 'unexpectedErrors') => {
  if (counting) tally[key]++;
};

async function runScenario(prepare: Prepare, scenario: Scenario, s: fc.Scheduler, run: number): Promise<void> {
  const point = (label: string) => s.schedule(Promise.resolve(), label);
  const { fs, dir, raw } = await prepare(scenario, point, run);
  const ctx = agentHarness(fs, dir);
  const outcomes: Outcome[] = [];
  const seen = scenario.owners.map(() => new Map<number, Seen>());

  const exec = (c: Call, owner: string): Promise<ToolResult> => {
    const file_path = `${dir}/${c.link ? linkName(c.file) : fileName(c.file)}`;
    if (c.tool === 'read') return ctx.tools.execute('read', { file_path }, { owner });
    if (c.tool === 'write') return ctx.tools.execute('write', { file_path, content: c.content }, { owner });
    return ctx.tools.execute('edit', { file_path, old_string: c.old, new_string: c.new, replace_all: c.all }, { owner });
  };

  const scripts = scenario.owners.map(async (script, o) => {
    for (const [i, call] of script.entries()) {
      await s.schedule(Promise.resolve(), `owner ${o} call ${i}: ${call.tool} f${call.file}`);
      const before = seen[o]!.get(call.file);
      const result = await exec(call, `owner-${o}`);
      outcomes.push({ owner: o, call, seen: before, result });
      if (!result.isError) {
        seen[o]!.set(call.file, { kind: 'present', version: (result.value as ReadValue | WriteValue | EditValue).version });
      } else if (call.tool === 'read' && result.error?.code === 'FS_NOT_FOUND') {
        seen[o]!.set(call.file, { kind: 'absent' });
      }
    }
  });
  await s.waitFor(Promise.all(scripts));
  expect(ctx.listenerErrors).toEqual([]);

  for (let k = 0; k < scenario.initial.length; k++) {
    const mine = outcomes.filter((o) => o.call.file === k);
    // The overlay's calls to its lower still pass through the scheduler: let it release them.
    const { info, finalText } = await s.waitFor(
      (async () => {
        const target = await raw.resolve(`${dir}/${fileName(k)}`);
        const info = await raw.stat(target);
        return { info, finalText: info === undefined ? undefined : (await raw.readText(target)).text };
      })(),
    );
    const final = info === undefined ? ABSENT : (info.version as string);
    checkFile(scenario.initial[k], mine, final, finalText, `f${k}`);
  }
  count('schedules');
}

/** All checks on one file's outcomes; see the header comment. */
function checkFile(initialText: string | undefined, outcomes: readonly Outcome[], final: string, finalText: string | undefined, label: string): void {
  const initial = initialText === undefined ? ABSENT : vOf(initialText);
  const texts = new Map<string, string>();
  if (initialText !== undefined) texts.set(initial, initialText);
  const describeAll = () =>
    outcomes
      .map((o) => `owner ${o.owner} ${JSON.stringify(o.call)} seen=${JSON.stringify(o.seen)} → ${o.result.isError ? o.result.error?.code : 'ok'}`)
      .join('\n  ');
  function fail(why: string, counter: 'lostUpdates' | 'tornReads' | 'unexpectedErrors'): never {
    count(counter);
    throw new Error(`${label}: ${why}\n  ${describeAll()}`);
  }

  // Successful mutations: their base (what the owner had seen) and result.
  const edges: { from: string; to: string; o: Outcome }[] = [];
  for (const o of outcomes) {
    count('toolCalls');
    const { result, call, seen } = o;
    if (result.isError) {
      const code = result.error?.code;
      if (code === undefined || !FS_ERROR_CODES.includes(code) || !result.text.startsWith('Error: ')) fail(`unstructured error ${result.text}`, 'unexpectedErrors');
      if (code === 'FS_STALE_VERSION') count('staleRefusals');
      else if (code === 'FS_NOT_OBSERVED') count('notObservedRefusals');
      continue;
    }
    count('successes');
    if (call.tool === 'read') continue;
    const to = (result.value as WriteValue | EditValue).version as string;
    if (call.tool === 'write') {
      edges.push({ from: seen?.kind === 'present' ? seen.version : ABSENT, to, o });
      if (to !== vOf(call.content)) fail(`write stored other bytes than its content (${to})`, 'lostUpdates');
      texts.set(to, call.content);
    } else {
      if (seen?.kind !== 'present') fail(`an edit succeeded for an owner that had not seen the file present`, 'lostUpdates');
      edges.push({ from: seen.version, to, o });
    }
  }
  // Edit results from their bases' texts (bases may come from other edits: iterate to a fixpoint).
  let pending = edges.filter((e) => e.o.call.tool === 'edit');
  while (pending.length > 0) {
    const next = pending.filter((e) => !texts.has(e.from));
    if (next.length === pending.length) fail(`an edit replaced a version no success or initial state produced (${next[0]!.from})`, 'lostUpdates');
    for (const e of pending.filter((p) => texts.has(p.from))) {
      const c = e.o.call as Extract<Call, { tool: 'edit' }>;
      const r = applyEdit(texts.get(e.from)!, c.old, c.new, c.all);
      if (!r.ok) fail(`an edit succeeded where the reference gives ${r.error.code} on the text its owner saw`, 'lostUpdates');
      if (vOf(r.text) !== e.to) fail(`an edit's result is not the reference edit of the text its owner saw`, 'lostUpdates');
      texts.set(e.to, r.text);
    }
    pending = next;
  }

  // Refusals and reads.
  for (const o of outcomes) {
    const { result, call, seen } = o;
    const code = result.error?.code;
    if (call.tool === 'read') {
      if (result.isError) {
        if (!(code === 'FS_NOT_FOUND' && initial === ABSENT)) fail(`read refused with ${code}`, 'unexpectedErrors');
        continue;
      }
      const value = result.value as ReadValue;
      const text = texts.get(value.version);
      if (text === undefined) fail(`a read returned version ${value.version}, which no success or initial state produced`, 'tornReads');
      const lines = text === '' ? [] : (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
      if (value.totalLines !== lines.length || value.lines.map((l) => l.text).join('\n') !== lines.join('\n')) {
        fail(`a read showed lines other than those of the version it reported`, 'tornReads');
      }
      continue;
    }
    if (!result.isError) continue;
    if (code === 'FS_STALE_VERSION') {
      if (seen?.kind !== 'present') fail(`FS_STALE_VERSION for an owner that had not seen the file`, 'unexpectedErrors');
      continue;
    }
    if (code === 'FS_NOT_OBSERVED') {
      if (seen?.kind === 'present') fail(`FS_NOT_OBSERVED for an owner that had read the file`, 'unexpectedErrors');
      if (call.tool === 'edit' && seen !== undefined) fail(`an edit after a read that found nothing must be FS_NOT_FOUND`, 'unexpectedErrors');
      continue;
    }
    if (call.tool === 'edit' && code === 'FS_NOT_FOUND' && seen?.kind === 'absent') continue;
    if (call.tool === 'edit' && (code === 'FS_EDIT_NOT_FOUND' || code === 'FS_AMBIGUOUS_EDIT') && seen?.kind === 'present') {
      // G4: the guard held, so the edit was matched against exactly what the owner had seen.
      const base = texts.get(seen.version);
      const r = base === undefined ? undefined : applyEdit(base, call.old, call.new, call.all);
      if (r === undefined || r.ok || r.error.code !== code) fail(`${code}, but the reference edit of the text the owner saw disagrees`, 'unexpectedErrors');
      continue;
    }
    fail(`${call.tool} refused with ${code}: ${result.text}`, 'unexpectedErrors');
  }

  // The successes chain from the initial version to the final one.
  if (final !== ABSENT && finalText !== undefined && texts.has(final) && texts.get(final) !== finalText) {
    fail(`the final text does not match its version`, 'tornReads');
  }
  if (!eulerianPath(initial, final, edges)) {
    fail(`lost update: the successful mutations do not chain from ${initial.slice(0, 16)} to the final ${final.slice(0, 16)}`, 'lostUpdates');
  }
}

/** Whether the edges can be walked, each exactly once, from `start` to `end`. */
export function eulerianPath(start: string, end: string, edges: readonly { from: string; to: string }[]): boolean {
  if (edges.length === 0) return start === end;
  const balance = new Map<string, number>();
  const adj = new Map<string, Set<string>>();
  const link = (a: string, b: string) => {
    if (!adj.has(a)) adj.set(a, new Set());
    adj.get(a)!.add(b);
  };
  for (const { from, to } of edges) {
    balance.set(from, (balance.get(from) ?? 0) + 1);
    balance.set(to, (balance.get(to) ?? 0) - 1);
    link(from, to);
    link(to, from);
  }
  for (const [v, b] of balance) {
    const want = start === end ? 0 : v === start ? 1 : v === end ? -1 : 0;
    if (b !== want) return false;
  }
  if (start !== end && (balance.get(start) !== 1 || balance.get(end) !== -1)) return false;
  if (!adj.has(start)) return false;
  // Balanced (up to start/end) and weakly connected is enough for a directed Eulerian path.
  const reached = new Set([start]);
  const todo = [start];
  while (todo.length > 0) for (const n of adj.get(todo.pop()!) ?? []) if (!reached.has(n) && reached.add(n)) todo.push(n);
  return [...adj.keys()].every((v) => reached.has(v));
}

// ---------------------------------------------------------------------------------------------
// The three providers.
// ---------------------------------------------------------------------------------------------

const memoryPrepare: Prepare = async (scenario, point) => {
  const files: Record<string, string | { symlink: string }> = {};
  scenario.initial.forEach((text, k) => {
    if (text !== undefined) files[`/w/${fileName(k)}`] = text;
    files[`/w/${linkName(k)}`] = { symlink: `/w/${fileName(k)}` };
  });
  const provider = createMemoryProvider({ files, cwd: '/w' });
  const raw = createFs(provider);
  const fs = withPoints(createFs(withPoints<FsProvider>(provider, PROVIDER_METHODS, point)), FS_METHODS, point);
  return { fs, dir: '/w', raw };
};

const overlayPrepare: Prepare = async (scenario, point) => {
  const files: Record<string, string | { symlink: string }> = {};
  scenario.initial.forEach((text, k) => {
    if (text !== undefined) files[`/w/${fileName(k)}`] = text;
    files[`/w/${linkName(k)}`] = { symlink: `/w/${fileName(k)}` };
  });
  const lower = createMemoryFs({ files, cwd: '/w' });
  // Points inside the overlay's critical sections too: every call it makes to the lower.
  let live = false;
  const gated = (label: string) => (live ? point(label) : Promise.resolve());
  const overlay = await createOverlayFs({ lower: withPoints(lower, FS_METHODS, gated), cwd: '/w' });
  live = true;
  return { fs: withPoints(overlay, FS_METHODS, point), dir: '/w', raw: overlay };
};

function localPrepare(root: string): Prepare {
  const provider = createLocalProvider({ root });
  const raw = createFs(provider);
  return async (scenario, point, run) => {
    const dir = join(root, `run-${run}`);
    mkdirSync(dir);
    scenario.initial.forEach((text, k) => {
      if (text !== undefined) writeFileSync(join(dir, fileName(k)), text);
      symlinkSync(fileName(k), join(dir, linkName(k)));
    });
    const fs = withPoints(createFs(withPoints<FsProvider>(provider, PROVIDER_METHODS, point)), FS_METHODS, point);
    return { fs, dir, raw };
  };
}

/** The provider without its `modify`: the seam then reads and swaps. */
function swapOnly(p: FsProvider): FsProvider {
  const { modify: _modify, ...rest } = p;
  return rest;
}

/**
 * `modify` over the provider's own read and swap: the swap expects what was read, so a lost race
 * changes nothing and the seam calls again. `blind`: it yields, then swaps whatever is there.
 */
function withModify(p: FsProvider, blind: boolean): FsProvider {
  return {
    ...p,
    async modify(t, { maxBytes, signal }, change) {
      const before = await p.read(t, { maxBytes, signal }).catch((err: unknown) => {
        if (err instanceof FsError && (err.code === 'FS_NOT_FOUND' || err.code === 'FS_NOT_DIRECTORY')) return undefined;
        throw err;
      });
      const bytes = change(before);
      if (!blind) return p.swap(t, { expect: observe(before), bytes, signal });
      await new Promise((r) => setImmediate(r));
      return p.swap(t, { expect: { kind: 'any' }, bytes, signal });
    },
  };
}

export function describeConcurrency(): void {
  describe('concurrency: randomised schedules of tool calls from 2–8 owners', () => {
    const property = (prepare: Prepare) => {
      let run = 0;
      return fc.asyncProperty(scenarioArb, fc.scheduler(), (scenario, s) => runScenario(prepare, scenario, s, run++));
    };

    test('memory', async () => {
      await fc.assert(property(memoryPrepare), { numRuns: size(400, 4000, 100) });
    }, 300_000);

    test('local', async () => {
      const { dir, cleanup } = await tempDir('conc');
      try {
        await fc.assert(property(localPrepare(dir)), { numRuns: size(250, 2500, 60) });
      } finally {
        await cleanup();
      }
    }, 600_000);

    test('overlay (over memory, scheduled inside its calls to the lower)', async () => {
      await fc.assert(property(overlayPrepare), { numRuns: size(400, 4000, 100) });
    }, 300_000);

    // Memory storage changed by `change`, every call through a seam of its own (as from separate processes).
    const perCall =
      (change: (p: FsProvider) => FsProvider): Prepare =>
      async (scenario, point) => {
        const files: Record<string, string | { symlink: string }> = {};
        scenario.initial.forEach((text, k) => {
          if (text !== undefined) files[`/w/${fileName(k)}`] = text;
          files[`/w/${linkName(k)}`] = { symlink: `/w/${fileName(k)}` };
        });
        const provider = change(createMemoryProvider({ files, cwd: '/w' }));
        const fs = withPoints(seamPerCall(withPoints(provider, PROVIDER_METHODS, point)), FS_METHODS, point);
        return { fs, dir: '/w', raw: createFs(provider) };
      };

    test('memory with a modify (read-modify-write in the provider), a seam per call', async () => {
      await fc.assert(property(perCall((p) => withModify(p, false))), { numRuns: size(200, 2000, 50) });
    }, 300_000);

    // The check must be able to fail: the same property over providers with one bug each.
    const mutant = (name: string, broken: (p: FsProvider) => FsProvider) =>
      test(`catches a provider that ${name}`, async () => {
        counting = false;
        try {
          // Without memory's own modify, so every write goes through the broken swap.
          const out = await fc.check(property(perCall((p) => broken(swapOnly(p)))), { numRuns: 300 });
          expect(out.failed, 'the broken provider passed').toBe(true);
          // Without the lock an edit runs on bytes its owner never saw; whichever check sees that first names it.
          expect(String(out.errorInstance)).toMatch(
            /lost update|edit's result|stored other bytes|replaced a version|reference gives|reference edit of the text the owner saw disagrees/,
          );
        } finally {
          counting = true;
        }
      }, 120_000);
    mutant('ignores the version guard', (p) => ({ ...p, swap: (t, o) => p.swap(t, { ...o, expect: { kind: 'any' } }) }));
    mutant('compares, then yields before it publishes (not atomic)', (p) => ({
      ...p,
      async swap(t, o) {
        const before = await p.read(t, { maxBytes: 1 << 20 }).catch(() => undefined);
        if (!expectHolds(o.expect, before)) return { ok: false, current: observe(before) };
        await new Promise((r) => setImmediate(r));
        return p.swap(t, { ...o, expect: { kind: 'any' } });
      },
    }));

    mutant('has a modify that reads, then writes blind (not exclusive)', (p) => withModify(p, true));

    test('the chain check catches a lost update', () => {
      // Two writers from one base, both reported successful: one overwrote the other blind.
      const v0 = vOf('base');
      expect(eulerianPath(v0, vOf('B'), [{ from: v0, to: vOf('A') }, { from: v0, to: vOf('B') }])).toBe(false);
      // The second writer had seen the first one's result: no update lost.
      expect(eulerianPath(v0, vOf('B'), [{ from: v0, to: vOf('A') }, { from: vOf('A'), to: vOf('B') }])).toBe(true);
      // A write back to an earlier content (A → base) is a legitimate step of the chain.
      expect(eulerianPath(v0, vOf('B'), [{ from: v0, to: vOf('A') }, { from: vOf('A'), to: v0 }, { from: v0, to: vOf('B') }])).toBe(true);
      expect(eulerianPath(ABSENT, ABSENT, [])).toBe(true);
      expect(eulerianPath(ABSENT, v0, [])).toBe(false);
    });
  });
}
