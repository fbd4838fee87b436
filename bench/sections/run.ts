import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { interleave, median, reps, row, tempDir, type BenchRow, type Timing } from '../lib.js';
import { sh } from '../mount-fixture.js';
import { shellWord as quote } from '../../src/cli/advice.js';
import { CLI, NPM_CI_FLAGS, bareOverlay, benchEnv, dshRun, emptyScratch, makeRunTrees, type RunTrees } from '../run-fixture.js';

const SECTION = 'run';
const WRITES = 1_000;

type Subject = 'plain' | 'overlay' | 'fuse' | 'floor';

interface Workload {
  readonly name: string;
  /** Run in the tree's root. */
  readonly script: string;
  /** The overlayfs run's goal against the plain folder (FUSE runs: always 3×). */
  readonly goal: number;
  /** Each round works in places of its own (see `command`). */
  readonly writes?: boolean;
  /** On the trees without node_modules. */
  readonly fresh?: boolean;
  readonly reps: number;
  readonly warmup: number;
  readonly needs?: string;
}

const WORKLOADS: readonly Workload[] = [
  { name: 'npm test (eslint + mocha)', script: 'npm test >/dev/null', goal: 1.2, reps: 3, warmup: 1 },
  { name: 'git status', script: 'git status --porcelain >/dev/null', goal: 1.2, reps: 3, warmup: 1 },
  { name: 'rg -uu PATTERN (incl. node_modules)', script: "rg -uu -c 'function' . >/dev/null", goal: 1.2, reps: 3, warmup: 1, needs: 'rg' },
  // tar skips reading files when its archive is /dev/null itself: a pipe makes it read them.
  { name: 'tar cf - . | wc -c', script: 'tar cf - . | wc -c >/dev/null', goal: 1.2, reps: 3, warmup: 1 },
  { name: 'find . -type f', script: 'find . -type f | wc -l >/dev/null', goal: 1.2, reps: 3, warmup: 1 },
  {
    name: `write ${WRITES.toLocaleString('en')} files (sh loop)`,
    // A new directory each round in the plain folder (the last row on that tree: find and tar are done).
    script: `d=w$$ && mkdir $d && cd $d && i=0; while [ $i -lt ${WRITES} ]; do echo "line $i of a small file" > f$i.txt; i=$((i+1)); done`,
    goal: 1.3,
    writes: true,
    reps: 2,
    warmup: 0,
  },
  {
    name: 'npm ci (no node_modules before)',
    script: `npm ci ${NPM_CI_FLAGS} >/dev/null`,
    goal: 1.3,
    writes: true,
    fresh: true,
    reps: 1,
    warmup: 0,
  },
];

/** The fixed cost of a run: `dsh-fs run -- true` (mount, program, read-back, import of nothing) over `node -e 0`. */
const FIXED_GOAL_MS = 150;

interface Setup {
  readonly t: RunTrees;
  readonly dir: string;
  readonly subjects: readonly Subject[];
  /** Rounds so far, all workloads: names each round's own places. */
  rounds: number;
}

/**
 * Programs through `dsh-fs run` on a real package (bench/fixtures/js-yaml, its dependencies
 * installed by the bench): on kernel overlayfs, on the FUSE mount (the same sandbox over a
 * folder, sent to the fallback by a state path overlayfs cannot take in its mount options), and a
 * bare overlayfs mount as the floor; each a whole process, against the plain folder.
 */
export async function runRunBench(): Promise<BenchRow[]> {
  if (process.platform !== 'linux') return skip('overlayfs is Linux only');
  if (!existsSync(CLI)) return skip(`no build at ${CLI}: run npm run build`);
  const only = process.env.BENCH_RUN_ROWS?.split(',').map((s) => s.trim());
  const { dir, cleanup } = await tempDir('run');
  try {
    const t = await makeRunTrees(dir).catch((err: Error) => err);
    // npm ci needs the registry (or a cache holding the packages).
    if (t instanceof Error) return skip(`cannot set up the package: ${t.message.slice(0, 300)}`);
    const subjects = await probe(t, dir);
    if (!subjects.includes('overlay')) return skip('dsh-fs run does not reach overlayfs here');
    const setup: Setup = { t, dir, subjects, rounds: 0 };
    const rows: BenchRow[] = [...(await fixedCost(setup))];
    for (const w of WORKLOADS) {
      if (only !== undefined && !only.some((o) => w.name.startsWith(o))) continue;
      if (w.needs !== undefined && (await sh(`command -v ${w.needs} || true`)).trim() === '') {
        process.stdout.write(`[${w.name}: skipped, ${w.needs} is not installed] `);
        continue;
      }
      rows.push(...(await measure(setup, w)));
    }
    return rows;
  } finally {
    await cleanup();
  }
}

function skip(why: string): BenchRow[] {
  process.stdout.write(`skipped (${why}) `);
  return [];
}

/**
 * Where each sandbox keeps its state: one per tree, or one per round (`round`) where the workload
 * writes. The FUSE one's name holds a ',', which overlayfs refuses in its mount options.
 */
const stateOf = (dir: string, s: 'overlay' | 'fuse', fresh: boolean, round?: number) =>
  join(dir, `state-${fresh ? 'fresh-' : ''}${s}${round === undefined ? '' : `-${round}`}${s === 'fuse' ? ',no-overlayfs' : ''}`);

/** Opens each sandbox with a first run, and finds which engine each subject reaches. */
async function probe(t: RunTrees, dir: string): Promise<Subject[]> {
  const engine = async (s: 'overlay' | 'fuse', fresh: boolean) => {
    const out = await sh(`${dshRun(fresh ? t.freshTree : t.tree, stateOf(dir, s, fresh), 'true')} 2>&1`).catch((err: Error) => err.message);
    return /running on the FUSE mount/.test(out) ? 'fuse' : /^run: /m.test(out) ? 'overlay' : `failed: ${out.slice(0, 300)}`;
  };
  const subjects: Subject[] = ['plain', 'floor'];
  const overlay = [await engine('overlay', false), await engine('overlay', true)];
  if (overlay.every((e) => e === 'overlay')) subjects.push('overlay');
  else process.stdout.write(`[overlayfs run: ${overlay.join(', ')}] `);
  const fuse = [await engine('fuse', false), await engine('fuse', true)];
  if (fuse.every((e) => e === 'fuse')) subjects.push('fuse');
  else process.stdout.write(`[FUSE run left out: ${fuse.join(', ')}] `);
  return subjects;
}

/**
 * One subject's command for round `round` of a workload, in the tree's root, with the bench's
 * environment. A round that writes works in places of its own (a sandbox, an upper, a copy of the
 * plain folder), made before it and removed only with the section: files written where as many
 * were just deleted took 2–5× as long here (ext4), which would measure the removal, not the work.
 */
function command(setup: Setup, s: Subject, w: Pick<Workload, 'script' | 'fresh' | 'writes'>, round: number, argv = `sh -c ${quote(w.script)}`): string {
  const { t, dir } = setup;
  const fresh = w.fresh === true;
  const tree = fresh ? t.freshTree : t.tree;
  const inner =
    s === 'plain'
      ? `cd ${quote(plainOf(setup, w, round))} && ${w.script}`
      : s === 'floor'
        ? bareOverlay(tree, join(dir, `floor-${round}`), w.script)
        : dshRun(tree, stateOf(dir, s, fresh, w.writes === true ? round : undefined), argv, s === 'overlay');
  return `${benchEnv(t)}; ${inner}`;
}

/** The plain folder of a round: a copy of its own where it starts without node_modules and writes. */
const plainOf = (setup: Setup, w: Pick<Workload, 'fresh' | 'writes'>, round: number) =>
  w.fresh !== true ? setup.t.plain : w.writes === true ? join(setup.dir, `fresh-plain-${round}`) : setup.t.freshPlain;

/** Untimed, before each round: its own places where it needs them. */
async function prepare(setup: Setup, s: Subject, w: Pick<Workload, 'fresh' | 'writes'>, round: number): Promise<void> {
  if (s === 'floor') await emptyScratch(join(setup.dir, `floor-${round}`));
  if (s === 'plain' && w.fresh === true && w.writes === true) await sh(`cp -a ${quote(setup.t.freshPlain)} ${quote(plainOf(setup, w, round))}`);
}

const rounds = (full: number) => reps(Number(process.env.BENCH_RUN_REPS ?? full));

async function measure(setup: Setup, w: Workload): Promise<BenchRow[]> {
  const t0 = performance.now();
  const round: Partial<Record<Subject, number>> = {};
  const parts: Parts[] = [];
  const variants = Object.fromEntries(setup.subjects.map((s) => [s, () => sh(command(setup, s, w, round[s]!))])) as Record<Subject, () => Promise<string>>;
  variants.overlay = accounted(variants.overlay, parts);
  const before = (s: Subject) => prepare(setup, s, w, (round[s] = setup.rounds++));
  const t = await interleave(variants, { reps: rounds(w.reps), warmup: w.warmup, before });
  const ms = (s: Subject) => (t[s] === undefined ? '–' : t[s].median.toFixed(0));
  process.stdout.write(
    `[${w.name}: plain ${ms('plain')}, overlayfs run ${ms('overlay')}, FUSE run ${ms('fuse')}, bare overlayfs ${ms('floor')} ms; ${((performance.now() - t0) / 1000).toFixed(0)} s] `,
  );
  const f = (subject: string) => ({ section: SECTION, case: `js-yaml + deps: ${w.name}`, subject, unit: 'ms' as const });
  const plain = { name: 'plain folder', timing: t.plain };
  const ratio = (n: number) => ({ text: `≤ ${n}× plain`, maxRatio: n });
  return [
    row(f('dsh-fs run (overlayfs)'), t.overlay, plain, ratio(w.goal)),
    row(f('dsh-fs run (overlayfs)'), t.overlay, { name: 'bare overlayfs mount', timing: t.floor }),
    insideRow(f, parts.slice(w.warmup), t.overlay, t.floor),
    ...(t.fuse === undefined ? [] : [row(f('dsh-fs run (FUSE)'), t.fuse, plain, ratio(3))]),
    row(f('bare overlayfs mount (unshare + mount, no dsh-fs)'), t.floor, plain),
  ];
}

/** `dsh-fs run -- true` on each engine, and the bare mount running `true`, against `node -e 0`. */
async function fixedCost(setup: Setup): Promise<BenchRow[]> {
  const w: Pick<Workload, 'script' | 'fresh' | 'writes'> = { script: 'true', writes: false };
  const round: Record<string, number> = {};
  const variants: Record<string, () => Promise<string>> = { node: () => sh(`${benchEnv(setup.t)}; exec node -e 0`) };
  for (const s of setup.subjects) if (s !== 'plain') variants[s] = () => sh(command(setup, s, w, round[s]!, 'true'));
  const parts: Parts[] = [];
  variants.overlay = accounted(variants.overlay!, parts);
  const before = (s: string) => (s === 'floor' ? prepare(setup, s, w, (round[s] = setup.rounds++)) : undefined);
  const t: Record<string, Timing> = await interleave(variants, { reps: rounds(5), warmup: 1, before });
  const f = (subject: string) => ({ section: SECTION, case: 'run -- true (fixed cost)', subject, unit: 'ms' as const });
  const node = { name: 'node -e 0', timing: t.node! };
  process.stdout.write(`[run -- true: node -e 0 ${t.node!.median.toFixed(0)}, overlayfs run ${t.overlay!.median.toFixed(0)} ms] `);
  return [
    row(f('dsh-fs run (overlayfs)'), t.overlay!, node, { text: `≤ +${FIXED_GOAL_MS} ms over node -e 0`, maxDelta: FIXED_GOAL_MS }),
    insideRow(f, parts.slice(1), t.overlay!, t.floor!),
    ...(t.fuse === undefined ? [] : [row(f('dsh-fs run (FUSE)'), t.fuse, node)]),
    row(f('bare overlayfs mount (unshare + mount + true)'), t.floor!, node),
  ];
}

/** The overlayfs run's own account of a round (`--json` timings, ms). */
type Parts = { readonly layer: number; readonly program: number; readonly import: number };

/** The variant, keeping each round's account from the JSON line the run prints last. */
function accounted(variant: () => Promise<string>, into: Parts[]): () => Promise<string> {
  return async () => {
    const out = await variant();
    into.push((JSON.parse(out.trim().split('\n').at(-1)!) as { timings: Parts }).timings);
    return out;
  };
}

/**
 * Where an overlayfs run's time goes: its mount + program + read-back against the bare mount
 * (which does the first two), the layer and the import beside it, and the rest of the command
 * (starting the CLI, opening the sandbox, the summary).
 */
function insideRow(f: (subject: string) => Omit<Parameters<typeof row>[0], 'note'>, parts: readonly Parts[], total: Timing, floor: Timing): BenchRow {
  const m = (k: keyof Parts) => median(parts.map((p) => p[k]));
  const rest = total.median - m('layer') - m('program') - m('import');
  const note = `layer ${m('layer').toFixed(0)} ms, import ${m('import').toFixed(0)} ms, the rest (CLI start, opening the sandbox, summary) ${rest.toFixed(0)} ms`;
  return row({ ...f('dsh-fs run (overlayfs): mount + program + read-back'), note }, m('program'), { name: 'bare overlayfs mount', timing: floor });
}
