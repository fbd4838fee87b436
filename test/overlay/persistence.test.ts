import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { STATE_FORMAT } from '../../src/backends/overlay/state.js';
import { FsError, type FileSystem } from '../../src/seam/index.js';
import { effectiveDoc } from './stores.js';
import { codeOf } from '../support/code-of.js';
import { stored, utf8 } from './helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'dsh-overlay-'));
  dirs.push(d);
  return d;
}


/** Everything the view shows: path -> type, bytes and version. */
async function viewOf(fs: FileSystem, dir = '/'): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string) => {
    const target = await fs.resolve(path);
    out[path] = `dir ${(await fs.stat(target))?.version}`;
    for (const e of await fs.listDir(target)) {
      if (e.type === 'directory') await walk(e.target.displayPath);
      else if (e.type === 'file') {
        const r = await fs.readBytes(e.target, { maxBytes: 1 << 20 });
        out[e.target.displayPath] = `file ${r.version} ${Buffer.from(r.bytes).toString('base64')}`;
      } else out[e.target.displayPath] = e.type;
    }
  };
  await walk(dir);
  return out;
}

/** Three contents saved as blobs, and small ones inline. */
async function populate(fs: OverlayFileSystem) {
  await fs.writeText(await fs.resolve('/src/a.ts'), stored('changed'));
  await fs.remove(await fs.resolve('/src/b.ts'));
  await fs.writeText(await fs.resolve('/new/deep/c.md'), stored('new'));
  await fs.writeBytes(await fs.resolve('/bin'), new Uint8Array([0, 1, 2, 255, ...utf8(stored(''))]));
  await fs.writeText(await fs.resolve('/small.txt'), 'small\n');
  await fs.writeText(await fs.resolve('/empty/x'), 'gone soon');
  await fs.remove(await fs.resolve('/empty/x'));
}

const seed = { '/src/a.ts': 'original\n', '/src/b.ts': 'bee\n', '/keep.txt': 'k' };

describe('overlay persistence in a state directory', () => {
  it('a reopened overlay shows the same view and changes', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs({ files: seed });
    const live = await createOverlayFs({ lower, stateDir });
    await populate(live);
    const reopened = await createOverlayFs({ lower, stateDir });
    expect(await viewOf(reopened)).toEqual(await viewOf(live));
    expect(await reopened.changes()).toEqual(await live.changes());
    expect(await reopened.diff()).toBe(await live.diff());
    expect(await viewOf(reopened)).toHaveProperty('/empty');
    const a = await live.resolve('/src/a.ts');
    expect((await reopened.stat(a))?.mtimeMs).toBe((await live.stat(a))?.mtimeMs);
    expect((await live.stat(a))?.mtimeMs).toBeGreaterThan(0);
  });

  it('a second instance reviews a snapshot while the first keeps working', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs({ files: seed });
    const writer = await createOverlayFs({ lower, stateDir });
    await populate(writer);
    const reviewer = await createOverlayFs({ lower, stateDir });
    const reviewed = await reviewer.diff();
    await writer.writeText(await writer.resolve('/later.txt'), 'later\n');
    expect(await reviewer.diff()).toBe(reviewed);
    expect((await (await createOverlayFs({ lower, stateDir })).changes()).map((c) => c.path)).toContain('/later.txt');
  });

  it('writes a versioned state document, its journal and content-addressed blobs, with no temp files left', async () => {
    const stateDir = await tempDir();
    // No checkpoint kept: one blob per live content.
    const fs = await createOverlayFs({ lower: createMemoryFs({ files: seed }), stateDir, keepCheckpoints: 0 });
    await populate(fs);
    const snapshot = JSON.parse(await readFile(join(stateDir, 'overlay.json'), 'utf8'));
    expect(snapshot.format).toBe(STATE_FORMAT);
    expect(snapshot.version).toBe(5);
    expect(snapshot.root).toBe('/');
    const doc = await effectiveDoc(stateDir);
    expect(doc.entries.map((e: { path: string }) => e.path)).toEqual(['/bin', '/new/deep/c.md', '/small.txt', '/src/a.ts', '/src/b.ts']);
    expect(doc.entries.find((e: { path: string }) => e.path === '/src/b.ts')?.blob).toBeNull();
    // The small content is in the record itself; the larger ones are blob files.
    const small = doc.entries.find((e: { path: string }) => e.path === '/small.txt')!;
    expect(Buffer.from(small.data!, 'base64').toString()).toBe('small\n');
    expect(doc.entries.filter((e) => e.data !== undefined).map((e) => e.path)).toEqual(['/small.txt']);
    expect(doc.dirs).toEqual(['/empty', '/new', '/new/deep']);
    const blobs = (await readdir(join(stateDir, 'blobs'))).sort();
    expect(blobs).toHaveLength(3);
    for (const b of blobs) expect(b).toMatch(/^[0-9a-f]{64}$/);
    expect((await readdir(stateDir)).sort()).toEqual(['blobs', 'overlay.journal', 'overlay.json']);
  });

  it('deletes blobs nobody refers to any more (no checkpoint kept), and all of them on discard', async () => {
    const stateDir = await tempDir();
    const fs = await createOverlayFs({ lower: createMemoryFs({ files: seed }), stateDir, keepCheckpoints: 0 });
    const a = await fs.resolve('/src/a.ts');
    for (let i = 0; i < 5; i++) await fs.writeText(a, stored(`version ${i}`));
    expect(await readdir(join(stateDir, 'blobs'))).toHaveLength(1);
    await fs.writeText(a, 'original\n');
    expect(await readdir(join(stateDir, 'blobs'))).toHaveLength(0);
    await populate(fs);
    await writeFile(join(stateDir, 'blobs', 'f'.repeat(64)), 'left by a crash');
    await fs.discard();
    expect(await readdir(join(stateDir, 'blobs'))).toEqual([]);
    const doc = JSON.parse(await readFile(join(stateDir, 'overlay.json'), 'utf8'));
    expect(doc.entries).toEqual([]);
    expect(doc.dirs).toEqual([]);
  });

  it('a commit is persisted: a reopened overlay has no changes left', async () => {
    const stateDir = await tempDir();
    const lower = createMemoryFs({ files: seed });
    const fs = await createOverlayFs({ lower, stateDir });
    await populate(fs);
    const view = await viewOf(fs);
    const result = await fs.commit();
    expect(result.conflicts).toEqual([]);
    const reopened = await createOverlayFs({ lower, stateDir });
    expect(await reopened.changes()).toEqual([]);
    expect(await viewOf(reopened)).toEqual(view);
  });

  it('refuses a state that belongs to another lower root, or is damaged', async () => {
    const stateDir = await tempDir();
    const fs = await createOverlayFs({ lower: createMemoryFs({ files: seed }), stateDir });
    await populate(fs);
    const scoped = createMemoryFs({ cwd: '/r' });
    const other: FileSystem = { ...scoped, root: '/r', resolve: (p, o) => scoped.resolve(p, o) };
    expect(await codeOf(createOverlayFs({ lower: other, stateDir }))).toBe('FS_INVALID_ARGUMENT');

    const blobs = await readdir(join(stateDir, 'blobs'));
    await writeFile(join(stateDir, 'blobs', blobs[0]!), 'tampered');
    expect(await codeOf(createOverlayFs({ lower: createMemoryFs({ files: seed }), stateDir }))).toBe('FS_IO_ERROR');

    await writeFile(join(stateDir, 'overlay.json'), '{"format":"something else"}');
    const err = await createOverlayFs({ lower: createMemoryFs(), stateDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FsError);
    expect((err as FsError).message).toMatch(/not valid/);

    await writeFile(join(stateDir, 'overlay.json'), JSON.stringify({ format: STATE_FORMAT, version: 1, root: '/', entries: [{ path: '/x', base: null, blob: '../../etc/passwd' }], dirs: [] }));
    expect(await codeOf(createOverlayFs({ lower: createMemoryFs(), stateDir }))).toBe('FS_IO_ERROR');
  });
});

describe('overlay persistence in an upper FileSystem', () => {
  /** A memory filesystem whose writes can be made to fail. */
  function flakyUpper() {
    const inner = createMemoryFs();
    let failing = false;
    const fs: FileSystem = {
      ...inner,
      resolve: (p, o) => inner.resolve(p, o),
      contains: (a, b) => inner.contains(a, b),
      writeBytes: (t, b, i, o) => (failing ? Promise.reject(new FsError('FS_IO_ERROR', 'disk full')) : inner.writeBytes(t, b, i, o)),
    };
    return { fs, inner, setFailing: (f: boolean) => void (failing = f) };
  }

  it('reopens from the same upper filesystem', async () => {
    const upper = createMemoryFs();
    const lower = createMemoryFs({ files: seed });
    const live = await createOverlayFs({ lower, upper, keepCheckpoints: 0 });
    await populate(live);
    const reopened = await createOverlayFs({ lower, upper, keepCheckpoints: 0 });
    expect(await viewOf(reopened)).toEqual(await viewOf(live));
    expect(await reopened.changes()).toEqual(await live.changes());
    expect(Object.keys(upper.snapshot()).filter((p) => p.startsWith('/blobs/'))).toHaveLength(3);
  });

  it('a mutation whose state cannot be saved fails and changes nothing', async () => {
    const upper = flakyUpper();
    const lower = createMemoryFs({ files: seed });
    const fs = await createOverlayFs({ lower, upper: upper.fs });
    const a = await fs.resolve('/src/a.ts');
    await fs.writeText(a, 'first\n');
    const view = await viewOf(fs);
    upper.setFailing(true);
    expect(await codeOf(fs.writeText(a, 'second\n'))).toBe('FS_IO_ERROR');
    expect(await codeOf(fs.remove(await fs.resolve('/keep.txt')))).toBe('FS_IO_ERROR');
    expect(await codeOf(fs.writeText(await fs.resolve('/n/new.txt'), 'x'))).toBe('FS_IO_ERROR');
    expect(await viewOf(fs)).toEqual(view);
    upper.setFailing(false);
    await fs.writeText(a, 'third\n');
    const reopened = await createOverlayFs({ lower, upper: upper.inner });
    expect((await reopened.readText(a)).text).toBe('third\n');
  });

  it('concurrent mutations are saved together and all survive a reopen', async () => {
    const upper = createMemoryFs();
    const lower = createMemoryFs({ files: seed });
    const fs = await createOverlayFs({ lower, upper });
    await Promise.all(Array.from({ length: 20 }, async (_, i) => fs.writeText(await fs.resolve(`/many/f${i}.txt`), `file ${i}\n`)));
    const reopened = await createOverlayFs({ lower, upper });
    expect((await reopened.changes()).map((c) => c.path)).toHaveLength(20);
    expect(await viewOf(reopened)).toEqual(await viewOf(fs));
  });
});
