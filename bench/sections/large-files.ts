import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { SIZES, sourceText } from '../fixtures.js';
import { collect, interleave, reps, row, tempDir, type BenchRow, type Variant } from '../lib.js';
import { naiveEdit, naiveWindow, safeEdit, toolHarness } from '../subjects.js';

const WINDOW = 2000;
const OWNER = 'bench-session';
const MARKERS = ['MIDPOINT_ALPHA', 'MIDPOINT_BRAVO'] as const;

/**
 * The read and edit tools on large files on the local provider (durable writes, policy on),
 * against plain Node doing the same work, unsafely and safely.
 */
export async function runLargeFileBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const { dir, cleanup } = await tempDir('large');
  try {
    const fs = createLocalFs({ root: dir });
    const ctx = toolHarness(fs);
    const exec = { owner: OWNER };
    for (const size of SIZES) {
      const n = reps(size.reps);
      const fx = sourceText(size.bytes, MARKERS[0]);
      const readPath = join(dir, `read-${size.bytes}.txt`);
      await writeFile(readPath, fx.text);

      for (const [where, offset] of [
        ['start', 1],
        ['end', fx.lines - WINDOW + 1],
      ] as const) {
        let shown = 0;
        const variants: Record<string, Variant> = {
          tool: async () => {
            const r = await ctx.tools.execute('read', { file_path: readPath, offset, limit: WINDOW }, exec);
            if (r.isError) throw new Error(r.text);
            shown = r.text.length;
          },
          naive: async () => {
            if ((await naiveWindow(readPath, offset, WINDOW)).length !== WINDOW) throw new Error('short window');
          },
          // The seam reads the whole file wherever the window is: measured once per size.
          ...(where === 'start'
            ? {
                seam: async () => {
                  const r = await fs.readText(await fs.resolve(readPath));
                  if (r.size !== fx.text.length) throw new Error('short read');
                },
              }
            : {}),
        };
        const t = await interleave(variants, { reps: n, warmup: size.warmup, ...(size.collectFirst ? { before: collect } : {}) });
        if (shown === 0) throw new Error('the read tool showed nothing');
        const c = `${size.label}, ${WINDOW}-line window at ${where}`;
        const base = { name: 'readFile + split', timing: t['naive']! };
        rows.push(row({ section: 'read', case: c, subject: 'read tool (local)', unit: 'ms' }, t['tool']!, base, { text: '≤ 1.5×', maxRatio: 1.5 }));
        if (t['seam']) rows.push(row({ section: 'read', case: c, subject: 'seam resolve + readText (local)', unit: 'ms' }, t['seam'], base));
      }

      // Edits: one file per variant, each flipping its marker back and forth.
      const paths = { tool: join(dir, `edit-tool-${size.bytes}.txt`), naive: join(dir, `edit-naive-${size.bytes}.txt`), safe: join(dir, `edit-safe-${size.bytes}.txt`) };
      for (const p of Object.values(paths)) await writeFile(p, fx.text);
      const seen = await ctx.tools.execute('read', { file_path: paths.tool, limit: 1 }, exec);
      if (seen.isError) throw new Error(seen.text);
      const flips = { tool: 0, naive: 0, safe: 0 };
      const next = (k: keyof typeof flips) => {
        const pair = [MARKERS[flips[k] % 2]!, MARKERS[(flips[k] + 1) % 2]!] as const;
        flips[k]++;
        return pair;
      };
      const t = await interleave(
        {
          tool: async () => {
            const [from, to] = next('tool');
            const r = await ctx.tools.execute('edit', { file_path: paths.tool, old_string: from, new_string: to }, exec);
            if (r.isError) throw new Error(r.text);
          },
          naive: () => naiveEdit(paths.naive, ...next('naive')),
          safe: () => safeEdit(paths.safe, ...next('safe')),
        },
        { reps: n, warmup: size.warmup, ...(size.collectFirst ? { before: collect } : {}) },
      );
      const c = `${size.label}, unique mid-file match`;
      rows.push(
        row(
          { section: 'edit', case: c, subject: 'edit tool (local, durable)', unit: 'ms' },
          t.tool,
          { name: 'safe baseline (sha256, temp, fsync, rename, dir fsync)', timing: t.safe },
          size.bytes >= 64 * 1024 * 1024 ? { text: '≤ 1.5×', maxRatio: 1.5 } : undefined,
        ),
        row({ section: 'edit', case: c, subject: 'edit tool (local, durable)', unit: 'ms' }, t.tool, {
          name: 'naive baseline (readFile, indexOf, writeFile)',
          timing: t.naive,
        }),
      );
    }
  } finally {
    await cleanup();
  }
  return rows;
}
