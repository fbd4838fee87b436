import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { interleave, reps, row, tempDir, type BenchRow } from '../lib.js';
import { markerOf, naiveEdit, safeEdit, smallFile, toolHarness } from '../subjects.js';

const SECTION = 'tool-stack';
const FILES = 1_000;
const OWNER = 'bench-session';
const EDIT_GOAL = { text: '≤ +15 µs/op', maxDelta: 15 };
const READ_GOAL = { text: '≤ +10 µs/op', maxDelta: 10 };

const pathOf = (i: number) => `/w/src/f${String(i).padStart(4, '0')}.ts`;

/**
 * Per-call cost of the seam and the tools on 1 KiB files in memory, against raw memfs calls on
 * an identical Volume. Each batch touches every file once; edits flip a marker back and forth.
 */
export async function runToolStackBench(): Promise<BenchRow[]> {
  const seed = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [pathOf(i), smallFile(i)]));
  // The raw baseline works on a volume set up exactly as the provider sets up its own.
  const raw = createMemoryFs({ files: seed }).provider.volume;
  const seamFs = createMemoryFs({ files: seed });
  const toolFs = createMemoryFs({ files: seed });
  const ctx = toolHarness(toolFs);
  const exec = { owner: OWNER };
  const targets = await Promise.all(Array.from({ length: FILES }, (_, i) => seamFs.resolve(pathOf(i))));

  // The policy needs every file read before it may be edited.
  for (let i = 0; i < FILES; i++) {
    const r = await ctx.tools.execute('read', { file_path: pathOf(i) }, exec);
    if (r.isError) throw new Error(`setup read failed: ${r.text}`);
  }

  let chars = 0;
  const readVariants = {
    raw: () => {
      for (let i = 0; i < FILES; i++) chars += (raw.readFileSync(pathOf(i), 'utf8') as string).length;
    },
    seam: async () => {
      for (let i = 0; i < FILES; i++) chars += (await seamFs.readText(await seamFs.resolve(pathOf(i)))).text.length;
    },
    tool: async () => {
      for (let i = 0; i < FILES; i++) {
        const r = await ctx.tools.execute('read', { file_path: pathOf(i) }, exec);
        if (r.isError) throw new Error(r.text);
        chars += r.text.length;
      }
    },
  };
  const readT = await interleave(readVariants, { reps: reps(9), warmup: 2, ops: FILES, scale: 1000 });
  if (chars === 0) throw new Error('nothing was read');

  const flips = { raw: 0, seam: 0, tool: 0 };
  const editVariants = {
    raw: () => {
      const [from, to] = [markerOf(flips.raw), markerOf(flips.raw + 1)];
      for (let i = 0; i < FILES; i++) {
        const p = pathOf(i);
        const text = raw.readFileSync(p, 'utf8') as string;
        const at = text.indexOf(from);
        if (at === -1 || text.indexOf(from, at + 1) !== -1) throw new Error('raw edit: no unique match');
        raw.writeFileSync(p, text.slice(0, at) + to + text.slice(at + from.length));
      }
      flips.raw++;
    },
    seam: async () => {
      const edit = { oldString: markerOf(flips.seam), newString: markerOf(flips.seam + 1) };
      for (let i = 0; i < FILES; i++) await seamFs.editText(await seamFs.resolve(pathOf(i)), edit);
      flips.seam++;
    },
    tool: async () => {
      const args = { old_string: markerOf(flips.tool), new_string: markerOf(flips.tool + 1) };
      for (let i = 0; i < FILES; i++) {
        const r = await ctx.tools.execute('edit', { file_path: pathOf(i), ...args }, exec);
        if (r.isError) throw new Error(r.text);
      }
      flips.tool++;
    },
  };
  const editT = await interleave(editVariants, { reps: reps(9), warmup: 2, ops: FILES, scale: 1000 });
  if (targets.length !== FILES) throw new Error('resolve failed');

  const c = (kind: string) => `1 KiB file, ${kind}`;
  const local = await runLocalSmall();
  const rawRead = { name: 'memfs readFileSync', timing: readT.raw };
  const rawEdit = { name: 'memfs read + indexOf + writeFileSync', timing: editT.raw };
  return [
    row({ section: SECTION, case: c('read'), subject: 'read tool (memory, policy, render)', unit: 'µs/op' }, readT.tool, rawRead, READ_GOAL),
    row({ section: SECTION, case: c('read'), subject: 'seam resolve + readText (memory)', unit: 'µs/op' }, readT.seam, rawRead),
    row({ section: SECTION, case: c('edit'), subject: 'edit tool (memory, policy, render)', unit: 'µs/op' }, editT.tool, rawEdit, EDIT_GOAL),
    row({ section: SECTION, case: c('edit'), subject: 'seam resolve + editText (memory)', unit: 'µs/op' }, editT.seam, rawEdit),
    ...local,
  ];
}

const LOCAL_FILES = 100;

/** The same small operations on the local provider, for context: per-call cost of confinement and durability. */
async function runLocalSmall(): Promise<BenchRow[]> {
  const { dir, cleanup } = await tempDir('small');
  try {
    const paths = { tool: join(dir, 'tool'), naive: join(dir, 'naive'), safe: join(dir, 'safe') };
    for (const base of Object.values(paths)) {
      await mkdir(base);
      for (let i = 0; i < LOCAL_FILES; i++) await writeFile(join(base, `f${i}.ts`), smallFile(i));
    }
    const fs = createLocalFs({ root: dir });
    const ctx = toolHarness(fs);
    const exec = { owner: OWNER };
    const file = (k: keyof typeof paths, i: number) => join(paths[k], `f${i}.ts`);
    const readT = await interleave(
      {
        tool: async () => {
          for (let i = 0; i < LOCAL_FILES; i++) {
            const r = await ctx.tools.execute('read', { file_path: file('tool', i) }, exec);
            if (r.isError) throw new Error(r.text);
          }
        },
        raw: async () => {
          for (let i = 0; i < LOCAL_FILES; i++) await readFile(file('naive', i), 'utf8');
        },
      },
      { reps: reps(7), warmup: 1, ops: LOCAL_FILES, scale: 1000 },
    );
    const flips = { tool: 0, naive: 0, safe: 0 };
    const editT = await interleave(
      {
        tool: async () => {
          const args = { old_string: markerOf(flips.tool), new_string: markerOf(flips.tool + 1) };
          for (let i = 0; i < LOCAL_FILES; i++) {
            const r = await ctx.tools.execute('edit', { file_path: file('tool', i), ...args }, exec);
            if (r.isError) throw new Error(r.text);
          }
          flips.tool++;
        },
        naive: async () => {
          for (let i = 0; i < LOCAL_FILES; i++) await naiveEdit(file('naive', i), markerOf(flips.naive), markerOf(flips.naive + 1));
          flips.naive++;
        },
        safe: async () => {
          for (let i = 0; i < LOCAL_FILES; i++) await safeEdit(file('safe', i), markerOf(flips.safe), markerOf(flips.safe + 1));
          flips.safe++;
        },
      },
      { reps: reps(5), warmup: 1, ops: LOCAL_FILES, scale: 1000 },
    );
    const c = (kind: string) => `1 KiB file, ${kind} (local)`;
    return [
      row({ section: SECTION, case: c('read'), subject: 'read tool (local, policy, render)', unit: 'µs/op' }, readT.tool, { name: 'fs.readFile', timing: readT.raw }),
      row({ section: SECTION, case: c('edit'), subject: 'edit tool (local, durable)', unit: 'µs/op' }, editT.tool, { name: 'safe baseline', timing: editT.safe }),
      row({ section: SECTION, case: c('edit'), subject: 'edit tool (local, durable)', unit: 'µs/op' }, editT.tool, { name: 'naive baseline', timing: editT.naive }),
    ];
  } finally {
    await cleanup();
  }
}
