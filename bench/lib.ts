import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * One measured quantity. Every value is "lower is better" (a time or a size), so a ratio above 1
 * always means the subject costs more than its baseline.
 */
export interface BenchRow {
  /** Section of the table: read, edit, tool-stack, overlay, versions, scale, search, … */
  readonly section: string;
  /** The workload, e.g. "64 MiB, window at end". */
  readonly case: string;
  /** What was measured, e.g. "read tool (local)". */
  readonly subject: string;
  readonly unit: 'ms' | 'µs/op' | 'B/file' | 'B/fork' | 'MiB';
  /** Median of the repetitions. */
  readonly value: number;
  readonly min?: number;
  readonly max?: number;
  readonly reps?: number;
  /** The comparison, measured in the same run. */
  readonly baseline?: string;
  readonly baselineValue?: number;
  /** value / baselineValue. */
  readonly ratio?: number;
  /** value − baselineValue, for goals stated as an added cost. */
  readonly delta?: number;
  /** min / the baseline's min: on a busy machine the fastest runs show the intrinsic cost best. */
  readonly minRatio?: number;
  /** The goal as stated ("≤ 1.5× safe baseline", "≤ +15 µs/op"), and whether it was met. */
  readonly goal?: string;
  readonly met?: boolean;
  readonly note?: string;
}

export interface Timing {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly reps: number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function summarise(values: readonly number[]): Timing {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), reps: values.length };
}

export type Variant = () => unknown;

export interface InterleaveOptions<K extends string> {
  readonly reps: number;
  readonly warmup?: number;
  /** Untimed work before each timed run of a variant (fixture reset, observation, …). */
  readonly before?: (variant: K) => unknown;
  /** Divides each run's time (a batch of `ops` operations gives a per-operation time). */
  readonly ops?: number;
  /** Scale of the result: 1 = ms, 1000 = µs. */
  readonly scale?: number;
  /** Milliseconds clock (tests inject one). */
  readonly clock?: () => number;
}

/**
 * Times each variant `reps` times after `warmup` untimed runs. Runs are interleaved (A B C, B C A,
 * …) so drift from other load on a shared machine hits every variant alike rather than one.
 */
export async function interleave<K extends string>(
  variants: Readonly<Record<K, Variant>>,
  options: InterleaveOptions<K>,
): Promise<Record<K, Timing>> {
  const keys = Object.keys(variants) as K[];
  const samples = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  const warmup = options.warmup ?? 1;
  const ops = options.ops ?? 1;
  const scale = options.scale ?? 1;
  const clock = options.clock ?? (() => performance.now());
  for (let round = 0; round < warmup + options.reps; round++) {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[(i + round) % keys.length]!;
      await options.before?.(key);
      const t0 = clock();
      await variants[key]();
      const elapsed = clock() - t0;
      if (round >= warmup) samples[key].push((elapsed * scale) / ops);
    }
  }
  return Object.fromEntries(keys.map((k) => [k, summarise(samples[k])])) as Record<K, Timing>;
}

/** A row for `subject`, compared with `baseline` when given. */
export function row(
  fields: { section: string; case: string; subject: string; unit: BenchRow['unit']; note?: string },
  subject: Timing | number,
  baseline?: { name: string; timing: Timing | number },
  goal?: { text: string; maxRatio?: number; maxDelta?: number },
): BenchRow {
  const s = typeof subject === 'number' ? { median: subject } : subject;
  const b = baseline === undefined ? undefined : typeof baseline.timing === 'number' ? baseline.timing : baseline.timing.median;
  const ratio = b === undefined || b === 0 ? undefined : s.median / b;
  const bMin = baseline === undefined || typeof baseline.timing === 'number' ? undefined : baseline.timing.min;
  const minRatio = 'min' in s && bMin !== undefined && bMin > 0 ? s.min / bMin : undefined;
  const delta = goal?.maxDelta !== undefined && b !== undefined ? s.median - b : undefined;
  let met: boolean | undefined;
  if (goal?.maxRatio !== undefined && ratio !== undefined) met = ratio <= goal.maxRatio;
  if (goal?.maxDelta !== undefined && delta !== undefined) met = delta <= goal.maxDelta;
  return {
    ...fields,
    value: s.median,
    ...('min' in s ? { min: s.min, max: s.max, reps: s.reps } : {}),
    ...(baseline === undefined ? {} : { baseline: baseline.name, baselineValue: b }),
    ...(ratio === undefined ? {} : { ratio }),
    ...(delta === undefined ? {} : { delta }),
    ...(minRatio === undefined ? {} : { minRatio }),
    ...(goal === undefined ? {} : { goal: goal.text }),
    ...(met === undefined ? {} : { met }),
  };
}

// ---------------------------------------------------------------------------------------------
// Table
// ---------------------------------------------------------------------------------------------

export function formatValue(value: number, unit: BenchRow['unit']): string {
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3;
  return `${value.toFixed(digits)} ${unit}`;
}

const COLUMNS = ['section', 'case', 'subject', 'median', 'baseline', 'baseline median', 'ratio', 'ratio of mins', 'goal'] as const;

function cells(r: BenchRow): string[] {
  const goal = r.goal === undefined ? '' : `${r.met === undefined ? '' : r.met ? 'met' : 'MISSED'}: ${r.goal}`;
  return [
    r.section,
    r.case,
    r.note === undefined ? r.subject : `${r.subject} (${r.note})`,
    formatValue(r.value, r.unit),
    r.baseline ?? '',
    r.baselineValue === undefined ? '' : formatValue(r.baselineValue, r.unit),
    (r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}×`) + (r.delta === undefined ? '' : ` (${r.delta >= 0 ? '+' : '−'}${formatValue(Math.abs(r.delta), r.unit)})`),
    r.minRatio === undefined ? '' : `${r.minRatio.toFixed(2)}×`,
    goal,
  ];
}

/** A Markdown table (readable as plain text, pasteable into RESULTS.md). */
export function formatTable(rows: readonly BenchRow[]): string {
  const body = rows.map(cells);
  const widths = COLUMNS.map((h, i) => Math.max(h.length, ...body.map((c) => c[i]!.length)));
  const line = (c: readonly string[]) => `| ${c.map((s, i) => s.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(COLUMNS), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Environment
// ---------------------------------------------------------------------------------------------

export interface MachineInfo {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly totalMemGiB: number;
  readonly node: string;
  readonly kernel: string;
  readonly tmpdir: string;
  /** 1, 5 and 15 minute load averages when the run started: other work skews every figure. */
  readonly loadavg: readonly number[];
}

export function machine(): MachineInfo {
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    totalMemGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: release(),
    tmpdir: tmpdir(),
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

let gcFn: (() => void) | undefined;

/** A full garbage collection, whether or not the process was started with --expose-gc. */
export function collect(): void {
  if (gcFn === undefined) {
    const global = (globalThis as { gc?: () => void }).gc;
    if (typeof global === 'function') gcFn = global;
    else {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    }
  }
  gcFn();
  gcFn();
}

/** Heap plus off-heap (Buffer) bytes in use, after a full collection. */
export function usedBytes(): number {
  collect();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** A fresh directory under the OS temp dir, removed by `cleanup`. */
export async function tempDir(label: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `dsh-fs-bench-${label}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const MiB = 1024 * 1024;
export const KiB = 1024;

/** Repetitions, scaled down with BENCH_QUICK=1 for a fast smoke run. */
export function reps(full: number): number {
  return process.env.BENCH_QUICK ? Math.max(1, Math.min(full, 2)) : full;
}

/**
 * Rows from a benchmark owned elsewhere (e.g. search), checked field by field so a malformed row
 * is reported instead of printed as garbage.
 */
export function checkRows(source: string, rows: unknown): BenchRow[] {
  if (!Array.isArray(rows)) throw new TypeError(`${source}: expected an array of rows, got ${typeof rows}`);
  const units: readonly string[] = ['ms', 'µs/op', 'B/file', 'B/fork'];
  return rows.map((r: unknown, i) => {
    const x = r as Partial<Record<keyof BenchRow, unknown>> | null;
    const ok =
      typeof x === 'object' &&
      x !== null &&
      typeof x.section === 'string' &&
      typeof x.case === 'string' &&
      typeof x.subject === 'string' &&
      typeof x.unit === 'string' &&
      units.includes(x.unit) &&
      typeof x.value === 'number' &&
      Number.isFinite(x.value);
    if (!ok) throw new TypeError(`${source}: row ${i} is not a BenchRow (section, case, subject, unit, value): ${JSON.stringify(r)}`);
    return x as BenchRow;
  });
}
