import { AssertionError } from 'node:assert';
import { posix } from 'node:path';
import fc from 'fast-check';
import { createFs, type FileSystem, type FsErrorCode, type FsProvider, type FsTarget } from '../seam/index.js';
import type { ConformanceOptions, ConformanceSubject, RuleInfo } from './types.js';

export const DEFAULT_NUM_RUNS = 40;

export interface Settings {
  readonly numRuns: number;
  readonly shrink: boolean;
  readonly seed?: number;
  readonly path?: string;
}

/** Options first, then the environment, then defaults. */
export function resolveSettings(options: ConformanceOptions = {}): Settings {
  const env = typeof process === 'undefined' ? {} : process.env;
  const numRuns = options.numRuns ?? parseInteger(env.DSH_FS_CONFORMANCE_RUNS, 'DSH_FS_CONFORMANCE_RUNS') ?? DEFAULT_NUM_RUNS;
  if (!Number.isSafeInteger(numRuns) || numRuns < 1) throw new RangeError(`numRuns must be a positive integer, got ${numRuns}`);
  const seed = options.seed ?? parseInteger(env.DSH_FS_CONFORMANCE_SEED, 'DSH_FS_CONFORMANCE_SEED');
  const path = options.path ?? (env.DSH_FS_CONFORMANCE_PATH || undefined);
  const shrink = options.shrink ?? !['0', 'false', 'no'].includes((env.DSH_FS_CONFORMANCE_SHRINK ?? '').trim().toLowerCase());
  return { numRuns, shrink, ...(seed === undefined ? {} : { seed }), ...(path === undefined ? {} : { path }) };
}

function parseInteger(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new RangeError(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return n;
}

export interface Rule extends RuleInfo {
  /** A reason to skip the rule for this subject, or undefined when it applies. */
  skipIf?(subject: ConformanceSubject): string | undefined;
  run(ctx: RuleContext): Promise<void>;
}

export class RuleContext {
  #next = 0;

  constructor(
    readonly subject: ConformanceSubject,
    readonly settings: Settings,
    readonly ruleId: string,
  ) {}

  get fs(): FileSystem {
    return this.subject.fs;
  }

  /**
   * The filesystem for concurrency rules: with a provider, every call gets a seam of its own
   * (as from separate processes), so the provider's swap alone must keep them apart.
   */
  get concurrentFs(): FileSystem {
    const provider = this.subject.provider;
    if (provider === undefined) return this.subject.fs;
    this.#perCall ??= seamPerCall(provider, this.subject.fs);
    return this.#perCall;
  }

  #perCall: FileSystem | undefined;

  /** A fresh, not yet existing directory under `base`; each property run gets its own. */
  dir(label = 'run'): string {
    return posix.join(this.subject.base, `${this.ruleId.toLowerCase()}-${label}-${++this.#next}`);
  }

  resolve(path: string): Promise<FsTarget> {
    return this.fs.resolve(path);
  }

  /** Runs a property with the suite's seed and run count (scaled by `weight`), naming the check on failure. */
  async check<Ts>(label: string, property: fc.IAsyncProperty<Ts>, weight = 1): Promise<void> {
    const numRuns = Math.max(1, Math.round(this.settings.numRuns * weight));
    try {
      await fc.assert(property, {
        numRuns,
        ...(this.settings.seed === undefined ? {} : { seed: this.settings.seed }),
        ...(this.settings.path === undefined ? {} : { path: this.settings.path }),
        includeErrorInReport: true,
        ...(this.settings.shrink ? {} : { endOnFailure: true }),
      });
    } catch (err) {
      throw labelled(label, err);
    }
  }

  /** Runs a fixed example, naming it on failure. */
  async example(label: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      throw labelled(label, err);
    }
  }
}

/** Every call of the contract, in the order of the README's table. */
export const FS_CALLS = [
  'resolve',
  'stat',
  'readText',
  'streamText',
  'readBytes',
  'listDir',
  'writeText',
  'writeBytes',
  'editText',
  'remove',
  'mkdir',
  'rmdir',
  'rename',
  'walk',
] as const satisfies readonly (keyof FileSystem)[];

/** A FileSystem whose every call runs through a new `createFs(provider)`, with `like`'s cwd. */
export function seamPerCall(provider: FsProvider, like: FileSystem): FileSystem {
  const out: Record<string, unknown> = {
    cwd: like.cwd,
    ...(like.root === undefined ? {} : { root: like.root }),
    contains: like.contains.bind(like),
    childKey: like.childKey.bind(like),
  };
  for (const name of FS_CALLS) {
    out[name] = (...args: unknown[]) => {
      const fs = createFs(provider, { cwd: like.cwd });
      return (fs[name] as (...a: unknown[]) => unknown).apply(fs, args);
    };
  }
  return out as unknown as FileSystem;
}

function labelled(label: string, err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  // No `cause`: fast-check's message already carries the inner error, and runners print causes twice.
  const out = new Error(`[${label}] ${message}`);
  if (err instanceof Error && err.stack) out.stack = `${out.name}: ${out.message}\n${err.stack.split('\n').slice(1).join('\n')}`;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Assertions. The suite runs with or without vitest, so it brings its own small set.
// ---------------------------------------------------------------------------------------------

export interface FsErrorLike {
  readonly name: string;
  readonly code: FsErrorCode;
  readonly message: string;
}

/** Duck-typed, so a second copy of the package (src and dist) is still recognised. */
export function isFsErrorLike(err: unknown): err is FsErrorLike {
  return (
    err instanceof Error && err.name === 'FsError' && typeof (err as { code?: unknown }).code === 'string'
  );
}

export function fail(message: string): never {
  throw new AssertionError({ message });
}

export function ok(condition: unknown, message: string): asserts condition {
  if (!condition) fail(message);
}

export function equal<T>(actual: T, expected: T, message: string): void {
  if (!Object.is(actual, expected)) fail(`${message}: expected ${show(expected)}, got ${show(actual)}`);
}

export function notEqual<T>(actual: T, unexpected: T, message: string): void {
  if (Object.is(actual, unexpected)) fail(`${message}: both are ${show(actual)}`);
}

export function deepEqual(actual: unknown, expected: unknown, message: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    fail(`${message}: expected ${show(expected)}, got ${show(actual)}`);
  }
}

export function bytesEqual(actual: Uint8Array, expected: Uint8Array, message: string): void {
  if (Buffer.compare(Buffer.from(actual), Buffer.from(expected)) !== 0) {
    fail(`${message}: expected bytes ${showBytes(expected)}, got ${showBytes(actual)}`);
  }
}

/** Awaits `promise` and requires it to reject with an FsError of `code`; returns that error. */
export async function rejects(promise: Promise<unknown>, code: FsErrorCode, what: string): Promise<FsErrorLike> {
  let value: unknown;
  try {
    value = await promise;
  } catch (err) {
    if (!isFsErrorLike(err)) fail(`${what}: expected FsError ${code}, got a non-FsError: ${describeError(err)}`);
    if (err.code !== code) fail(`${what}: expected FsError ${code}, got ${err.code}: ${err.message}`);
    return err;
  }
  return fail(`${what}: expected FsError ${code}, but it succeeded with ${show(value)}`);
}

/** Awaits `promise` and returns its value, or the FsError it rejected with (anything else fails). */
export async function settle<T>(promise: Promise<T>, what: string): Promise<{ ok: true; value: T } | { ok: false; error: FsErrorLike }> {
  try {
    return { ok: true, value: await promise };
  } catch (err) {
    if (!isFsErrorLike(err)) fail(`${what}: rejected with a non-FsError: ${describeError(err)}`);
    return { ok: false, error: err };
  }
}

export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return `${err.name}${code === undefined ? '' : ` ${String(code)}`}: ${err.message}`;
  }
  return show(err);
}

export function show(value: unknown): string {
  if (value instanceof Uint8Array) return showBytes(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 400 ? `${value.slice(0, 400)}…` : value);
  try {
    const json = JSON.stringify(value, (_k, v: unknown) => (v instanceof Uint8Array ? showBytes(v) : v));
    if (json === undefined) return String(value);
    return json.length > 800 ? `${json.slice(0, 800)}…` : json;
  } catch {
    return String(value);
  }
}

export function showBytes(bytes: Uint8Array): string {
  const b = Buffer.from(bytes);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(b.subarray(0, 200));
  const hex = b.subarray(0, 48).toString('hex');
  return `<${b.byteLength} bytes ${JSON.stringify(text)}${b.byteLength > 200 ? '…' : ''} hex ${hex}${b.byteLength > 48 ? '…' : ''}>`;
}

export function utf8(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'utf8'));
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts.map((p) => Buffer.from(p))));
}

export const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);

/** The whole content of a file through the contract, for "nothing was written" checks. */
export async function bytesOf(fs: FileSystem, target: FsTarget): Promise<Uint8Array | undefined> {
  const info = await fs.stat(target);
  if (info === undefined) return undefined;
  const { bytes } = await fs.readBytes(target, { maxBytes: Number.MAX_SAFE_INTEGER });
  return bytes;
}

/** Writes exact bytes at a fresh path and returns its target and version. */
export async function seedFile(fs: FileSystem, path: string, content: string | Uint8Array) {
  const target = await fs.resolve(path);
  const bytes = typeof content === 'string' ? utf8(content) : content;
  const out = await fs.writeBytes(target, bytes);
  return { target, bytes, version: out.version };
}

/** Requires the file to hold exactly `bytes` at `version` (nothing written since). */
export async function expectUnchanged(
  fs: FileSystem,
  target: FsTarget,
  expected: { bytes: Uint8Array | undefined; version?: string },
  what: string,
): Promise<void> {
  const now = await bytesOf(fs, target);
  if (expected.bytes === undefined) {
    ok(now === undefined, `${what}: the file should still be absent, but it holds ${now && showBytes(now)}`);
    return;
  }
  ok(now !== undefined, `${what}: the file should be unchanged, but it is gone`);
  bytesEqual(now, expected.bytes, `${what}: the file should be byte-identical`);
  if (expected.version !== undefined) {
    const info = await fs.stat(target);
    equal(info?.version as string | undefined, expected.version, `${what}: the version should be unchanged`);
  }
}

// ---------------------------------------------------------------------------------------------
// Interleavings (G2, G3, G5) and aliases (P3, G3).
// ---------------------------------------------------------------------------------------------

/**
 * Starts each task when the scheduler releases its group's gate: tasks that share a group start
 * in the same tick, groups start in an order fast-check chooses (and shrinks).
 */
export async function interleave<T>(
  s: fc.Scheduler,
  tasks: readonly (() => Promise<T>)[],
  groups: readonly number[],
): Promise<PromiseSettledResult<T>[]> {
  const gates = new Map<number, Promise<void>>();
  const running = tasks.map((task, i) => {
    const group = groups[i] ?? 0;
    let gate = gates.get(group);
    if (gate === undefined) {
      gate = s.schedule(Promise.resolve(), `start group ${group}`);
      gates.set(group, gate);
    }
    return gate.then(task);
  });
  const all = Promise.allSettled(running);
  await s.waitFor(all);
  return all;
}

export function describeSettled(results: readonly PromiseSettledResult<unknown>[], labels: readonly string[]): string {
  return results
    .map((r, i) => `${labels[i] ?? i}: ${r.status === 'fulfilled' ? 'ok' : describeError(r.reason)}`)
    .join('; ');
}

/**
 * Different spellings of one file (`name` in `dir`): lexical aliases always, and a relative
 * symlink when the subject supports symlinks. The file need not exist.
 */
export async function aliasesOf(ctx: RuleContext, dir: string, name: string): Promise<{ label: string; target: FsTarget }[]> {
  const { fs } = ctx;
  const out = [
    { label: `${dir}/${name}`, target: await fs.resolve(`${dir}/${name}`) },
    { label: `${dir}/sub/../${name}`, target: await fs.resolve(`${dir}/sub/../${name}`) },
    { label: `./${name} from ${dir}`, target: await fs.resolve(`./${name}`, { cwd: dir }) },
    { label: `${dir}/./${name}`, target: await fs.resolve(`${dir}/./${name}`) },
  ];
  const symlink = ctx.subject.setup?.symlink;
  if (ctx.subject.capabilities?.symlinks && symlink) {
    await symlink.call(ctx.subject.setup, name, `${dir}/link-to-${name}`);
    out.push({ label: `${dir}/link-to-${name} -> ${name}`, target: await fs.resolve(`${dir}/link-to-${name}`) });
    // A link in a parent component, not only the last one.
    await symlink.call(ctx.subject.setup, posix.basename(dir), `${dir}-alias`);
    out.push({ label: `${dir}-alias/${name} (${dir}-alias -> ${posix.basename(dir)})`, target: await fs.resolve(`${dir}-alias/${name}`) });
  }
  return out;
}
