import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { STATE_FORMAT } from '../../src/backends/overlay/state.js';
import { composeOverlay } from '../../src/backends/overlay/compose.js';
import { frame } from '../../src/backends/overlay/state-format.js';
import { stored, viewOf } from './helpers.js';
import { crashingStore, effectiveDoc, memoryDisk } from './stores.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'dsh-overlay-journal-'));
  dirs.push(d);
  return d;
}

describe('overlay journal', () => {
  it('the first save writes a version-5 document; later saves only append one record each', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs({ files: { '/a': 'a' } });
    const fs = await createOverlayFs({ lower, stateDir });
    await fs.writeText(await fs.resolve('/f0'), 'zero');
    const doc = await readFile(join(stateDir, 'overlay.json'));
    expect(JSON.parse(doc.toString())).toMatchObject({ format: STATE_FORMAT, version: 5, generation: 1 });
    const sizes: number[] = [];
    for (let i = 1; i <= 5; i++) {
      await fs.writeText(await fs.resolve(`/f${i}`), `file ${i}`);
      sizes.push((await stat(join(stateDir, 'overlay.journal'))).size);
    }
    // The document is untouched; each save adds one record of about the same size.
    expect(Buffer.compare(await readFile(join(stateDir, 'overlay.json')), doc)).toBe(0);
    const steps = sizes.slice(1).map((s, i) => s - sizes[i]!);
    for (const s of steps) expect(Math.abs(s - steps[0]!)).toBeLessThanOrEqual(2);
    expect((await effectiveDoc(stateDir)).entries.map((e) => e.path)).toEqual(['/f0', '/f1', '/f2', '/f3', '/f4', '/f5']);
    const reopened = await createOverlayFs({ lower, stateDir });
    expect(await viewOf(reopened)).toEqual(await viewOf(fs));
  });

  it('folds the journal into a new document past the size ratio; a reopen is the same at every step', async () => {
    const disk = memoryDisk();
    const lower = createMemoryFs({ files: { '/a': 'a' } });
    const tuning = { compactMinBytes: 2000, compactRatio: 2, keepCheckpoints: 0 };
    const fs = await composeOverlay({ lower }, crashingStore(disk), tuning);
    const generations = new Set<number>();
    for (let i = 0; i < 60; i++) {
      // Even rounds write contents kept as blobs, odd ones small contents inline.
      await fs.writeText(await fs.resolve(`/d${(i % 20) % 3}/f${i % 20}`), i % 2 === 0 ? stored(`round ${i}`) : `round ${i}`);
      if (i % 7 === 0) await fs.remove(await fs.resolve('/a')).catch(() => {});
      generations.add(JSON.parse(Buffer.from(disk.state!).toString()).generation);
      expect(disk.journal!.byteLength).toBeLessThanOrEqual(Math.max(2000, 2 * disk.state!.byteLength) + 1000);
      if (i % 10 === 9) {
        const reopened = await composeOverlay({ lower }, crashingStore(disk), tuning);
        expect(await viewOf(reopened)).toEqual(await viewOf(fs));
      }
    }
    expect(generations.size).toBeGreaterThan(2);
    // With no checkpoints kept, blobs of overwritten contents are gone: one per distinct live stored content.
    expect(disk.blobs.size).toBe(10);
  });

  it('a torn final record is ignored on reopen, and the next save writes over it', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs();
    const fs = await createOverlayFs({ lower, stateDir });
    for (const n of ['a', 'b', 'c']) await fs.writeText(await fs.resolve(`/${n}`), n);
    const journal = join(stateDir, 'overlay.journal');
    const full = (await stat(journal)).size;
    await truncate(journal, full - 5);
    const reopened = await createOverlayFs({ lower, stateDir });
    expect(Object.keys(await viewOf(reopened)).sort()).toEqual(['/', '/a', '/b']);
    // A crash can also leave garbage past the last record: ignored, then overwritten.
    await writeFile(journal, Buffer.concat([await readFile(journal), Buffer.from('99 0123456789abcdef {"entr')]));
    const again = await createOverlayFs({ lower, stateDir });
    expect(Object.keys(await viewOf(again)).sort()).toEqual(['/', '/a', '/b']);
    await again.writeText(await again.resolve('/d'), 'd');
    const third = await createOverlayFs({ lower, stateDir });
    expect(Object.keys(await viewOf(third)).sort()).toEqual(['/', '/a', '/b', '/d']);
  });

  it('a record whose checksum holds but whose content is not a change is refused, not skipped', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs();
    const fs = await createOverlayFs({ lower, stateDir });
    await fs.writeText(await fs.resolve('/a'), 'a');
    const { createHash } = await import('node:crypto');
    const json = JSON.stringify({ addDirs: ['relative'] });
    const sum = createHash('sha256').update(json).digest('hex').slice(0, 16);
    await writeFile(join(stateDir, 'overlay.journal'), Buffer.concat([await readFile(join(stateDir, 'overlay.journal')), Buffer.from(`${Buffer.byteLength(json)} ${sum} ${json}\n`)]));
    await expect(createOverlayFs({ lower, stateDir })).rejects.toMatchObject({ code: 'FS_IO_ERROR' });
  });

  it('a journal of an older generation (a crash between a new document and its journal) is ignored', async () => {
    const disk = memoryDisk();
    const lower = createMemoryFs();
    const tuning = { compactMinBytes: 0, compactRatio: 1 };
    const fs = await composeOverlay({ lower }, crashingStore(disk), tuning);
    await fs.writeText(await fs.resolve('/a'), 'a');
    await fs.writeText(await fs.resolve('/b'), 'b');
    const oldJournal = disk.journal!;
    await fs.writeText(await fs.resolve('/c'), 'c');
    await fs.writeText(await fs.resolve('/d'), 'd');
    const view = await viewOf(fs);
    // Put an older generation's journal back, as if the process died before starting the new one.
    disk.journal = oldJournal;
    const reopened = await composeOverlay({ lower }, crashingStore(disk), tuning);
    const got = await viewOf(reopened);
    // The document alone: at least everything up to the last new document.
    expect(Object.keys(got).every((k) => k in view)).toBe(true);
    expect(Object.keys(got)).toContain('/c');
  });

  // Version 4 kept every content as a blob file; version 5 writes small ones inline.
  it('opens a version-4 state whose small contents are blob files, forks it, and saves it as version 5 with them inline', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs();
    const sha = (t: string) => createHash('sha256').update(t).digest('hex');
    await mkdir(join(stateDir, 'blobs'));
    for (const t of ['doc\n', 'journal\n']) await writeFile(join(stateDir, 'blobs', sha(t)), t);
    const entry = (path: string, t: string) => ({ path, base: null, blob: sha(t), mtimeMs: 1 });
    await writeFile(join(stateDir, 'overlay.json'), JSON.stringify({
      format: STATE_FORMAT, version: 4, root: '/', generation: 1, entries: [entry('/a', 'doc\n')], dirs: [], opaque: [], checkpoint: 1,
      history: [{ id: 1, time: 1, paths: ['/a'] }],
    }));
    await writeFile(join(stateDir, 'overlay.journal'), Buffer.concat([
      frame({ format: 'dsh-fs-overlay-journal', version: 4, root: '/', generation: 1 }),
      frame({ entries: [entry('/b', 'journal\n')], cp: { id: 2, time: 2 } }),
    ]));
    const fs = await createOverlayFs({ lower, stateDir });
    const view = await viewOf(fs);
    expect((await fs.readText(await fs.resolve('/b'))).text).toBe('journal\n');
    // A fork of it stands alone: the fork is taken from a version-5 document.
    const fork = await fs.fork({ stateDir: join(await tempDir(), 'fork') });
    expect(await viewOf(fork)).toEqual(view);
    const doc = JSON.parse(await readFile(join(stateDir, 'overlay.json'), 'utf8'));
    expect(doc.version).toBe(5);
    expect(doc.entries.map((e: { path: string; data?: string }) => [e.path, Buffer.from(e.data!, 'base64').toString()])).toEqual([['/a', 'doc\n'], ['/b', 'journal\n']]);
    // The old blob files are no longer needed: a discard sweeps them.
    for (const t of ['doc\n', 'journal\n']) await rm(join(stateDir, 'blobs', sha(t)));
    expect(await viewOf(await createOverlayFs({ lower, stateDir }))).toEqual(view);
    expect(await viewOf(await createOverlayFs({ lower, stateDir: join(dirs.at(-1)!, 'fork') }))).toEqual(view);
  });

  it('refuses an inline content that does not match its digest (in the document and in a journal record)', async () => {
    const stateDir = await tempDir();
    const fs = await createOverlayFs({ lower: createMemoryFs(), stateDir });
    // The first save writes the document; the second appends a record.
    await fs.writeText(await fs.resolve('/a'), 'small\n');
    await fs.writeText(await fs.resolve('/b'), 'small too\n');
    const other = Buffer.from('other\n').toString('base64');
    const docPath = join(stateDir, 'overlay.json');
    const original = await readFile(docPath, 'utf8');
    const doc = JSON.parse(original);
    doc.entries[0].data = other;
    await writeFile(docPath, JSON.stringify(doc));
    const opening = () => createOverlayFs({ lower: createMemoryFs(), stateDir });
    await expect(opening()).rejects.toMatchObject({ code: 'FS_IO_ERROR', message: expect.stringContaining('inline content of "/a"') });
    await writeFile(docPath, original);
    // A record rewritten with a valid frame: only the digest can tell.
    const journalPath = join(stateDir, 'overlay.journal');
    const lines = (await readFile(journalPath, 'utf8')).trimEnd().split('\n');
    const record = JSON.parse(lines[1]!.slice(lines[1]!.indexOf('{')));
    record.entries[0].data = other;
    await writeFile(journalPath, `${lines[0]}\n${frame(record).toString('utf8')}`);
    await expect(opening()).rejects.toMatchObject({ code: 'FS_IO_ERROR', message: expect.stringContaining('inline content of "/b"') });
  });

  it('opens a version-2 document with no journal and migrates it on the first save', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs({ files: { '/old': 'o' } });
    const base = (await lower.stat(await lower.resolve('/old')))!.version;
    await writeFile(
      join(stateDir, 'overlay.json'),
      JSON.stringify({ format: STATE_FORMAT, version: 2, root: '/', entries: [{ path: '/old', base, blob: null }], dirs: ['/made'], opaque: [] }),
    );
    const fs = await createOverlayFs({ lower, stateDir });
    expect((await fs.changes()).map((c) => `${c.kind} ${c.path}`)).toEqual(['added /made', 'deleted /old']);
    await fs.writeText(await fs.resolve('/n'), 'n');
    expect(JSON.parse(await readFile(join(stateDir, 'overlay.json'), 'utf8'))).toMatchObject({ version: 5, generation: 1, dirs: ['/made'] });
    expect((await readdir(stateDir)).sort()).toEqual(['blobs', 'overlay.journal', 'overlay.json']);
    const reopened = await createOverlayFs({ lower, stateDir });
    expect(await reopened.changes()).toEqual(await fs.changes());
  });
});

// The crash property runs over every kind of store: see store-kit.ts.
