import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { OpenFiles } from '../../src/mount/handles.js';
import { Patches } from '../../src/mount/patches.js';
import type { FileSystem } from '../../src/seam/index.js';

// Large open files on their own (no FUSE): read by range, written as ranges, published as a stream.
const WHOLE = 64;
const bytesOf = async (fs: FileSystem, path: string) => new Uint8Array((await fs.readBytes(await fs.resolve(path), { maxBytes: 1 << 20 })).bytes);
const pattern = (n: number, seed = 0) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) % 251);

async function readAll(files: OpenFiles, fd: number, size: number, piece: number): Promise<Uint8Array> {
  const out = new Uint8Array(size + piece);
  let at = 0;
  for (;;) {
    const n = await files.read(fd, Buffer.from(out.buffer, at, piece), piece, at);
    if (n === 0) break;
    at += n;
  }
  return out.subarray(0, at);
}

type Op =
  | { kind: 'write'; at: number; len: number; seed: number }
  | { kind: 'truncate'; size: number }
  | { kind: 'read'; at: number; len: number }
  | { kind: 'flush' }
  | { kind: 'flushHeld' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), at: fc.nat({ max: 400 }), len: fc.integer({ min: 1, max: 90 }), seed: fc.nat({ max: 250 }) }),
  fc.record({ kind: fc.constant('truncate' as const), size: fc.nat({ max: 400 }) }),
  fc.record({ kind: fc.constant('read' as const), at: fc.nat({ max: 420 }), len: fc.integer({ min: 1, max: 130 }) }),
  fc.constant({ kind: 'flush' as const }),
  // A publish that takes its snapshot, then waits (the next ops run while it streams).
  fc.constant({ kind: 'flushHeld' as const }),
);

describe('large open files', () => {
  it('any run of writes, truncates, reads and flushes gives the bytes a plain buffer would', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 300 }), fc.array(opArb, { maxLength: 25 }), async (initial, ops) => {
        const fs = createMemoryFs({ maxTextBytes: 100 });
        await fs.writeBytes(await fs.resolve('/f'), pattern(initial));
        let hold: Promise<void> | undefined;
        const held: FileSystem = { ...fs, writeBytesFrom: async (...args) => (await hold, fs.writeBytesFrom!(...args)) };
        const files = new OpenFiles(held, 1 << 20, WHOLE);
        const t = await fs.resolve('/f');
        const fd = await files.open(t, { writable: true, append: false, truncate: false });
        let model = pattern(initial);
        let pending: { done: Promise<void>; release: () => void; model: Uint8Array } | undefined;
        const settle = async () => {
          if (pending === undefined) return;
          const p = pending;
          pending = undefined;
          p.release();
          hold = undefined;
          await p.done;
          expect([...(await bytesOf(fs, '/f'))]).toEqual([...p.model]);
        };
        for (const op of ops) {
          if (op.kind === 'write') {
            const data = pattern(op.len, op.seed);
            files.write(fd, Buffer.from(data), op.len, op.at);
            const grown = new Uint8Array(Math.max(model.length, op.at + op.len));
            grown.set(model);
            grown.set(data, op.at);
            model = grown;
          } else if (op.kind === 'truncate') {
            files.truncate(fd, op.size);
            const cut = new Uint8Array(op.size);
            cut.set(model.subarray(0, op.size));
            model = cut;
          } else if (op.kind === 'read') {
            const buf = Buffer.alloc(op.len);
            const n = await files.read(fd, buf, op.len, op.at);
            expect([...buf.subarray(0, n)]).toEqual([...model.subarray(op.at, op.at + op.len)]);
          } else if (op.kind === 'flushHeld') {
            if (pending !== undefined || files.node(t)?.large === undefined) continue;
            let release!: () => void;
            hold = new Promise<void>((resolve) => (release = resolve));
            pending = { done: files.flush(fd), release, model: model.slice() };
            await new Promise((resolve) => setImmediate(resolve));
          } else {
            await settle();
            await files.flush(fd);
            expect([...(await bytesOf(fs, '/f'))]).toEqual([...model]);
          }
          expect(files.node(t)?.length).toBe(model.length);
        }
        await settle();
        await files.release(fd);
        expect([...(await bytesOf(fs, '/f'))]).toEqual([...model]);
      }),
      { numRuns: 200 },
    );
  });

  it('a read-only open of a large file reads it by range, in any piece size', async () => {
    const fs = createMemoryFs({ maxTextBytes: 100 });
    const bytes = pattern(5000);
    await fs.writeBytes(await fs.resolve('/f'), bytes);
    const files = new OpenFiles(fs, 1 << 20, WHOLE);
    for (const piece of [1, 7, 128, 4096, 9000]) {
      const fd = await files.open(await fs.resolve('/f'), { writable: false, append: false, truncate: false });
      expect(Buffer.compare(await readAll(files, fd, bytes.length, piece), bytes)).toBe(0);
      const back = Buffer.alloc(10);
      expect(await files.read(fd, back, 10, 17)).toBe(10);
      expect([...back]).toEqual([...bytes.subarray(17, 27)]);
      await files.release(fd);
    }
  });

  it('a publish that lost a race is refused (FS_STALE_VERSION) and the other change stays', async () => {
    const fs = createMemoryFs({ maxTextBytes: 100 });
    const t = await fs.resolve('/f');
    await fs.writeBytes(t, pattern(1000));
    const files = new OpenFiles(fs, 1 << 20, WHOLE);
    const fd = await files.open(t, { writable: true, append: false, truncate: false });
    files.write(fd, Buffer.from('mine'), 4, 500);
    await fs.writeBytes(t, pattern(1000, 3));
    await expect(files.flush(fd)).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    await expect(files.release(fd)).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    expect([...(await bytesOf(fs, '/f'))]).toEqual([...pattern(1000, 3)]);
  });

  it('a write during a publish is kept for the next one; the bytes written are held, not the file', async () => {
    const fs = createMemoryFs({ maxTextBytes: 100 });
    const t = await fs.resolve('/f');
    await fs.writeBytes(t, pattern(1000));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow: FileSystem = { ...fs, writeBytesFrom: async (...args) => (await gate, fs.writeBytesFrom!(...args)) };
    const files = new OpenFiles(slow, 1 << 20, WHOLE);
    const fd = await files.open(t, { writable: true, append: false, truncate: false });
    files.write(fd, Buffer.from('a'), 1, 10);
    const first = files.flush(fd);
    await new Promise((resolve) => setImmediate(resolve));
    files.truncate(fd, 5);
    files.write(fd, Buffer.from('b'), 1, 10);
    files.write(fd, Buffer.from('c'), 1, 2000);
    open();
    await first;
    const published = await bytesOf(fs, '/f');
    expect([published[10], published[500], published.length]).toEqual([97, pattern(1000)[500], 1000]);
    await files.release(fd);
    const now = await bytesOf(fs, '/f');
    // What the truncate cut of the bytes published meanwhile reads as zeros.
    expect([now[4], now[7], now[10], now[500], now[1500], now[2000], now.length]).toEqual([pattern(1000)[4], 0, 98, 0, 0, 99, 2001]);
  });

  it('a publish streams the ranges as they were when it began, though they are written over meanwhile', async () => {
    const fs = createMemoryFs({ maxTextBytes: 100 });
    const t = await fs.resolve('/f');
    await fs.writeBytes(t, pattern(1000));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow: FileSystem = { ...fs, writeBytesFrom: async (...args) => (await gate, fs.writeBytesFrom!(...args)) };
    const files = new OpenFiles(slow, 1 << 20, WHOLE);
    const fd = await files.open(t, { writable: true, append: false, truncate: false });
    files.write(fd, Buffer.from('aaaa'), 4, 10);
    const first = files.flush(fd);
    await new Promise((resolve) => setImmediate(resolve));
    files.write(fd, Buffer.from('bb'), 2, 11);
    open();
    await first;
    expect(Buffer.from(await bytesOf(fs, '/f')).subarray(10, 14).toString()).toBe('aaaa');
    await files.release(fd);
    expect(Buffer.from(await bytesOf(fs, '/f')).subarray(10, 14).toString()).toBe('abba');
  });

  it('writes past maxFileBytes of held bytes are EFBIG; a large file itself is not', async () => {
    const fs = createMemoryFs({ maxTextBytes: 100 });
    const t = await fs.resolve('/f');
    await fs.writeBytes(t, pattern(1000));
    const files = new OpenFiles(fs, 200, WHOLE);
    const fd = await files.open(t, { writable: true, append: false, truncate: false });
    files.write(fd, Buffer.alloc(150), 150, 0);
    expect(() => files.write(fd, Buffer.alloc(100), 100, 600)).toThrow(expect.objectContaining({ errno: expect.any(Number) }));
    files.truncate(fd, 1 << 20);
    await files.release(fd);
    expect((await bytesOf(fs, '/f')).length).toBe(1 << 20);
  });

  it('over a filesystem that cannot take a stream, a file opened for writing is held whole, up to maxFileBytes', async () => {
    const memory = createMemoryFs({ maxTextBytes: 100 });
    const { writeBytesFrom: _, ...fs } = memory;
    const t = await fs.resolve('/f');
    await fs.writeBytes(t, pattern(1000));
    const files = new OpenFiles(fs, 2000, WHOLE);
    const fd = await files.open(t, { writable: true, append: true, truncate: false });
    expect(files.node(t)?.large).toBeUndefined();
    files.write(fd, Buffer.from('end'), 3, 0);
    expect(() => files.write(fd, Buffer.alloc(1000), 1000, 0)).toThrow();
    await files.release(fd);
    expect(Buffer.from(await bytesOf(fs, '/f')).subarray(1000).toString()).toBe('end');
  });
});

describe('patches', () => {
  it('writes in order make one range, grown in place', () => {
    const p = new Patches();
    for (let at = 0; at < 1000; at += 10) p.write(at, pattern(10, at));
    expect(p.bytes).toBe(1000);
    const into = new Uint8Array(1000);
    p.overlay(into, 0);
    const expected = new Uint8Array(1000);
    for (let at = 0; at < 1000; at += 10) expected.set(pattern(10, at), at);
    expect([...into]).toEqual([...expected]);
  });
});
