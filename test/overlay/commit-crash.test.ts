import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { FsError, type FileSystem } from '../../src/seam/index.js';
import { REPO, buildForChildren, type Build } from '../local/helpers.js';
import { RUNS } from './helpers.js';

/**
 * A durable commit publishes its files with deferred durability and flushes each directory once
 * (F1). Whatever point it is stopped at, every file of the lower is its old content or its new
 * one, and the sandbox still holds every change that is not in the lower, so nothing is lost.
 */

const FILES = 12;
const rel = (i: number) => `pkg${i % 3}/f${i}.txt`;
const oldText = (i: number) => `old ${i}\n`;
const newText = (i: number) => `new ${i}\n`;
/** Even files exist in the lower (modified by the sandbox), odd ones are new. */
const existing = (i: number) => i % 2 === 0;

async function seed(root: string): Promise<void> {
  for (let p = 0; p < 3; p++) await mkdir(join(root, `pkg${p}`), { recursive: true });
  for (let i = 0; i < FILES; i += 2) await writeFile(join(root, rel(i)), oldText(i));
}

async function contentOf(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** Every lower file is old or new, and what is not new there the sandbox still holds. */
async function checkOldOrNew(root: string, sandbox: FileSystem & { changes(): Promise<{ path: string }[]> }, label: string) {
  const pending = new Set((await sandbox.changes()).map((c) => c.path));
  for (let i = 0; i < FILES; i++) {
    const path = join(root, rel(i));
    const now = await contentOf(path);
    const old = existing(i) ? oldText(i) : undefined;
    expect([old, newText(i)], `${label}: ${rel(i)} holds ${JSON.stringify(now)}`).toContain(now);
    if (now !== newText(i)) expect(pending.has(path), `${label}: ${rel(i)} is neither in the lower nor in the sandbox`).toBe(true);
    expect((await sandbox.readText(await sandbox.resolve(path))).text, `${label}: the view of ${rel(i)}`).toBe(newText(i));
  }
}

/** The lower, failing its n-th mutating call (writeBytes, remove, flush) with FS_IO_ERROR. */
function failingAt(lower: FileSystem, n: number): FileSystem {
  let calls = 0;
  const maybeFail = (what: string) => {
    if (++calls === n) throw new FsError('FS_IO_ERROR', `injected: ${what} failed`);
  };
  return {
    ...lower,
    writeBytes: async (t, b, i, o) => (maybeFail('write'), lower.writeBytes(t, b, i, o)),
    remove: async (t, i, o) => (maybeFail('remove'), lower.remove(t, i, o)),
    flush: async (d, o) => (maybeFail('flush'), lower.flush!(d, o)),
  };
}

describe('durable commit, interrupted', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-commit-crash-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a failure at any write or flush leaves every file old or new, the rest in the sandbox, and a retry finishes', async () => {
    let trial = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: FILES + 2 }), async (n) => {
        const root = join(dir, `t${trial++}`);
        await seed(root);
        const local = createLocalFs({ root });
        const sandbox = await createOverlayFs({ lower: failingAt(local, n) });
        for (let i = 0; i < FILES; i++) await sandbox.writeText(await sandbox.resolve(join(root, rel(i))), newText(i));
        const result = await sandbox.commit();
        // Only the injected failure: one file, or (at the flush) every file of the batch.
        expect(result.conflicts).toEqual([]);
        expect(result.failed.length).toBe(n <= FILES ? 1 : n === FILES + 1 ? FILES : 0);
        for (const f of result.failed) expect(f.code).toBe('FS_IO_ERROR');
        // A failed flush: the files are in the lower but perhaps not durable, so the sandbox keeps them all.
        if (n === FILES + 1) expect((await sandbox.changes()).length).toBe(FILES);
        await checkOldOrNew(root, sandbox, `failure at call ${n}`);
        const again = await sandbox.commit();
        expect(again.failed).toEqual([]);
        expect(await sandbox.changes()).toEqual([]);
        for (let i = 0; i < FILES; i++) expect(await contentOf(join(root, rel(i)))).toBe(newText(i));
      }),
      { numRuns: Math.max(10, RUNS / 2) },
    );
  });

  it('an abort in the middle of the batch still flushes what was published and leaves the rest in the sandbox', async () => {
    const root = join(dir, 'abort');
    await seed(root);
    const sandbox = await createOverlayFs({ lower: createLocalFs({ root }) });
    for (let i = 0; i < FILES; i++) await sandbox.writeText(await sandbox.resolve(join(root, rel(i))), newText(i));
    const stop = new AbortController();
    const seen: string[] = [];
    const result = await sandbox
      .commit(undefined, {
        signal: stop.signal,
        onProgress: ({ path, index }) => {
          seen.push(path);
          if (index === 3) stop.abort();
        },
      })
      .catch((err: unknown) => err);
    expect((result as FsError).code).toBe('FS_ABORTED');
    await checkOldOrNew(root, sandbox, 'abort');
    // What progress reported as committed is in the lower and no longer a change.
    const pending = new Set((await sandbox.changes()).map((c) => c.path));
    for (const path of seen) expect(pending.has(path)).toBe(false);
  });
});

/**
 * A child commits a persisted sandbox (stateDir) over a durable local lower and is killed with
 * SIGKILL at a random moment. Reopened, the sandbox shows every new file, and each lower file is
 * old or new.
 */
describe('durable commit, killed', () => {
  const TRIALS = Number(process.env.DSH_FS_CRASH_TRIALS ?? 6);
  const KILL_FILES = 150;
  let dir: string;
  let build: Build;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-commit-kill-'));
    build = buildForChildren(['src/backends/overlay/index.ts', 'src/backends/local/index.ts']);
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const script = (root: string, state: string) => `
    const { createLocalFs } = await import(${JSON.stringify(build.url('src/backends/local/index.ts'))});
    const { createOverlayFs } = await import(${JSON.stringify(build.url('src/backends/overlay/index.ts'))});
    const fs = await createOverlayFs({ lower: createLocalFs({ root: ${JSON.stringify(root)} }), stateDir: ${JSON.stringify(state)} });
    await fs.commit(undefined, { onProgress: ({ index }) => { if (index === 1) process.stdout.write('started\\n'); } });
    process.stdout.write('done\\n');
  `;

  it(`SIGKILL during a commit of ${KILL_FILES} files, ${TRIALS} trials: each file old or new, nothing lost`, async () => {
    let finished = 0;
    let settled = 0;
    for (let t = 0; t < TRIALS; t++) {
      const root = join(dir, `t${t}/root`);
      const state = join(dir, `t${t}/state`);
      for (let p = 0; p < 3; p++) await mkdir(join(root, `pkg${p}`), { recursive: true });
      for (let i = 0; i < KILL_FILES; i += 2) await writeFile(join(root, rel(i)), oldText(i));
      const staging = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: state });
      for (let i = 0; i < KILL_FILES; i++) await staging.writeText(await staging.resolve(join(root, rel(i))), newText(i));

      const child = spawn(process.execPath, ['--input-type=module', '-e', script(root, state)], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const started = new Promise<void>((resolve) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('started')) resolve();
        });
        child.on('close', () => resolve());
      });
      const exit = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_c, s) => resolve(s)));
      const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await started;
      // From the first published file on, at a random point of the rest (publishing, the flush,
      // the upper letting go); a trial that finishes first is counted and checked the same way.
      setTimeout(() => child.kill('SIGKILL'), Math.floor(Math.random() * 1500));
      await exit;
      clearTimeout(guard);
      expect(err).toBe('');
      if (out.includes('done')) finished++;

      const reopened = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: state });
      const pending = new Set((await reopened.changes()).map((c) => c.path));
      if (pending.size < KILL_FILES) settled++;
      for (let i = 0; i < KILL_FILES; i++) {
        const path = join(root, rel(i));
        const now = await contentOf(path);
        expect([existing(i) ? oldText(i) : undefined, newText(i)], `trial ${t}: ${rel(i)} holds ${JSON.stringify(now)}`).toContain(now);
        if (now !== newText(i)) expect(pending.has(path), `trial ${t}: ${rel(i)} was lost`).toBe(true);
        expect((await reopened.readText(await reopened.resolve(path))).text).toBe(newText(i));
      }
      // And the commit can be finished.
      const again = await reopened.commit();
      expect(again.failed).toEqual([]);
      for (let i = 0; i < KILL_FILES; i++) expect(await contentOf(join(root, rel(i)))).toBe(newText(i));
    }
    console.log(`commit kill: ${TRIALS} trials, ${finished} finished before the kill, ${settled} had let go of files in the upper`);
  }, 300_000);
});
