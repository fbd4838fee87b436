import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createHarness } from '../../src/harness/index.js';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import type { FileSystem } from '../../src/seam/index.js';
import { fsTools, patchTools } from '../../src/tools/index.js';
import { interleave, reps, row, tempDir, type BenchRow } from '../lib.js';
import { markerOf, smallFile } from '../subjects.js';

const SECTION = 'patch';
const FILES = 2_000;
const OWNER = 'bench-session';

const pathOf = (i: number) => `src/f${String(i).padStart(4, '0')}.ts`;
const flagLine = (i: number, flip: number) => `  const flag = ${markerOf(flip)}; // file ${i}`;

/** A backend to measure: two filesystems with the same files (one for each variant), and its cleanup. */
interface Backend {
  readonly name: string;
  open(): Promise<{ patchFs: FileSystem; writeFs: FileSystem; cwd: string; cleanup(): Promise<void> }>;
}

const seedFiles = () => Array.from({ length: FILES }, (_, i) => [pathOf(i), smallFile(i)] as const);

const BACKENDS: readonly Backend[] = [
  {
    name: 'memory',
    async open() {
      const files = Object.fromEntries(seedFiles().map(([p, t]) => [`/w/${p}`, t]));
      return { patchFs: createMemoryFs({ files, cwd: '/w' }), writeFs: createMemoryFs({ files, cwd: '/w' }), cwd: '/w', cleanup: async () => {} };
    },
  },
  {
    name: 'local disk, durable',
    async open() {
      const { dir, cleanup } = await tempDir('patch');
      const fsOf = async (label: string) => {
        const root = join(dir, label);
        for (const [p, t] of seedFiles()) {
          await mkdir(dirname(join(root, p)), { recursive: true });
          await writeFile(join(root, p), t);
        }
        return createLocalFs({ root });
      };
      const patchFs = await fsOf('patch');
      const writeFs = await fsOf('write');
      return { patchFs, writeFs, cwd: '', cleanup };
    },
  },
  {
    name: 'overlay over memory, state in memory',
    async open() {
      const files = Object.fromEntries(seedFiles().map(([p, t]) => [`/w/${p}`, t]));
      const overlay = () => createOverlayFs({ lower: createMemoryFs({ files, cwd: '/w' }), upper: createMemoryFs() });
      return { patchFs: await overlay(), writeFs: await overlay(), cwd: '/w', cleanup: async () => {} };
    },
  },
];

/** One `apply_patch` call changing a line in each of 2,000 files, against 2,000 `write` calls, per backend. */
export async function runPatchBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const backend of BACKENDS) rows.push(await benchOn(backend));
  return rows;
}

async function benchOn(backend: Backend): Promise<BenchRow> {
  const opened = await backend.open();
  try {
    const harness = (fs: FileSystem) =>
      createHarness({ fs, ...(opened.cwd ? { cwd: opened.cwd } : {}), plugins: [createObservationPolicy(), fsTools(), patchTools()] });
    const patchCtx = harness(opened.patchFs);
    const writeCtx = harness(opened.writeFs);
    const exec = { owner: OWNER };
    // The policy wants every file read before it is changed.
    for (const ctx of [patchCtx, writeCtx]) {
      for (let i = 0; i < FILES; i++) {
        const r = await ctx.tools.execute('read', { file_path: pathOf(i) }, exec);
        if (r.isError) throw new Error(`setup read failed: ${r.text}`);
      }
    }
    // Inputs built ahead, so only the tools are timed.
    const patches = [0, 1].map((flip) => {
      const parts = Array.from({ length: FILES }, (_, i) => `*** Update File: ${pathOf(i)}\n@@\n-${flagLine(i, flip)}\n+${flagLine(i, flip + 1)}\n`);
      return `*** Begin Patch\n${parts.join('')}*** End Patch`;
    });
    const contents = [0, 1].map((flip) => Array.from({ length: FILES }, (_, i) => smallFile(i).replace(flagLine(i, 0), flagLine(i, flip + 1))));

    const flips = { patch: 0, write: 0 };
    const t = await interleave(
      {
        patch: async () => {
          const r = await patchCtx.tools.execute('apply_patch', { input: patches[flips.patch % 2] }, exec);
          if (r.isError) throw new Error(r.text);
          flips.patch++;
        },
        write: async () => {
          const batch = contents[flips.write % 2]!;
          for (let i = 0; i < FILES; i++) {
            const r = await writeCtx.tools.execute('write', { file_path: pathOf(i), content: batch[i] }, exec);
            if (r.isError) throw new Error(r.text);
          }
          flips.write++;
        },
      },
      { reps: reps(5), warmup: 1 },
    );
    const c = `${FILES.toLocaleString('en')} files of 1 KiB, one line each (${backend.name})`;
    return row({ section: SECTION, case: c, subject: 'apply_patch, one call', unit: 'ms' }, t.patch, { name: `write tool, ${FILES.toLocaleString('en')} calls`, timing: t.write });
  } finally {
    await opened.cleanup();
  }
}
