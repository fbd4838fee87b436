import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { interleave, reps, row, tempDir, usedBytes, type BenchRow } from '../lib.js';

const SECTION = 'scale';
const FILES = 100_000;
const PER_DIR = 1_000;
const LISTED = 10_000;

const pathOf = (i: number) => `/data/d${String(Math.floor(i / PER_DIR)).padStart(3, '0')}/f${String(i).padStart(6, '0')}.txt`;
// ~100 bytes, distinct per file, like a small source file's worth of header.
const contentOf = (i: number) => `// file ${i}\nexport const value${i} = ${i * 7};\nexport default { id: ${i}, name: "entry-${i}" };\n`;

/**
 * Memory provider at scale: retained heap (JS heap plus Buffer memory) per file against a raw
 * memfs Volume holding the same files, and listDir of a large directory against readdir.
 */
export async function runScaleBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const files = Number(process.env.BENCH_SCALE_FILES ?? (process.env.BENCH_QUICK ? 20_000 : FILES));
  const label = `${files.toLocaleString('en')} files of ~100 B`;

  // Raw memfs first, then the provider; each measured from a collected baseline and kept alive
  // until measured. Creation time is reported too.
  // Objects under measurement are held here: a local that is never read again may be collected.
  const held: unknown[] = [];
  let before = usedBytes();
  let t0 = performance.now();
  // A volume set up as the provider sets up its own, holding nothing but the files.
  const vol = createMemoryProvider().volume;
  held.push(vol);
  for (let d = 0; d * PER_DIR < files; d++) vol.mkdirSync(`/data/d${String(d).padStart(3, '0')}`, { recursive: true });
  for (let i = 0; i < files; i++) vol.writeFileSync(pathOf(i), contentOf(i));
  const rawCreate = ((performance.now() - t0) * 1000) / files;
  const rawPerFile = (usedBytes() - before) / files;
  held.length = 0;

  before = usedBytes();
  t0 = performance.now();
  const mem = createMemoryFs();
  held.push(mem);
  for (let i = 0; i < files; i++) await mem.writeText(await mem.resolve(pathOf(i)), contentOf(i));
  const memCreate = ((performance.now() - t0) * 1000) / files;
  const memPerFile = (usedBytes() - before) / files;
  held.length = 0;

  rows.push(
    row(
      { section: SECTION, case: label, subject: 'memory provider heap', unit: 'B/file' },
      memPerFile,
      { name: 'raw memfs Volume', timing: rawPerFile },
      { text: '≤ 1.5×', maxRatio: 1.5 },
    ),
    row(
      { section: SECTION, case: label, subject: 'memory provider create (resolve + writeText), one run', unit: 'µs/op' },
      memCreate,
      { name: 'memfs writeFileSync', timing: rawCreate },
    ),
    ...(await createRows()),
  );

  // listDir of one directory with LISTED entries, in memory and on disk.
  const big = createMemoryFs();
  const dir = '/big';
  big.provider.volume.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < LISTED; i++) big.provider.volume.writeFileSync(`${dir}/entry-${String(i).padStart(5, '0')}.txt`, 'x');
  const target = await big.resolve(dir);
  let listed = 0;
  const t = await interleave(
    {
      listDir: async () => {
        listed = (await big.listDir(target)).length;
      },
      readdir: () => {
        listed = big.provider.volume.readdirSync(dir, { withFileTypes: true }).length;
      },
    },
    { reps: reps(5), warmup: 1 },
  );
  if (listed !== LISTED) throw new Error(`listed ${listed} entries, expected ${LISTED}`);
  rows.push(
    row(
      { section: SECTION, case: `listDir, ${LISTED.toLocaleString('en')} entries`, subject: 'memory provider listDir', unit: 'ms' },
      t.listDir,
      { name: 'memfs readdirSync (withFileTypes)', timing: t.readdir },
    ),
  );

  const { dir: disk, cleanup } = await tempDir('listdir');
  try {
    const listedDir = join(disk, 'big');
    await mkdir(listedDir);
    for (let i = 0; i < LISTED; i++) await writeFile(join(listedDir, `entry-${String(i).padStart(5, '0')}.txt`), 'x');
    const local = createLocalFs({ root: disk });
    const localTarget = await local.resolve(listedDir);
    const l = await interleave(
      {
        listDir: async () => {
          listed = (await local.listDir(localTarget)).length;
        },
        readdir: async () => {
          listed = (await readdir(listedDir, { withFileTypes: true })).length;
        },
      },
      { reps: reps(5), warmup: 1 },
    );
    if (listed !== LISTED) throw new Error(`listed ${listed} entries, expected ${LISTED}`);
    rows.push(
      row(
        { section: SECTION, case: `listDir, ${LISTED.toLocaleString('en')} entries`, subject: 'local provider listDir', unit: 'ms' },
        l.listDir,
        { name: 'fs.readdir (withFileTypes)', timing: l.readdir },
      ),
    );
  } finally {
    await cleanup();
  }
  return rows;
}

const CREATED = 10_000;

/** Creating files: the provider (resolve + writeText) against memfs writeFileSync, fresh stores each run, interleaved. */
async function createRows(): Promise<BenchRow[]> {
  const t = await interleave(
    {
      raw: () => {
        const vol = createMemoryProvider().volume;
        for (let d = 0; d * PER_DIR < CREATED; d++) vol.mkdirSync(`/data/d${String(d).padStart(3, '0')}`, { recursive: true });
        for (let i = 0; i < CREATED; i++) vol.writeFileSync(pathOf(i), contentOf(i));
      },
      provider: async () => {
        const mem = createMemoryFs();
        for (let i = 0; i < CREATED; i++) await mem.writeText(await mem.resolve(pathOf(i)), contentOf(i));
      },
    },
    { reps: reps(7), warmup: 1, ops: CREATED, scale: 1000 },
  );
  return [
    row(
      { section: SECTION, case: `${CREATED.toLocaleString('en')} files of ~100 B, created`, subject: 'memory provider create (resolve + writeText)', unit: 'µs/op' },
      t.provider,
      { name: 'memfs mkdirSync + writeFileSync', timing: t.raw },
      { text: '≤ 2×', maxRatio: 2 },
    ),
  ];
}
