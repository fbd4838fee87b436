import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { leasedFs } from '../../src/cli/lease.js';
import { openWorkspace } from '../../src/cli/workspace.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { kernelOptions, mountFs, type Mount, type MountOptions } from '../../src/mount/index.js';
import { loadFuse } from '../../src/mount/load.js';
import { interleave, reps, row, tempDir, type BenchRow, type Timing } from '../lib.js';
import { floorOps } from '../mount-floor.js';
import { makeProject, readTree, sh } from '../mount-fixture.js';
import { startNativeFloor } from '../mount-native.js';

const SECTION = 'mount';
const FILES = 2_000;
const WRITES = 1_000;

type Subject = 'plain' | 'floor' | 'memory' | 'overlay' | 'native';

interface Workload {
  readonly name: string;
  readonly script: (dir: string, run: number) => string;
  /** The goal against the plain directory, where one is set; the floor goal is always 1.5×. */
  readonly plainGoal?: number;
  readonly okCodes?: readonly number[];
  /** Untimed runs first: git's first status on a mount rewrites its index (new inode numbers). */
  readonly warmup?: number;
  /** A program the workload needs that may be missing (the row is left out, saying so). */
  readonly needs?: string;
}

const WORKLOADS: readonly Workload[] = [
  { name: 'git status', script: (d) => `cd '${d}' && git status --porcelain >/dev/null`, plainGoal: 10, warmup: 1 },
  { name: 'rg PATTERN', script: (d) => `cd '${d}' && rg -c 'file 1234$' >/dev/null`, plainGoal: 25, needs: 'rg' },
  // tar skips reading files when its archive is /dev/null itself: a pipe makes it read them.
  { name: 'tar c | wc -c', script: (d) => `cd '${d}' && tar cf - . | wc -c >/dev/null` },
  { name: 'find . -type f', script: (d) => `cd '${d}' && find . -type f | wc -l >/dev/null`, plainGoal: 10 },
  {
    name: `write ${WRITES.toLocaleString('en')} files (sh loop)`,
    script: (d, run) =>
      `cd '${d}' && mkdir w${run} && cd w${run} && i=0; while [ $i -lt ${WRITES} ]; do echo "line $i of a small file" > f$i.txt; i=$((i+1)); done`,
    plainGoal: 15,
  },
];

/**
 * Programs through mounts of a 2,000-file git project: an overlay sandbox over a local directory
 * (what `dsh-fs run` serves), a memory filesystem, and the floor (a do-nothing fuse-native
 * filesystem), each against the plain directory in the same run. The bench process serves the
 * mounts, as `dsh-fs run` does; the programs are spawned from outside them.
 */
export async function runMountBench(): Promise<BenchRow[]> {
  let Fuse;
  try {
    Fuse = await loadFuse();
  } catch (err) {
    process.stdout.write(`skipped (${err instanceof Error ? err.message : String(err)}) `);
    return [];
  }
  const only = process.env.BENCH_MOUNT_ROWS?.split(',').map((s) => s.trim());
  const options = mountOptions();
  const { dir, cleanup } = await tempDir('mount');
  const mounts: Mount[] = [];
  let floorFuse: InstanceType<typeof Fuse> | undefined;
  let closeSandbox: (() => void) | undefined;
  let stopNative: (() => Promise<void>) | undefined;
  // BENCH_MOUNT_NATIVE: the native floor's binary (bench/native-floor/build.sh), served as one more subject.
  const native = process.env.BENCH_MOUNT_NATIVE;
  try {
    const plain = join(dir, 'plain');
    const lower = join(dir, 'lower');
    await makeProject(plain, FILES);
    await cp(plain, lower, { recursive: true });
    const tree = await readTree(plain);
    const at: Record<Subject, string> = {
      plain,
      floor: join(dir, 'm-floor'),
      memory: join(dir, 'm-memory'),
      overlay: join(dir, 'm-overlay'),
      native: join(dir, 'm-native'),
    };
    for (const s of ['floor', 'memory', 'overlay', 'native'] as const) await mkdir(at[s]);
    if (native !== undefined) stopNative = await startNativeFloor(native, plain, at.native, options);

    floorFuse = new Fuse(at.floor, floorOps(tree), kernelOptions(options, 'floor'));
    await new Promise<void>((done, failed) => floorFuse!.mount((err) => (err ? failed(err) : done())));

    const seed = Object.fromEntries([...tree].map(([path, bytes]) => [`/${path}`, bytes]));
    mounts.push(await mountFs(createMemoryFs({ files: seed, cwd: '/' }), at.memory, options));

    const workspace = await openWorkspace({ root: lower, mode: 'sandbox', stateDir: join(dir, 'state') });
    const sandbox = leasedFs(workspace, await workspace.use(async (fs) => fs));
    closeSandbox = () => sandbox.close();
    mounts.push(await mountFs(sandbox, at.overlay, options));

    const rows: BenchRow[] = [];
    for (const w of WORKLOADS) {
      if (only !== undefined && !only.some((o) => w.name.startsWith(o))) continue;
      if (w.needs !== undefined && !(await onPath(w.needs))) {
        process.stdout.write(`[${w.name}: skipped, ${w.needs} is not installed] `);
        continue;
      }
      const t0 = performance.now();
      const runs: Record<Subject, number> = { plain: 0, floor: 0, memory: 0, overlay: 0, native: 0 };
      const variant = (s: Subject) => () => sh(w.script(at[s], runs[s]++), w.okCodes);
      const subjects: Subject[] = ['plain', 'floor', 'memory', 'overlay', ...(stopNative === undefined ? [] : ['native' as const])];
      const t: Partial<Record<Subject, Timing>> & Record<Exclude<Subject, 'native'>, Timing> = await interleave(
        Object.fromEntries(subjects.map((s) => [s, variant(s)])) as Record<Subject, () => Promise<string>>,
        // Two rounds each: the overlay rows take tens of seconds, and the section keeps to ~4 minutes.
        { reps: reps(Number(process.env.BENCH_MOUNT_REPS ?? 2)), warmup: w.warmup ?? 0 },
      );
      rows.push(...rowsOf(w, t, options));
      const ms = (k: Subject) => t[k]?.median.toFixed(0);
      const nativeMs = stopNative === undefined ? '' : `, native floor ${ms('native')}`;
      process.stdout.write(
        `[${w.name}: plain ${ms('plain')}, floor ${ms('floor')}, memory ${ms('memory')}, overlay ${ms('overlay')}${nativeMs} ms; ${((performance.now() - t0) / 1000).toFixed(0)} s] `,
      );
    }
    return rows;
  } finally {
    for (const m of mounts) await m.unmount().catch(() => {});
    closeSandbox?.();
    await stopNative?.();
    if (floorFuse !== undefined) await new Promise<void>((done) => floorFuse!.unmount(() => done()));
    await cleanup();
  }
}

async function onPath(command: string): Promise<boolean> {
  return sh(`command -v ${command}`, [0, 1, 127]).then((out) => out.trim() !== '');
}

/**
 * The cache setting under test: BENCH_MOUNT_CACHE=SECONDS, default 1 (`--cache 1`). mountFs's own
 * default, 0, makes the overlay rows several times slower, beyond the section's time budget.
 */
function mountOptions(): MountOptions {
  return { cacheSeconds: Number(process.env.BENCH_MOUNT_CACHE ?? 1) };
}

function rowsOf(w: Workload, t: Partial<Record<Subject, Timing>> & Record<Exclude<Subject, 'native'>, Timing>, options: MountOptions): BenchRow[] {
  const c = `${FILES.toLocaleString('en')}-file git project: ${w.name}`;
  const note = `cache ${options.cacheSeconds ?? 0} s`;
  const plain = { name: 'plain directory', timing: t.plain };
  const floor = { name: 'floor mount', timing: t.floor };
  const plainGoal = w.plainGoal === undefined ? undefined : { text: `≤ ${w.plainGoal}× plain`, maxRatio: w.plainGoal };
  const f = (subject: string) => ({ section: SECTION, case: c, subject, unit: 'ms' as const, note });
  return [
    row(f('mount: overlay sandbox'), t.overlay, plain, plainGoal),
    row(f('mount: overlay sandbox'), t.overlay, floor, { text: '≤ 1.5× floor', maxRatio: 1.5 }),
    row(f('mount: memory'), t.memory, plain, plainGoal),
    row(f('mount: memory'), t.memory, floor, { text: '≤ 1.5× floor', maxRatio: 1.5 }),
    row(f('floor mount (do-nothing fuse-native)'), t.floor, plain),
    ...(t.native === undefined
      ? []
      : [
          row(f('native floor (do-nothing C, libfuse 2 high-level)'), t.native, floor),
          row(f('native floor (do-nothing C, libfuse 2 high-level)'), t.native, plain),
        ]),
  ];
}
