import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { OpenFiles } from '../../src/mount/handles.js';
import type { FileSystem } from '../../src/seam/index.js';

// The open-file buffers on their own: no FUSE needed.
const read = async (fs: FileSystem, path: string) => Buffer.from((await fs.readBytes(await fs.resolve(path), { maxBytes: 1 << 20 })).bytes).toString();
const write = (files: OpenFiles, fd: number, text: string, at: number) => files.write(fd, Buffer.from(text), Buffer.byteLength(text), at);

describe('open files', () => {
  it('a write made while a publish is under way is published by the next flush, not lost', async () => {
    const fs = createMemoryFs({ files: { '/f': '' } });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow: FileSystem = { ...fs, writeBytes: async (...args) => (await gate, fs.writeBytes(...args)) };
    const files = new OpenFiles(slow, 1 << 20);
    const fd = await files.open(await fs.resolve('/f'), { writable: true, append: false, truncate: false });
    write(files, fd, 'a', 0);
    const first = files.flush(fd);
    await new Promise((resolve) => setImmediate(resolve));
    write(files, fd, 'b', 1);
    open();
    await first;
    expect(await read(fs, '/f')).toBe('a');
    await files.release(fd);
    expect(await read(fs, '/f')).toBe('ab');
  });

  it('descriptors on one file share its bytes; a read-only open with no writer sees the file as it was', async () => {
    const fs = createMemoryFs({ files: { '/f': 'old' } });
    const files = new OpenFiles(fs, 1 << 20);
    const t = await fs.resolve('/f');
    const before = await files.open(t, { writable: false, append: false, truncate: false });
    const w = await files.open(t, { writable: true, append: false, truncate: true });
    const r = await files.open(t, { writable: false, append: false, truncate: false });
    write(files, w, 'new!', 0);
    const buf = Buffer.alloc(10);
    expect(buf.subarray(0, await files.read(r, buf, 10, 0)).toString()).toBe('new!');
    expect(buf.subarray(0, await files.read(before, buf, 10, 0)).toString()).toBe('old');
    expect(files.node(t)?.length).toBe(4);
    await files.release(w);
    expect(await read(fs, '/f')).toBe('new!');
  });

  it('a lost race rejects with FS_STALE_VERSION and keeps the other change; an unlinked file is not published', async () => {
    const fs = createMemoryFs({ files: { '/f': 'old', '/g': 'old' } });
    const files = new OpenFiles(fs, 1 << 20);
    const f = await files.open(await fs.resolve('/f'), { writable: true, append: false, truncate: false });
    await fs.writeText(await fs.resolve('/f'), 'theirs');
    write(files, f, 'mine', 0);
    await expect(files.flush(f)).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    await expect(files.release(f)).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    expect(await read(fs, '/f')).toBe('theirs');

    const g = await fs.resolve('/g');
    const fd = await files.open(g, { writable: true, append: false, truncate: false });
    write(files, fd, 'gone', 0);
    await fs.remove(g);
    files.unlinked(g);
    await files.release(fd);
    expect(await fs.stat(g)).toBeUndefined();
  });

  it('after a refused publish, a new open starts from the file as published, before the old descriptor is released', async () => {
    const fs = createMemoryFs({ files: { '/f': 'old' } });
    const files = new OpenFiles(fs, 1 << 20);
    const t = await fs.resolve('/f');
    const stale = await files.open(t, { writable: true, append: false, truncate: false });
    write(files, stale, 'mine', 0);
    await fs.writeText(t, 'theirs');
    await expect(files.flush(stale)).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    const fresh = await files.open(t, { writable: true, append: true, truncate: false });
    write(files, fresh, '!', 0);
    await files.release(fresh);
    expect(await read(fs, '/f')).toBe('theirs!');
    await expect(files.release(stale)).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    expect(await read(fs, '/f')).toBe('theirs!');
  });

  it('an open file follows a rename of its directory; appends go to the end; growth fills with zeros', async () => {
    const fs = createMemoryFs({ files: { '/d/f': 'ab' } });
    const files = new OpenFiles(fs, 1 << 20);
    const fd = await files.open(await fs.resolve('/d/f'), { writable: true, append: true, truncate: false });
    write(files, fd, 'c', 0);
    await fs.rename(await fs.resolve('/d'), await fs.resolve('/e'));
    await files.movedTree(await fs.resolve('/d'), await fs.resolve('/e'));
    await files.release(fd);
    expect(await read(fs, '/e/f')).toBe('abc');
    const again = await files.open(await fs.resolve('/e/f'), { writable: true, append: false, truncate: false });
    files.truncate(again, 5);
    await files.release(again);
    expect([...Buffer.from(await read(fs, '/e/f'))]).toEqual([97, 98, 99, 0, 0]);
  });

  it('publishes with deferred durability; fsync flushes its directory, durable() every directory published in', async () => {
    const fs = createMemoryFs({ files: { '/a/f': 'old', '/b/g': 'old' } });
    const durability: unknown[] = [];
    const flushed: string[][] = [];
    const spy: FileSystem = {
      ...fs,
      writeBytes: (target, bytes, intent, options) => (durability.push(options?.durability), fs.writeBytes(target, bytes, intent, options)),
      flush: async (dirs) => void flushed.push(dirs.map((d) => d.displayPath)),
    };
    const files = new OpenFiles(spy, 1 << 20);
    const f = await files.open(await fs.resolve('/a/f'), { writable: true, append: false, truncate: true });
    const g = await files.open(await fs.resolve('/b/g'), { writable: true, append: false, truncate: true });
    write(files, f, 'new f', 0);
    write(files, g, 'new g', 0);
    await files.release(g);
    expect(await read(fs, '/b/g')).toBe('new g');
    expect(flushed).toEqual([]);
    await files.sync(f);
    expect(flushed).toEqual([['/a']]);
    await files.release(f);
    await files.durable();
    expect(flushed).toEqual([['/a'], ['/b']]);
    await files.durable();
    expect(flushed).toHaveLength(2);
    expect(durability).toEqual(['deferred', 'deferred']);
  });
});
