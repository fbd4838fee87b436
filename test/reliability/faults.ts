import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { createLocalFs, type LocalFileSystem } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { contentVersion, type FileSystem, type FsErrorCode, type FsTarget } from '../../src/index.js';
import { FS_ERROR_CODES, isFsError } from '../../src/seam/errors.js';
import { findTemps } from '../local/helpers.js';
import { ERRNOS, FaultyIo, type Errno } from './faulty-io.js';
import { tempDir } from './subjects.js';
import { HEAVY, SCALE, settleWithin, tally } from './tally.js';


/** Every call fails with every errno; at the quick size, with one errno per call, in turn. */
const faultedAt = (n: number, errno: Errno): boolean => SCALE !== 'quick' || ERRNOS[n % ERRNOS.length] === errno;
const ERRNO_LABEL = SCALE === 'quick' ? 'one errno each, in turn' : `${ERRNOS.length} errnos`;

/**
 * Fault injection (SQLite-style): the local provider's every filesystem call goes through a
 * FaultyIo. A first run of an operation counts its calls; then, for every N up to that count and
 * each of ENOSPC, EIO and EACCES, the operation runs again from the same state with the N-th call
 * failing. Afterwards:
 *
 * - the target holds exactly its old or its new bytes (and its mode), never a mix;
 * - a failure reaches the caller as an FsError whose code is the errno's (FS_IO_ERROR for ENOSPC
 *   and EIO, FS_PERMISSION_DENIED for EACCES) and whose message names the errno;
 * - no temp file remains and every descriptor the provider opened is closed;
 * - no lock stays held: the next operation on the same target, with nothing failing, succeeds
 *   (within a generous bound; a lock left held would make it wait forever).
 *
 * The memory provider has no underlying filesystem calls to fail; the overlay is covered through
 * its commit to a local lower and through an upper layer kept on a local disk.
 */

const EXPECTED: Record<Errno, FsErrorCode> = { ENOSPC: 'FS_IO_ERROR', EIO: 'FS_IO_ERROR', EACCES: 'FS_PERMISSION_DENIED' };
const MODE = 0o640;
const SETTLE_MS = 30_000;

const bytes = (s: string) => Buffer.from(s, 'utf8');
const OLD = bytes(`${'one\ntwo\nthree\n'.repeat(20)}the unique line\n${'one\ntwo\nthree\n'.repeat(20)}`);
const NEW_TEXT = 'replaced\n'.repeat(50);
const EDITED = bytes(OLD.toString('utf8').replace('the unique line', 'THE UNIQUE LINE'));

function readOrUndefined(path: string): Buffer | undefined {
  return existsSync(path) ? readFileSync(path) : undefined;
}

function same(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  return a === undefined || b === undefined ? a === b : Buffer.compare(a, b) === 0;
}

/** What the caller got: undefined on success, else the error, checked to be a coded FsError for `errno`. */
function checkError(err: unknown, errno: Errno, where: string): void {
  if (!isFsError(err) || !FS_ERROR_CODES.includes(err.code)) {
    tally.uncodedErrors++;
    throw new Error(`${where}: not a coded FsError: ${String(err)}`);
  }
  expect(err.code, `${where}: ${err.message}`).toBe(EXPECTED[errno]);
  expect(err.message, where).toContain(errno);
}

/** The next operation must run: a lock left held would make it wait until the bound. */
async function nextSucceeds(fs: FileSystem, target: FsTarget, where: string): Promise<void> {
  try {
    await settleWithin(
      (async () => {
        const info = await fs.stat(target);
        const intent = info === undefined ? ({ kind: 'createIfAbsent' } as const) : ({ kind: 'replaceIfVersion', version: info.version } as const);
        await fs.writeText(target, 'after\n', intent);
        expect((await fs.readText(target)).text).toBe('after\n');
      })(),
      SETTLE_MS,
      `${where}: the next write`,
    );
  } catch (err) {
    tally.locksHeld++;
    throw err;
  }
}

interface LocalCase {
  readonly name: string;
  readonly file: string;
  /** The target's bytes before the operation; undefined: absent. */
  readonly old: Buffer | undefined;
  readonly new: Buffer;
  run(fs: LocalFileSystem, target: FsTarget): Promise<unknown>;
}

const LOCAL_CASES: readonly LocalCase[] = [
  {
    name: 'write over a file (guarded)',
    file: 'w.txt',
    old: OLD,
    new: bytes(NEW_TEXT),
    run: (fs, t) => fs.writeText(t, NEW_TEXT, { kind: 'replaceIfVersion', version: contentVersion(OLD) }),
  },
  {
    name: 'create a file and its two missing parent directories',
    file: 'new/deeper/c.txt',
    old: undefined,
    new: bytes(NEW_TEXT),
    run: (fs, t) => fs.writeText(t, NEW_TEXT, { kind: 'createIfAbsent' }),
  },
  {
    name: 'edit (guarded)',
    file: 'e.txt',
    old: OLD,
    new: EDITED,
    run: (fs, t) => fs.editText(t, { oldString: 'the unique line', newString: 'THE UNIQUE LINE' }, { version: contentVersion(OLD) }),
  },
];

function resetLocal(root: string, c: LocalCase): void {
  rmSync(join(root, 'new'), { recursive: true, force: true });
  const path = join(root, c.file);
  if (c.old === undefined) rmSync(path, { force: true });
  else {
    writeFileSync(path, c.old);
    chmodSync(path, MODE);
  }
}

function recordOutcome(now: Buffer | undefined, c: { old: Buffer | undefined; new: Buffer }, error: unknown, where: string): void {
  const failed = error !== undefined;
  const old = same(now, c.old);
  const fresh = same(now, c.new);
  if (!old && !fresh) {
    tally.tornFiles++;
    throw new Error(`${where}: the target holds neither the old nor the new bytes (${now?.length ?? 'absent'})`);
  }
  if (!failed && !fresh) {
    tally.tornFiles++;
    throw new Error(`${where}: reported success but the target holds the old bytes`);
  }
  if (fresh) tally.faultsNewContent++;
  else tally.faultsOldContent++;
  if (failed && fresh) {
    // Once published, only a failed flush of the directory is reported, and it says the content is in place.
    tally.faultsReportedAfterPublish++;
    expect(String((error as Error).message), `${where}: a failure after publication`).toMatch(/is in place, but its directory could not be flushed/);
  }
}

async function noLeftovers(f: FaultyIo, dir: string, where: string): Promise<void> {
  const temps = await findTemps(dir);
  tally.tempsLeft += temps.length;
  expect(temps, `${where}: temp files left`).toEqual([]);
  tally.leakedHandles += f.open.size;
  expect(f.open.size, `${where}: descriptors left open`).toBe(0);
}

export function describeFaults(): void {
  describe('fault injection: the N-th underlying filesystem call fails', () => {
    // The heavy mode also runs the portable anchoring (no /proc) and non-durable writes.
    const variants: { label: string; options: { anchoring?: 'inode'; durable?: boolean } }[] = HEAVY
      ? [{ label: '', options: {} }, { label: ' [inode anchoring]', options: { anchoring: 'inode' } }, { label: ' [not durable]', options: { durable: false } }]
      : [{ label: '', options: {} }];
    for (const [c, variant] of LOCAL_CASES.flatMap((c) => variants.map((v) => [c, v] as const))) {
      test(`local: ${c.name}${variant.label}`, async () => {
        const { dir, cleanup } = await tempDir('fault');
        try {
          const root = join(dir, 'root');
          mkdirSync(root);
          const f = new FaultyIo();
          const fs = createLocalFs({ root, io: f.io, ...variant.options });
          const path = join(root, c.file);
          resetLocal(root, c);
          const target = await fs.resolve(c.file);
          f.reset();
          await c.run(fs, target);
          const total = f.calls.length;
          expect(readOrUndefined(path)).toEqual(c.new);
          expect(total).toBeGreaterThan(5);
          let emptyDirs = 0;
          for (const errno of ERRNOS) {
            for (let n = 1; n <= total; n++) {
              if (!faultedAt(n, errno)) continue;
              resetLocal(root, c);
              f.arm(n, errno);
              let error: unknown;
              await settleWithin(c.run(fs, target), SETTLE_MS, `${c.name} with call ${n} failing`).catch((err: unknown) => (error = err));
              const failedCall = f.failed;
              f.reset();
              const where = `${c.name}, call ${n} of ${total} (${failedCall?.op ?? '?'}) fails with ${errno}`;
              tally.faults++;
              if (error !== undefined) checkError(error, errno, where);
              const now = readOrUndefined(path);
              recordOutcome(now, c, error, where);
              if (now !== undefined && c.old !== undefined) expect(statSync(path).mode & 0o777, `${where}: mode`).toBe(MODE);
              if (now === undefined && existsSync(join(root, 'new'))) emptyDirs++;
              await noLeftovers(f, dir, where);
              await nextSucceeds(fs, target, where);
              await noLeftovers(f, dir, `${where}, then the next write`);
            }
          }
          console.log(`fault injection, local ${c.name}${variant.label}: ${total} calls × ${ERRNO_LABEL}; parents left empty by a failed create: ${emptyDirs}`);
          // A failed write removes the directories it made.
          expect(emptyDirs, 'parent directories left behind by failed creates').toBe(0);
        } finally {
          await cleanup();
        }
      }, 300_000);
    }

    test('overlay commit to a local lower', async () => {
      const { dir, cleanup } = await tempDir('fault-commit');
      try {
        const root = join(dir, 'root');
        mkdirSync(root);
        const f = new FaultyIo();
        const lower = createLocalFs({ root, io: f.io });
        const A = bytes(`header\n${'alpha\nbeta\n'.repeat(30)}`);
        const A2 = bytes(`HEADER\n${'alpha\nbeta\n'.repeat(30)}`);
        const B = bytes('a new file\n');
        const C = bytes('to be removed\n');
        const files = { a: join(root, 'a.txt'), b: join(root, 'new/b.txt'), c: join(root, 'c.txt') };
        const reset = () => {
          rmSync(join(root, 'new'), { recursive: true, force: true });
          writeFileSync(files.a, A);
          chmodSync(files.a, MODE);
          writeFileSync(files.c, C);
        };
        const prepare = async (): Promise<OverlayFileSystem> => {
          reset();
          const overlay = await createOverlayFs({ lower });
          const a = await overlay.resolve('a.txt');
          await overlay.editText(a, { oldString: 'header', newString: 'HEADER' }, { version: (await overlay.readText(a)).version });
          await overlay.writeText(await overlay.resolve('new/b.txt'), B.toString(), { kind: 'createIfAbsent' });
          await overlay.remove(await overlay.resolve('c.txt'));
          return overlay;
        };
        const lowerState = () => ({ a: readOrUndefined(files.a), b: readOrUndefined(files.b), c: readOrUndefined(files.c) });
        const isNew = { a: (x?: Buffer) => same(x, A2), b: (x?: Buffer) => same(x, B), c: (x?: Buffer) => x === undefined };
        const isOld = { a: (x?: Buffer) => same(x, A), b: (x?: Buffer) => x === undefined, c: (x?: Buffer) => same(x, C) };

        let overlay = await prepare();
        f.reset();
        const first = await overlay.commit();
        const total = f.calls.length;
        expect(first.committed).toHaveLength(3);
        expect(lowerState()).toEqual({ a: A2, b: B, c: undefined });

        for (const errno of ERRNOS) {
          for (let n = 1; n <= total; n++) {
            if (!faultedAt(n, errno)) continue;
            overlay = await prepare();
            f.arm(n, errno);
            let error: unknown;
            const result = await settleWithin(overlay.commit(), SETTLE_MS, `commit with call ${n} failing`).catch((err: unknown) => {
              error = err;
              return undefined;
            });
            const failedCall = f.failed;
            f.reset();
            const where = `overlay commit, call ${n} of ${total} (${failedCall?.op ?? '?'}) fails with ${errno}`;
            tally.faults++;
            if (error !== undefined) checkError(error, errno, where);
            const now = lowerState();
            const keyOf = (p: string) => (p.endsWith('/a.txt') ? 'a' : p.endsWith('/b.txt') ? 'b' : 'c');
            const failedKeys = new Set((result?.failed ?? []).map((x) => keyOf(x.path)));
            for (const k of ['a', 'b', 'c'] as const) {
              const fresh = isNew[k](now[k]);
              if (!fresh && !isOld[k](now[k])) {
                tally.tornFiles++;
                throw new Error(`${where}: ${k} holds neither its old nor its new state`);
              }
              if (fresh) tally.faultsNewContent++;
              else tally.faultsOldContent++;
              if (fresh && failedKeys.has(k)) tally.faultsReportedAfterPublish++;
            }
            if (result !== undefined) {
              expect(result.conflicts, where).toEqual([]);
              for (const problem of result.failed) {
                expect(FS_ERROR_CODES, `${where}: ${problem.message}`).toContain(problem.code);
                expect(problem.code, `${where}: ${problem.message}`).toBe(EXPECTED[errno]);
                expect(problem.message, where).toContain(errno);
              }
              for (const p of result.committed) expect(isNew[keyOf(p)](now[keyOf(p)]), `${where}: ${p} reported committed`).toBe(true);
            }
            // Nothing is lost: the view is unchanged and what did not reach the lower is still a change.
            const view = await overlay.readBytes(await overlay.resolve('a.txt'), { maxBytes: 1 << 20 });
            expect(same(view.bytes, A2), `${where}: the view of a.txt`).toBe(true);
            expect(same((await overlay.readBytes(await overlay.resolve('new/b.txt'), { maxBytes: 1 << 20 })).bytes, B)).toBe(true);
            expect(await overlay.stat(await overlay.resolve('c.txt'))).toBeUndefined();
            const pending = (await overlay.changes()).map((ch) => ch.path);
            for (const p of result?.committed ?? []) expect(pending, `${where}: committed ${p} is still a change`).not.toContain(p);
            for (const p of result?.failed.map((x) => x.path) ?? []) expect(pending, `${where}: failed ${p} was dropped`).toContain(p);
            await noLeftovers(f, dir, where);
            // A second commit, with nothing failing, finishes the job: no lock held, nothing lost.
            const retry = await settleWithin(overlay.commit(), SETTLE_MS, `${where}: the retried commit`).catch((err: unknown) => {
              tally.locksHeld++;
              throw err;
            });
            tally.commitsRetried++;
            expect(retry.conflicts, where).toEqual([]);
            expect(retry.failed, where).toEqual([]);
            expect(lowerState(), `${where}: after the retried commit`).toEqual({ a: A2, b: B, c: undefined });
            expect(await overlay.changes()).toEqual([]);
            await noLeftovers(f, dir, `${where}, then the retried commit`);
          }
        }
        console.log(`fault injection, overlay commit: ${total} calls × ${ERRNO_LABEL}`);
      } finally {
        await cleanup();
      }
    }, 300_000);

    test('overlay write with its upper layer kept on a local disk', async () => {
      const { dir, cleanup } = await tempDir('fault-upper');
      try {
        const upperRoot = join(dir, 'upper');
        mkdirSync(upperRoot);
        const f = new FaultyIo();
        const upper = createLocalFs({ root: upperRoot, io: f.io });
        const lower = createMemoryFs({ files: { '/w/a.txt': 'lower\n' }, cwd: '/w' });
        const OLD_VIEW = 'first change\n';
        const NEW_VIEW = 'second change\n';
        const prepare = async () => {
          rmSync(upperRoot, { recursive: true, force: true });
          mkdirSync(upperRoot);
          const overlay = await createOverlayFs({ lower, upper, cwd: '/w' });
          await overlay.writeText(await overlay.resolve('a.txt'), OLD_VIEW);
          return overlay;
        };
        let overlay = await prepare();
        const target = await overlay.resolve('a.txt');
        f.reset();
        await overlay.writeText(target, NEW_VIEW);
        const total = f.calls.length;
        expect(total).toBeGreaterThan(5);
        for (const errno of ERRNOS) {
          for (let n = 1; n <= total; n++) {
            if (!faultedAt(n, errno)) continue;
            overlay = await prepare();
            f.arm(n, errno);
            let error: unknown;
            await settleWithin(overlay.writeText(target, NEW_VIEW), SETTLE_MS, `overlay write with call ${n} failing`).catch((err: unknown) => (error = err));
            const failedCall = f.failed;
            f.reset();
            const where = `overlay write to a disk upper, call ${n} of ${total} (${failedCall?.op ?? '?'}) fails with ${errno}`;
            tally.faults++;
            if (error !== undefined) checkError(error, errno, where);
            const view = (await overlay.readText(target)).text;
            // A reopened overlay shows what the live one shows, even when the failure came after the
            // state document was renamed into place (flushing its directory): the save landed.
            const reopened = (await (await createOverlayFs({ lower, upper, cwd: '/w' })).readText(target)).text;
            const torn = (view !== OLD_VIEW && view !== NEW_VIEW) || (error === undefined && view !== NEW_VIEW);
            if (view !== reopened) tally.overlaySavedButFailed++;
            if (torn || view !== reopened) {
              tally.tornFiles++;
              throw new Error(`${where}: view ${JSON.stringify(view)}, reopened ${JSON.stringify(reopened)}, error ${String(error)}`);
            }
            if (error !== undefined && view === NEW_VIEW) {
              expect(String((error as Error).message), where).toMatch(/is in place, but its directory could not be flushed/);
            }
            if (view === NEW_VIEW) tally.faultsNewContent++;
            else tally.faultsOldContent++;
            if (error !== undefined && view === NEW_VIEW) tally.faultsReportedAfterPublish++;
            await noLeftovers(f, dir, where);
            await settleWithin(overlay.writeText(target, 'after\n'), SETTLE_MS, `${where}: the next write`).catch((err: unknown) => {
              tally.locksHeld++;
              throw err;
            });
            expect((await (await createOverlayFs({ lower, upper, cwd: '/w' })).readText(target)).text).toBe('after\n');
          }
        }
        console.log(`fault injection, overlay write to a disk upper: ${total} calls × ${ERRNO_LABEL}`);
      } finally {
        await cleanup();
      }
    }, 300_000);
  });
}
