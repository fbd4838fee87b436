import { AsyncLocalStorage } from 'node:async_hooks';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { createFs, createHarness, type FsVersion, type HarnessPlugin, type ToolResult } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, type EditValue, type ReadValue, type WriteValue } from '../../src/tools/index.js';

const RUNS = Number(process.env.DSH_FS_PROPERTY_RUNS ?? 150);
const FILES = ['/w/a.txt', '/w/b.txt'] as const;
const OWNERS = ['o1', 'o2', 'o3'] as const;

type Call =
  | { readonly tool: 'read'; readonly owner: string; readonly file: string; readonly offset?: number; readonly limit?: number }
  | { readonly tool: 'write'; readonly owner: string; readonly file: string; readonly content: string }
  | { readonly tool: 'edit'; readonly owner: string; readonly file: string; readonly old: string; readonly new: string; readonly all: boolean };
type Step =
  | { readonly kind: 'call'; readonly call: Call }
  | { readonly kind: 'parallel'; readonly calls: readonly Call[] }
  | { readonly kind: 'outside-write'; readonly file: string; readonly content: string }
  | { readonly kind: 'outside-remove'; readonly file: string };

// Small alphabets, so edits match, rewrites repeat old content and CRLF appears.
const text = fc.array(fc.constantFrom('x', 'y', 'xy', '\n', '\r\n', ' '), { maxLength: 8 }).map((a) => a.join(''));
const owner = fc.constantFrom(...OWNERS);
const file = fc.constantFrom(...FILES);
const callArb = (who: fc.Arbitrary<string>): fc.Arbitrary<Call> =>
  fc.oneof(
    fc.record(
      {
        tool: fc.constant('read' as const),
        owner: who,
        file,
        offset: fc.integer({ min: 1, max: 4 }),
        limit: fc.integer({ min: 1, max: 3 }),
      },
      { requiredKeys: ['tool', 'owner', 'file'] },
    ),
    fc.record({ tool: fc.constant('write' as const), owner: who, file, content: text }),
    fc.record({
      tool: fc.constant('edit' as const),
      owner: who,
      file,
      old: fc.constantFrom('x', 'y', 'xy', 'x\n', 'y\r\n'),
      new: fc.constantFrom('', 'z', 'x', 'yy\n'),
      all: fc.boolean(),
    }),
  );
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: callArb(owner).map((call) => ({ kind: 'call' as const, call })) },
  {
    weight: 2,
    arbitrary: fc
      .shuffledSubarray([...OWNERS], { minLength: 2, maxLength: 3 })
      .chain((who) => fc.tuple(...who.map((o) => callArb(fc.constant(o)))))
      .map((calls) => ({ kind: 'parallel' as const, calls })),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('outside-write' as const), file, content: text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('outside-remove' as const), file }) },
);
const initialArb = fc.tuple(fc.option(text, { nil: undefined }), fc.option(text, { nil: undefined }));

interface Landing {
  readonly owner: string | undefined;
  readonly key: string;
  /** The version the mutation replaced; undefined for a create. */
  readonly base: FsVersion | undefined;
}

type Seen = { kind: 'absent' } | { kind: 'present'; version: FsVersion };

const stats = { landed: 0, overwrites: 0 };

/**
 * Runs the steps through ctx.tools and checks, for every mutation that landed, that its owner had
 * been shown the version it replaced (or, for a create, had seen the file absent or never).
 */
async function check(plugins: () => HarnessPlugin[], initial: readonly (string | undefined)[], steps: readonly Step[]): Promise<void> {
  const provider = createMemoryProvider({ cwd: '/w' });
  const vol = provider.volume;
  FILES.forEach((f, i) => {
    const content = initial[i];
    if (content !== undefined) vol.writeFileSync(f, content);
  });

  const whose = new AsyncLocalStorage<string>();
  const landings: Landing[] = [];
  // Landings are recorded at the swap: without memory's own modify, every write goes through it.
  delete (provider as { modify?: unknown }).modify;
  const swap = provider.swap.bind(provider);
  provider.swap = async (target, request) => {
    // The seam swaps from the version it read (a create expects nothing there).
    const base = request.expect.kind === 'present' ? request.expect.version : undefined;
    const done = await swap(target, request);
    if (done.ok && request.bytes !== null) landings.push({ owner: whose.getStore(), key: target.targetKey, base });
    return done;
  };

  const ctx = createHarness({ fs: createFs(provider), plugins: plugins() });
  // What each owner has been shown, from the values the tools returned to it.
  const seen = new Map<string, Map<string, Seen>>(OWNERS.map((o) => [o, new Map()]));

  const run = (c: Call): Promise<ToolResult> =>
    whose.run(c.owner, () => {
      const exec = { owner: c.owner };
      if (c.tool === 'read') {
        const args = { file_path: c.file, ...(c.offset ? { offset: c.offset } : {}), ...(c.limit ? { limit: c.limit } : {}) };
        return ctx.tools.execute('read', args, exec);
      }
      if (c.tool === 'write') return ctx.tools.execute('write', { file_path: c.file, content: c.content }, exec);
      return ctx.tools.execute('edit', { file_path: c.file, old_string: c.old, new_string: c.new, replace_all: c.all }, exec);
    });
  const learn = (c: Call, r: ToolResult) => {
    const mine = seen.get(c.owner)!;
    if (!r.isError) {
      const version = (r.value as ReadValue | WriteValue | EditValue).version;
      mine.set(c.file, { kind: 'present', version });
    } else if (c.tool === 'read' && r.error?.code === 'FS_NOT_FOUND') mine.set(c.file, { kind: 'absent' });
  };
  const verify = (from: number, before: Map<string, Map<string, Seen>>) => {
    for (const l of landings.slice(from)) {
      expect(l.owner, 'every mutation comes from a tool call').toBeDefined();
      const last = before.get(l.owner!)!.get(l.key);
      if (l.base === undefined) {
        expect(last?.kind ?? 'unseen', `${l.owner} created ${l.key} over a file it had seen present`).not.toBe('present');
      } else {
        expect(last, `${l.owner} replaced ${l.key} at a version it had not been shown`).toEqual({ kind: 'present', version: l.base });
        stats.overwrites++;
      }
      stats.landed++;
    }
  };
  const snapshot = () => new Map([...seen].map(([o, m]) => [o, new Map(m)]));

  for (const step of steps) {
    const from = landings.length;
    const before = snapshot();
    if (step.kind === 'call') learn(step.call, await run(step.call));
    else if (step.kind === 'parallel') {
      const results = await Promise.all(step.calls.map(run));
      step.calls.forEach((c, i) => learn(c, results[i]!));
    } else if (step.kind === 'outside-write') vol.writeFileSync(step.file, step.content);
    else if (vol.existsSync(step.file)) vol.unlinkSync(step.file);
    verify(from, before);
  }
}

const property = (plugins: () => HarnessPlugin[]) =>
  fc.asyncProperty(initialArb, fc.array(stepArb, { minLength: 4, maxLength: 30, size: 'medium' }), (initial, steps) => check(plugins, initial, steps));

describe('observation policy over random tool calls from several owners', () => {
  it('never lets a write or edit land on a version its owner has not observed', async () => {
    stats.landed = 0;
    stats.overwrites = 0;
    await fc.assert(property(() => [createObservationPolicy(), fsTools()]), { numRuns: RUNS });
    // The property is only meaningful if mutations, overwrites included, actually happened.
    expect(stats.landed).toBeGreaterThan(RUNS / 2);
    expect(stats.overwrites).toBeGreaterThan(RUNS / 5);
  });

  it('catches a policy that forgets to guard overwrites', async () => {
    const careless: HarnessPlugin = (ctx) => {
      const policy = createObservationPolicy();
      ctx.events.decide('fs/write-intent', () => undefined);
      ctx.events.decide('fs/edit-intent', (t, o) => policy.editIntent(t, o));
      ctx.events.on('fs/observed', (t, obs, o) => policy.record(t, obs, o));
    };
    const result = await fc.check(property(() => [careless, fsTools()]), { numRuns: RUNS });
    expect(result.failed).toBe(true);
  });

  it('catches a policy that lets one owner use another owner\'s observations', async () => {
    const shared: HarnessPlugin = (ctx) => {
      const policy = createObservationPolicy();
      ctx.events.decide('fs/write-intent', (t) => policy.writeIntent(t, 'everyone'));
      ctx.events.decide('fs/edit-intent', (t) => policy.editIntent(t, 'everyone'));
      ctx.events.on('fs/observed', (t, obs) => policy.record(t, obs, 'everyone'));
    };
    const result = await fc.check(property(() => [shared, fsTools()]), { numRuns: RUNS });
    expect(result.failed).toBe(true);
  });
});
