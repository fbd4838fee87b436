import { hash } from 'node:crypto';
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { mountFs, type Mount } from '../../src/mount/index.js';
import type { FileSystem } from '../../src/seam/index.js';
import { cleanUp, fuseUnavailable, sh } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);

// Files over the whole-file size (8 MiB by default) and over the filesystem's text limit (1 MiB
// here) through the mount: read by range, written as ranges, published as one stream.
const MiB = 1024 * 1024;
const SIZE = 16 * MiB;
const LIMIT = MiB;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** Bytes held by the process (array buffers: file contents), after a full collection. */
const held = () => {
  gc();
  return process.memoryUsage().arrayBuffers;
};

/**
 * held(), once it is under `bound` or after two seconds: the kernel sends a closed descriptor's
 * release to the mount after close() returns, so a reader's copy can outlive its close briefly.
 */
async function heldSettled(bound: number): Promise<number> {
  let now = held();
  for (const end = Date.now() + 2000; now >= bound && Date.now() < end; now = held()) await new Promise((r) => setTimeout(r, 20));
  return now;
}

function content(size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let x = 2463534242;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const sha = (bytes: Uint8Array) => hash('sha256', bytes, 'hex');

interface Subject {
  readonly fs: FileSystem;
  /** The file's bytes as the store holds them. */
  bytes(): Promise<Buffer>;
  close(): Promise<void>;
}

const SUBJECTS: { name: string; make: (expected: Buffer) => Promise<Subject> }[] = [
  {
    name: 'memory',
    make: async (expected) => {
      const fs = createMemoryFs({ maxTextBytes: LIMIT });
      await fs.writeBytes(await fs.resolve('/big.bin'), expected);
      return { fs, bytes: async () => Buffer.from((await fs.readBytes(await fs.resolve('/big.bin'), { maxBytes: 4 * SIZE })).bytes), close: async () => {} };
    },
  },
  {
    name: 'a local root',
    make: async (expected) => {
      const root = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-large-root-'));
      await writeFile(join(root, 'big.bin'), expected);
      return { fs: createLocalFs({ root, maxTextBytes: LIMIT }), bytes: () => readFile(join(root, 'big.bin')), close: () => rm(root, { recursive: true, force: true }) };
    },
  },
];

describe.skipIf(why !== undefined).each(SUBJECTS)('a file over the whole-file size through a mount of $name', ({ make }) => {
  let dir: string;
  let subject: Subject;
  let mount: Mount | undefined;
  let expected: Buffer;
  let big: string;

  beforeAll(async () => {
    expected = content(SIZE);
    subject = await make(expected);
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-large-'));
    mount = await mountFs(subject.fs, dir);
    big = join(dir, 'big.bin');
  });
  afterAll(async () => {
    await cleanUp(mount, dir);
    await subject?.close();
  });

  it('cat reads it whole; reads at any offset give the bytes there', async () => {
    const r = await sh(`cat "${big}" | sha256sum; stat -c %s "${big}"`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${sha(expected)}  -\n${SIZE}\n`);
    const h = await open(big, 'r');
    try {
      for (const [pos, len] of [[SIZE - 100, 100], [0, 10], [9 * MiB + 5, 300_000], [3, 1], [SIZE - 1, 10]] as const) {
        const buf = Buffer.alloc(len);
        const { bytesRead } = await h.read(buf, 0, len, pos);
        expect(sha(buf.subarray(0, bytesRead))).toBe(sha(expected.subarray(pos, pos + len)));
      }
    } finally {
      await h.close();
    }
  });

  it('a write in the middle (dd conv=notrunc), an append and truncates publish what a disk would hold', async () => {
    const model = Buffer.from(expected);
    let r = await sh(`printf XYZ | dd of="${big}" bs=1 seek=5000000 conv=notrunc status=none && printf tail >> "${big}"`);
    expect(r.code, r.stderr).toBe(0);
    model.write('XYZ', 5_000_000);
    let now = Buffer.concat([model, Buffer.from('tail')]);
    expect(sha(await subject.bytes())).toBe(sha(now));

    // Through a descriptor of this process (asynchronous calls only: it serves the mount).
    const h = await open(big, 'r+');
    try {
      await h.write(Buffer.from('middle'), 0, 6, 12 * MiB);
      await h.write(Buffer.from('past the end'), 0, 12, now.length + 1000);
      const back = Buffer.alloc(6);
      await h.read(back, 0, 6, 12 * MiB);
      expect(back.toString()).toBe('middle');
    } finally {
      await h.close();
    }
    now.write('middle', 12 * MiB);
    now = Buffer.concat([now, Buffer.alloc(1000), Buffer.from('past the end')]);
    expect(sha(await subject.bytes())).toBe(sha(now));

    r = await sh(`truncate -s 3000000 "${big}" && truncate -s 3000100 "${big}" && stat -c %s "${big}" && cat "${big}" | sha256sum`);
    expect(r.code, r.stderr).toBe(0);
    now = Buffer.concat([now.subarray(0, 3_000_000), Buffer.alloc(100)]);
    expect(r.stdout).toBe(`3000100\n${sha(now)}  -\n`);
    expect(sha(await subject.bytes())).toBe(sha(now));
    expect((await stat(big)).size).toBe(now.length);
    // Back to the full size for the next case.
    await writeFile(big, expected);
    expect(sha(await subject.bytes())).toBe(sha(expected));
  });

  it('a publish that lost a race fails the close with EIO, and the other change stays', async () => {
    const h = await open(big, 'r+');
    let closed: unknown;
    try {
      await h.write(Buffer.from('mine'), 0, 4, 10 * MiB);
      const theirs = Buffer.from(expected);
      theirs.write('THEIRS', 10 * MiB);
      await subject.fs.writeBytes(await subject.fs.resolve(`${subject.fs.root ?? ''}/big.bin`), theirs);
    } finally {
      closed = await h.close().then(() => 'closed', (err: NodeJS.ErrnoException) => err.code);
    }
    expect(closed).toBe('EIO');
    const now = await subject.bytes();
    expect(now.subarray(10 * MiB, 10 * MiB + 6).toString()).toBe('THEIRS');
    await writeFile(big, expected);
  });

  it('the mount holds what was written, not the file: memory stays far below its size', async () => {
    const before = held();
    let peak = 0;
    const sample = setInterval(() => (peak = Math.max(peak, held())), 50);
    let whileOpen: number;
    try {
      const w = await open(big, 'r+');
      try {
        for (const pos of [1, 7 * MiB, 15 * MiB]) await w.write(Buffer.from('patch'), 0, 5, pos);
        const r = await open(big, 'r');
        const piece = Buffer.alloc(128 * 1024);
        let total = 0;
        for (let n = 1; n > 0; total += n) n = (await r.read(piece, 0, piece.length, total)).bytesRead;
        await r.close();
        expect(total).toBe(SIZE);
        whileOpen = await heldSettled(before + SIZE / 2);
      } finally {
        await w.close();
      }
    } finally {
      clearInterval(sample);
    }
    // While open: the written ranges, not the file.
    expect(whileOpen - before).toBeLessThan(SIZE / 2);
    // A store in memory holds the file itself, and its reads copy it: the peak is asserted on disk
    // only, and loosely: each read the kernel has in flight (how many depends on scheduling) may
    // hold a chunk of its own. Holding the file whole, and a copy to publish, is twice its size.
    if (subject.fs.root !== undefined && subject.fs.root !== '/') expect(peak - before).toBeLessThan(1.5 * SIZE);
    expect((await heldSettled(before + SIZE / 2)) - before).toBeLessThan(SIZE / 2);
    const done = await subject.bytes();
    expect(done.subarray(7 * MiB, 7 * MiB + 5).toString()).toBe('patch');
  });
});
