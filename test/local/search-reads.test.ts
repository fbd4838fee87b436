import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { grep, type FsTarget } from '../../src/index.js';
import { textProblem } from '../../src/seam/index.js';
import { makeArea, type Area } from './helpers.js';

// searchReads of the local provider: each answer is the file's bytes, null (text without the
// literal), or undefined (read it the usual way); helpers (processes or threads) and the calling
// thread answer alike.

let area: Area;
beforeAll(async () => {
  area = await makeArea('search-reads');
});
afterAll(async () => {
  await area.cleanup();
});

const LITERAL = 'needle';
const KINDS = ['processes', 'threads'] as const;
/** A provider whose searches read on two helpers of `kind`. */
const onHelpers = (kind: (typeof KINDS)[number]) => createLocalFs({ root: area.root, searchThreads: 2, searchHelpers: kind });
const enc = (s: string) => Buffer.from(s, 'utf8');

/** What a file of the tree holds: text with or without the literal, or bytes that are not text. */
const content = fc.oneof(
  fc.string({ maxLength: 40 }).map((s) => enc(s)),
  fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 })).map(([a, b]) => enc(`${a}${LITERAL}${b}\n`)),
  fc.uint8Array({ maxLength: 30 }).map((b) => Buffer.from(b)),
  fc.constantFrom(enc(`${LITERAL}\0`), Buffer.from([0xff, 0xfe, 0x6e, 0x00]), Buffer.from([0x6e, 0x65, 0xc3]), enc(''), enc('x'.repeat(300))),
);

let round = 0;

/** Writes `files` into a fresh directory of the root (two subdirectories), and resolves them in order. */
async function planted(
  fs: ReturnType<typeof createLocalFs>,
  files: readonly Buffer[],
  subOf = (i: number) => (i % 3 === 0 ? 'a' : 'b'),
): Promise<{ targets: FsTarget[]; dir: string }> {
  const dir = join(area.root, `r${round++}`);
  for (const sub of ['a', 'b']) mkdirSync(join(dir, sub), { recursive: true });
  const targets: FsTarget[] = [];
  for (let i = 0; i < files.length; i++) {
    const path = join(dir, subOf(i), `f${i}.txt`);
    writeFileSync(path, files[i]!);
    targets.push(await fs.resolve(path));
  }
  return { targets, dir };
}

describe.each(KINDS)('local searchReads on %s', (kind) => {
  it('answers bytes as read, null only for text without the literal, on helpers and on the calling thread alike', async () => {
    const onWorkers = onHelpers(kind);
    const here = createLocalFs({ root: area.root, searchThreads: 0 });
    // Each file pinned before it is opened: the same answers.
    const pinned = createLocalFs({ root: area.root, searchThreads: 2, searchHelpers: kind, pinSearchReads: true });
    await fc.assert(
      fc.asyncProperty(fc.array(content, { minLength: 64, maxLength: 140 }), fc.integer({ min: 0, max: 400 }), async (files, maxBytes) => {
        const { targets } = await planted(onWorkers, files);
        const query = { maxBytes, maxTotalBytes: 1 << 20, contains: enc(LITERAL) };
        const plain = (answers: readonly (Uint8Array | null | undefined)[]) => answers.map((x) => (x instanceof Uint8Array ? Buffer.from(x) : x));
        const a = await onWorkers.searchReads!(targets, query);
        expect(plain(a)).toEqual(plain(await here.searchReads!(targets, query)));
        expect(plain(a)).toEqual(plain(await pinned.searchReads!(targets, query)));
        files.forEach((bytes, i) => {
          const answer = a[i];
          if (bytes.byteLength > maxBytes) expect(answer).toBeUndefined();
          // A small regular file is read here, not left to the usual read.
          else if (textProblem(bytes) === undefined && !bytes.includes(enc(LITERAL))) expect(answer).toBeNull();
          else expect(Buffer.from(answer!)).toEqual(bytes);
        });
        // Without a literal nothing is passed over.
        const all = await onWorkers.searchReads!(targets, { maxBytes, maxTotalBytes: 1 << 20 });
        files.forEach((bytes, i) => (bytes.byteLength > maxBytes ? expect(all[i]).toBeUndefined() : expect(Buffer.from(all[i]!)).toEqual(bytes)));
      }),
      { numRuns: 15 },
    );
  });

  it('stops reading at the first file over maxTotalBytes: it and every later file are left to the usual read', async () => {
    const onWorkers = onHelpers(kind);
    const here = createLocalFs({ root: area.root, searchThreads: 0 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(content, { minLength: 64, maxLength: 120 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 40 }),
        async (files, maxBytes, maxTotalBytes, withLiteral, run) => {
          // Runs of `run` files per directory: the total holds across a directory's files and from one to the next.
          const { targets } = await planted(onWorkers, files, (i) => (Math.floor(i / run) % 2 === 0 ? 'a' : 'b'));
          const query = { maxBytes, maxTotalBytes, ...(withLiteral ? { contains: enc(LITERAL) } : {}) };
          // The model: in order, each small file held takes from what is left, until one does not fit.
          let left = maxTotalBytes;
          const expected = files.map((bytes) => {
            if (left < 0 || bytes.byteLength > maxBytes) return undefined;
            if (withLiteral && textProblem(bytes) === undefined && !bytes.includes(enc(LITERAL))) return null;
            if (bytes.byteLength > left) return (left = -1), undefined;
            left -= bytes.byteLength;
            return bytes;
          });
          const plain = (answers: readonly (Uint8Array | null | undefined)[]) => answers.map((x) => (x instanceof Uint8Array ? Buffer.from(x) : x));
          expect(plain(await onWorkers.searchReads!(targets, query))).toEqual(expected);
          expect(plain(await here.searchReads!(targets, query))).toEqual(expected);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('shares a request of over 2,048 files among the helpers, each answer in its place', async () => {
    const fs = onHelpers(kind);
    const files = Array.from({ length: 2_100 }, (_, i) => enc(i % 5 === 0 ? `${LITERAL} ${i}\n` : `other ${i}\n`));
    const { targets } = await planted(fs, files);
    const answers = await fs.searchReads!(targets, { maxBytes: 1024, maxTotalBytes: 1 << 20, contains: enc(LITERAL) });
    answers.forEach((a, i) => (i % 5 === 0 ? expect(Buffer.from(a!)).toEqual(files[i]) : expect(a).toBeNull()));
  });

  it.each([false, true])('leaves names swapped for a link, a FIFO or a directory, and removed ones, to the usual read (pinSearchReads: %s)', async (pin) => {
    const fs = createLocalFs({ root: area.root, searchThreads: 2, searchHelpers: kind, pinSearchReads: pin });
    const { targets, dir } = await planted(fs, Array.from({ length: 70 }, (_, i) => enc(`${LITERAL} ${i}\n`)));
    // f0, f3, f6 and f9 are in a/: swapped after they were resolved.
    const at = (i: number) => join(dir, 'a', `f${i}.txt`);
    rmSync(at(0));
    symlinkSync(at(12), at(0));
    rmSync(at(3));
    execFileSync('mkfifo', [at(3)]);
    rmSync(at(6));
    mkdirSync(at(6));
    rmSync(at(9));
    const answers = await fs.searchReads!(targets, { maxBytes: 1024, maxTotalBytes: 1 << 20 });
    answers.forEach((a, i) => expect(a === undefined).toBe([0, 3, 6, 9].includes(i)));
  });

  it.each([false, true])('opens a FIFO swapped in after the listing only without pinSearchReads, and never reads it (pinSearchReads: %s)', async (pin) => {
    const fs = createLocalFs({ root: area.root, searchThreads: 2, searchHelpers: kind, pinSearchReads: pin });
    const { targets, dir } = await planted(fs, Array.from({ length: 70 }, (_, i) => enc(`${LITERAL} ${i}\n`)));
    const fifo = join(dir, 'a', 'f3.txt');
    rmSync(fifo);
    execFileSync('mkfifo', [fifo]);
    // A writer's blocking open returns only once a reader has the FIFO open.
    const writer = spawn(process.execPath, ['-e', `require('node:fs').openSync(${JSON.stringify(fifo)}, 'w'); process.stdout.write('opened')`]);
    let said = '';
    writer.stdout.on('data', (d: Buffer) => (said += d.toString()));
    const ended = new Promise<void>((resolve) => writer.on('exit', () => resolve()));
    try {
      await blockedOnFifo(writer.pid!);
      const answers = await fs.searchReads!(targets, { maxBytes: 1024, maxTotalBytes: 1 << 20 });
      expect(answers[3]).toBeUndefined();
      expect(answers.filter((a) => a === undefined)).toHaveLength(1);
      if (pin) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(said).toBe('');
      } else {
        await ended;
        expect(said).toBe('opened');
      }
    } finally {
      writer.kill('SIGKILL');
      await ended;
    }
  });

  it('reads nothing through a directory moved out of the root, or swapped for a link out of it (P2)', async () => {
    for (const threads of [0, 2]) {
      const fs = createLocalFs({ root: area.root, searchThreads: threads, searchHelpers: kind });
      const { targets, dir } = await planted(fs, Array.from({ length: 90 }, () => enc('inside\n')));
      const away = join(area.outside, `b${round++}`);
      renameSync(join(dir, 'b'), away);
      // Swapped for a link to where it went: opened by that path, it is not where its key says.
      if (threads === 2) symlinkSync(away, join(dir, 'b'));
      const answers = await fs.searchReads!(targets, { maxBytes: 1024, maxTotalBytes: 1 << 20 });
      targets.forEach((t, i) => expect(answers[i] === undefined).toBe(t.targetKey.includes('/b/')));
    }
  });
});

/** Until the process `pid` waits in its open of a FIFO for a reader (its wait channel says so). */
async function blockedOnFifo(pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (readFileSync(`/proc/${pid}/wchan`, 'utf8') === 'wait_for_partner') return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the writer never waited on the FIFO');
}

/** grep's files: those of `content`, and lines ending in CRLF, and now and then one over the helpers' 256 KiB. */
const grepContent = fc.oneof(
  { arbitrary: content, weight: 160 },
  { arbitrary: fc.array(fc.constantFrom(`a ${LITERAL}`, 'nope', '', `${LITERAL}\r`, 'é n e'), { maxLength: 6 }).map((lines) => enc(lines.join('\r\n'))), weight: 40 },
  { arbitrary: fc.constant(enc(`${'x'.repeat(99)}\n`.repeat(3_000) + `${LITERAL} large\r\n`)), weight: 1 },
);

describe('grep with reads on helpers', () => {
  it('finds what it finds reading each file by itself: matches, skips, counts and truncation', async () => {
    const top = join(area.root, 'grep');
    await fc.assert(
      fc.asyncProperty(fc.array(grepContent, { minLength: 100, maxLength: 700 }), fc.integer({ min: 1, max: 60 }), async (files, maxMatches) => {
        const dir = join(top, `g${round++}`);
        files.forEach((bytes, i) => {
          const sub = join(dir, `d${i % 7}`, i % 2 === 0 ? '' : 'e');
          mkdirSync(sub, { recursive: true });
          writeFileSync(join(sub, `f${i}.txt`), bytes);
        });
        // Each file read by itself, as without searchReads.
        const fsOf = (threads: number | 'none', kind: (typeof KINDS)[number] = 'threads') => {
          const fs = createLocalFs({ root: area.root, searchThreads: threads === 'none' ? 0 : threads, searchHelpers: kind });
          return threads === 'none' ? Object.assign(Object.create(fs) as typeof fs, { searchReads: undefined }) : fs;
        };
        const strip = (r: Awaited<ReturnType<typeof grep>>) => ({ ...r, matches: r.matches.map(({ target: _, ...m }) => m) });
        for (const pattern of [LITERAL, /n.e/i]) {
          for (const options of [{}, { maxMatches }, { maxFileBytes: 40 }]) {
            const alone = strip(await grep(fsOf('none'), pattern, { path: dir, ...options }));
            for (const kind of KINDS) expect(strip(await grep(fsOf(2, kind), pattern, { path: dir, ...options }))).toEqual(alone);
            expect(strip(await grep(fsOf(0), pattern, { path: dir, ...options }))).toEqual(alone);
          }
        }
      }),
      { numRuns: 8 },
    );
  });
});

describe('grep reading ahead', () => {
  it('asks for little ahead of a search that stops at its first match, and for at most 4 MiB a request', async () => {
    const dir = join(area.root, `early${round++}`);
    mkdirSync(dir);
    for (let i = 0; i < 3_000; i++) writeFileSync(join(dir, `f${String(i).padStart(4, '0')}.txt`), `${LITERAL} ${i}\n`);
    const fs = createLocalFs({ root: area.root, searchThreads: 2 });
    const asked: { files: number; maxTotalBytes: number }[] = [];
    const counting = Object.assign(Object.create(fs) as typeof fs, {
      searchReads: (targets: readonly FsTarget[], query: Parameters<NonNullable<typeof fs.searchReads>>[1]) => {
        asked.push({ files: targets.length, maxTotalBytes: query.maxTotalBytes });
        return fs.searchReads!(targets, query);
      },
    });
    const found = await grep(counting, LITERAL, { path: dir, maxMatches: 1 });
    expect(found.matches.map((m) => m.path)).toEqual([join(dir, 'f0000.txt')]);
    // Three requests out before the first answer: 64, 256 and 1,024 files, not thousands.
    expect(asked.reduce((n, a) => n + a.files, 0)).toBeLessThanOrEqual(64 + 256 + 1_024);
    expect(asked.every((a) => a.maxTotalBytes <= 4 * 1024 * 1024)).toBe(true);
  });
});

describe('searchThreads and searchHelpers', () => {
  it('searchHelpers is "processes" or "threads", else FS_INVALID_ARGUMENT', () => {
    for (const bad of ['process', 'thread', '', 2]) {
      expect(() => createLocalFs({ root: area.root, searchHelpers: bad as 'threads' })).toThrow(expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }));
    }
    for (const good of KINDS) expect(createLocalFs({ root: area.root, searchHelpers: good }).searchReads).toBeTypeOf('function');
  });

  it('searchThreads is an integer from 0 to 64, else FS_INVALID_ARGUMENT', () => {
    for (const bad of [-1, 1.5, 65, Number.NaN, '2' as unknown as number]) {
      expect(() => createLocalFs({ root: area.root, searchThreads: bad })).toThrow(expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }));
    }
    for (const good of [0, 1, 64]) expect(createLocalFs({ root: area.root, searchThreads: good }).searchReads).toBeTypeOf('function');
  });
});

describe('pinSearchReads', () => {
  it('is true or false, else FS_INVALID_ARGUMENT', () => {
    for (const bad of ['yes', 1, null]) {
      expect(() => createLocalFs({ root: area.root, pinSearchReads: bad as unknown as boolean })).toThrow(expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }));
    }
  });
});
