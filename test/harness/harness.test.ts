import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import {
  FsError,
  FsVersion,
  createEventGate,
  createHarness,
  type FsTarget,
  type HarnessContext,
  type Tool,
} from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';

const target: FsTarget = { targetKey: 'k' as FsTarget['targetKey'], displayPath: '/w/a.txt' };
const v1 = FsVersion('v1');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('event gate', () => {
  it('is unconditional without deciders', async () => {
    const gate = createEventGate();
    expect(await gate.writeIntent(target, 'o')).toBeUndefined();
    expect(await gate.editIntent(target, 'o')).toBeUndefined();
    expect(gate.hasDecider('fs/write-intent')).toBe(false);
  });

  it('refuses a second decider instead of replacing the first', async () => {
    const gate = createEventGate();
    const remove = gate.decide('fs/write-intent', () => ({ kind: 'createIfAbsent' }));
    expect(() => gate.decide('fs/write-intent', () => undefined)).toThrow(FsError);
    expect(() => gate.decide('fs/write-intent', () => undefined)).toThrow(/already has a decider/);
    expect(await gate.writeIntent(target, 'o')).toEqual({ kind: 'createIfAbsent' });
    // The edit slot is separate.
    gate.decide('fs/edit-intent', () => ({ version: v1 }));
    expect(await gate.editIntent(target, 'o')).toEqual({ version: v1 });

    remove();
    remove();
    expect(await gate.writeIntent(target, 'o')).toBeUndefined();
    gate.decide('fs/write-intent', () => ({ kind: 'replaceIfVersion', version: v1 }));
    expect(await gate.writeIntent(target, 'o')).toEqual({ kind: 'replaceIfVersion', version: v1 });
  });

  it('passes the target and owner to deciders and keeps FsError refusals as they are', async () => {
    const gate = createEventGate();
    const owner = { session: 1 };
    const seen: unknown[] = [];
    gate.decide('fs/edit-intent', async (t, o) => {
      seen.push(t, o);
      throw new FsError('FS_NOT_OBSERVED', 'not yet');
    });
    await expect(gate.editIntent(target, owner)).rejects.toMatchObject({ code: 'FS_NOT_OBSERVED', message: 'not yet' });
    expect(seen).toEqual([target, owner]);
  });

  it('turns a decider crash or a malformed decision into an FsError', async () => {
    const gate = createEventGate();
    gate.decide('fs/write-intent', () => {
      throw new TypeError('oops');
    });
    const crash = await gate.writeIntent(target, 'o').catch((e: unknown) => e);
    expect(crash).toBeInstanceOf(FsError);
    expect(crash).toMatchObject({ code: 'FS_IO_ERROR' });
    expect((crash as Error).message).toContain('oops');

    const bad = createEventGate();
    bad.decide('fs/write-intent', () => ({ kind: 'replaceIfVersion' }) as never);
    bad.decide('fs/edit-intent', () => ({ version: '' }) as never);
    await expect(bad.writeIntent(target, 'o')).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    await expect(bad.editIntent(target, 'o')).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });

  it('refuses unknown events', () => {
    const gate = createEventGate();
    expect(() => gate.decide('fs/read-intent' as never, (() => undefined) as never)).toThrow(/unknown decision event/);
    expect(() => gate.on('fs/write-intent' as never, () => undefined)).toThrow(/only "fs\/observed"/);
  });

  it('tells every fs/observed listener and reports failures without throwing', async () => {
    const reported: Array<{ error: unknown; event: string; path: string }> = [];
    const gate = createEventGate({ onListenerError: (error, info) => reported.push({ error, event: info.event, path: info.target.displayPath }) });
    const calls: string[] = [];
    gate.on('fs/observed', () => {
      calls.push('first');
      throw new Error('first failed');
    });
    gate.on('fs/observed', async () => {
      calls.push('second');
      throw new Error('second failed');
    });
    const off = gate.on('fs/observed', (t, o, owner) => {
      calls.push(`third ${o.kind} ${String(owner)}`);
    });
    expect(() => gate.observed(target, { kind: 'present', version: v1 }, 'o')).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(['first', 'second', 'third present o']);
    expect(reported.map((r) => [(r.error as Error).message, r.event, r.path])).toEqual([
      ['first failed', 'fs/observed', '/w/a.txt'],
      ['second failed', 'fs/observed', '/w/a.txt'],
    ]);
    off();
    gate.observed(target, { kind: 'absent' }, 'o');
    expect(calls.filter((c) => c.startsWith('third'))).toHaveLength(1);
  });

  it('falls back to console.warn, also when the error handler itself throws', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const plain = createEventGate();
    plain.on('fs/observed', () => {
      throw new Error('listener broke');
    });
    plain.observed(target, { kind: 'absent' }, 'o');
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain('listener broke');

    const handled = createEventGate({
      onListenerError: () => {
        throw new Error('handler broke');
      },
    });
    handled.on('fs/observed', () => {
      throw new Error('listener broke');
    });
    expect(() => handled.observed(target, { kind: 'absent' }, 'o')).not.toThrow();
    expect(warn).toHaveBeenCalledTimes(2);
    expect(String(warn.mock.calls[1]![0])).toContain('handler broke');
  });

  it('refuses malformed observations from the emitter', () => {
    const gate = createEventGate();
    expect(() => gate.observed(target, { kind: 'present', version: '' as FsVersion }, 'o')).toThrow(/invalid observation/);
    expect(() => gate.observed(target, { kind: 'seen' } as never, 'o')).toThrow(/invalid observation/);
  });
});

describe('tool registry', () => {
  const echo: Tool<{ word: string }, { word: string; owner: unknown; cwd: string }> = {
    name: 'echo',
    description: 'Echo a word.',
    schema: z.strictObject({ word: z.string().describe('The word.') }),
    async execute(args, call) {
      if (args.word === 'crash') throw new RangeError('raw failure');
      if (args.word === 'wait') {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      return { word: args.word, owner: call.owner, cwd: call.cwd };
    },
    render: (v) => `echo: ${v.word}`,
  };
  const make = (): HarnessContext => {
    const ctx = createHarness({ fs: createMemoryFs({ cwd: '/w' }) });
    ctx.tools.register(echo);
    return ctx;
  };

  it('runs a tool and renders its value', async () => {
    const ctx = make();
    const owner = { id: 1 };
    const r = await ctx.tools.execute('echo', { word: 'hi' }, { owner });
    expect(r).toEqual({ isError: false, text: 'echo: hi', value: { word: 'hi', owner, cwd: '/w' } });
    const inSub = await ctx.tools.execute('echo', { word: 'hi' }, { owner: 'o', cwd: 'sub' });
    expect((inSub.value as { cwd: string }).cwd).toBe('/w/sub');
  });

  it('lists tools with their JSON Schema', () => {
    expect(make().tools.list()).toEqual([
      {
        name: 'echo',
        description: 'Echo a word.',
        inputSchema: {
          type: 'object',
          properties: { word: { type: 'string', description: 'The word.' } },
          required: ['word'],
          additionalProperties: false,
        },
      },
    ]);
  });

  it('never rejects: unknown tools, bad owners, crashes and aborts are error results with a code', async () => {
    const ctx = make();
    const unknown = await ctx.tools.execute('nope', {}, { owner: 'o' });
    expect(unknown).toEqual({
      isError: true,
      text: 'Error: unknown tool "nope"; available tools: echo',
      error: { name: 'FsError', code: 'FS_INVALID_ARGUMENT' },
    });
    for (const exec of [undefined, {}, { owner: '' }, { owner: 5 }, { owner: null }]) {
      const r = await ctx.tools.execute('echo', { word: 'x' }, exec as never);
      expect(r.error?.code, JSON.stringify(exec)).toBe('FS_INVALID_ARGUMENT');
      expect(r.text).toMatch(/owner/);
    }
    const crash = await ctx.tools.execute('echo', { word: 'crash' }, { owner: 'o' });
    expect(crash).toMatchObject({ isError: true, error: { name: 'FsError', code: 'FS_IO_ERROR' } });
    expect(crash.text).toBe('Error: echo failed: raw failure');

    const controller = new AbortController();
    controller.abort();
    const aborted = await ctx.tools.execute('echo', { word: 'x' }, { owner: 'o', signal: controller.signal });
    expect(aborted.error?.code).toBe('FS_ABORTED');
  });

  it('refuses duplicate and malformed tools', () => {
    const ctx = make();
    expect(() => ctx.tools.register(echo)).toThrow(/already registered/);
    expect(() => ctx.tools.register({ ...echo, name: 'bad name' })).toThrow(FsError);
    expect(() => ctx.tools.register({ ...echo, name: 'x', schema: {} as never })).toThrow(/zod schema/);
    const remove = ctx.tools.register({ ...echo, name: 'echo2' });
    expect(ctx.tools.has('echo2')).toBe(true);
    remove();
    expect(ctx.tools.has('echo2')).toBe(false);
  });
});

describe('createHarness', () => {
  it('applies plugin objects and functions in order, and refuses a plugin name twice', () => {
    const order: string[] = [];
    const ctx = createHarness({
      fs: createMemoryFs(),
      plugins: [{ name: 'one', apply: () => void order.push('one') }, () => void order.push('fn'), { name: 'two', apply: () => void order.push('two') }],
    });
    expect(order).toEqual(['one', 'fn', 'two']);
    expect(ctx.plugins).toEqual(['one', 'two']);
    expect(() => ctx.use({ name: 'one', apply: () => undefined })).toThrow(/already applied/);
    expect(() => ctx.use({ name: 'x' } as never)).toThrow(FsError);
  });

  it('refuses a second policy on the same harness', () => {
    const ctx = createHarness({ fs: createMemoryFs(), plugins: [createObservationPolicy()] });
    const other = createObservationPolicy();
    expect(() => other.apply(ctx)).toThrow(/fs\/write-intent already has a decider/);
    // The failed apply left the first policy's deciders in place and installed nothing.
    expect(ctx.events.hasDecider('fs/edit-intent')).toBe(true);
  });

  it('keeps harnesses independent', async () => {
    const fs = createMemoryFs();
    const a = createHarness({ fs, plugins: [createObservationPolicy()] });
    const b = createHarness({ fs });
    expect(a.events).not.toBe(b.events);
    expect(a.tools).not.toBe(b.tools);
    expect(await b.events.writeIntent(target, 'o')).toBeUndefined();
    expect(await a.events.writeIntent(target, 'o')).toEqual({ kind: 'createIfAbsent' });
  });

  it('needs a FileSystem and resolves its cwd against it', () => {
    expect(() => createHarness({} as never)).toThrow(FsError);
    expect(() => createHarness(undefined as never)).toThrow(FsError);
    const fs = createMemoryFs({ cwd: '/w' });
    expect(createHarness({ fs }).cwd).toBe('/w');
    expect(createHarness({ fs, cwd: 'sub/../x' }).cwd).toBe('/w/x');
  });
});
