import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs, type OverlayRecovery } from '../../src/backends/overlay/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { REPO, buildForChildren, type Build } from '../local/helpers.js';

/**
 * J1: a child commits 50 files (half new, half replacing old ones) and kills itself with SIGKILL
 * just before its k-th step on the lower (each mutating open, write, fsync, link, rename, unlink,
 * mkdir, rmdir, the journal's own included). The next open finds the whole commit or none of it,
 * no temp file, and the sandbox agrees with the folder. Every step at full scale; a spread of
 * steps otherwise.
 */

const FILES = 50;
const rel = (i: number) => `pkg${i % 4}/${i % 8 < 4 ? '' : 'deep/'}f${i}.txt`;
const oldText = (i: number) => `old ${i}\n`;
const newText = (i: number) => `new ${i}\n`;
const existing = (i: number) => i % 2 === 0;
const FULL = process.env.DSH_FS_SCALE !== undefined && process.env.DSH_FS_SCALE !== 'quick';
/** DSH_FS_CRASH_STRIDE=n: every n-th step only (a shorter soak than every step). */
const STRIDE = Number(process.env.DSH_FS_CRASH_STRIDE ?? 0);

async function seed(root: string): Promise<void> {
  for (let p = 0; p < 4; p++) await mkdir(join(root, `pkg${p}`), { recursive: true });
  for (let i = 0; i < FILES; i += 2) {
    await mkdir(join(root, rel(i), '..'), { recursive: true });
    await writeFile(join(root, rel(i)), oldText(i));
  }
  // A removal in the same commit.
  await writeFile(join(root, 'gone.txt'), 'gone\n');
}

async function contentOf(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** Every name under `dir`, recursively (nothing hidden). */
async function allNames(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    out.push(e.name);
    if (e.isDirectory()) out.push(...(await allNames(join(dir, e.name))));
  }
  return out;
}

describe('journaled commit, killed at each step', () => {
  let dir: string;
  let build: Build;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-commit-journal-'));
    build = buildForChildren(['src/backends/overlay/index.ts', 'src/backends/local/index.ts']);
  }, 180_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The child: stages the changes (in `state`, or in memory), then commits, dying at step `killAt` (0: never). */
  const script = (root: string, state: string | undefined, killAt: number) => `
    const fsp = await import('node:fs/promises');
    const { createLocalFs } = await import(${JSON.stringify(build.url('src/backends/local/index.ts'))});
    const { createOverlayFs } = await import(${JSON.stringify(build.url('src/backends/overlay/index.ts'))});
    let armed = false;
    let steps = 0;
    const step = () => { if (armed && ++steps === ${killAt}) process.kill(process.pid, 'SIGKILL'); };
    const counted = (name) => async (...args) => (step(), fsp[name](...args));
    const handleOf = (h) => new Proxy(h, {
      get(t, p) {
        const v = Reflect.get(t, p);
        if (typeof v !== 'function') return v;
        return ['write', 'writeFile', 'writev', 'sync', 'datasync', 'truncate'].includes(p) ? (...a) => (step(), v.apply(t, a)) : v.bind(t);
      },
    });
    const io = {
      ...fsp,
      open: async (path, flags, mode) => {
        const writing = typeof flags === 'number' ? (flags & 3) !== 0 : /[wa+]/.test(flags ?? 'r');
        if (writing) step();
        return handleOf(await fsp.open(path, flags, mode));
      },
      link: counted('link'), rename: counted('rename'), unlink: counted('unlink'), mkdir: counted('mkdir'), rmdir: counted('rmdir'),
    };
    const fs = await createOverlayFs({ lower: createLocalFs({ root: ${JSON.stringify(root)}, io })${state === undefined ? '' : `, stateDir: ${JSON.stringify(state)}`} });
    for (let i = 0; i < ${FILES}; i++) {
      const path = ${JSON.stringify(root)} + '/pkg' + (i % 4) + '/' + (i % 8 < 4 ? '' : 'deep/') + 'f' + i + '.txt';
      await fs.writeText(await fs.resolve(path), 'new ' + i + '\\n');
    }
    await fs.remove(await fs.resolve(${JSON.stringify(join(root, 'gone.txt'))}));
    armed = true;
    const result = await fs.commit();
    armed = false;
    process.stdout.write(JSON.stringify({ steps, committed: result.committed.length }) + '\\n');
  `;

  function runChild(root: string, state: string | undefined, killAt: number): Promise<{ out: string; err: string; signal: NodeJS.Signals | null }> {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script(root, state, killAt)], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    return new Promise((resolve) =>
      child.on('close', (_code, signal) => {
        clearTimeout(guard);
        resolve({ out, err, signal });
      }),
    );
  }

  /** The kill points: every step (or every STRIDE-th), or in the journal, the middle and the end. */
  function killPoints(total: number): number[] {
    if (FULL || STRIDE > 0) return Array.from({ length: total }, (_, k) => k + 1).filter((k) => STRIDE <= 1 || k % STRIDE === 1);
    return [2, Math.round(total / 2), total - 3];
  }

  async function check(root: string, state: string | undefined, label: string, recovered: OverlayRecovery[]): Promise<'old' | 'new'> {
    const now = await Promise.all(Array.from({ length: FILES }, (_, i) => contentOf(join(root, rel(i)))));
    const gone = await contentOf(join(root, 'gone.txt'));
    const allNew = now.every((t, i) => t === newText(i)) && gone === undefined;
    const allOld = now.every((t, i) => t === (existing(i) ? oldText(i) : undefined)) && gone === 'gone\n';
    expect(allNew || allOld, `${label}: a part of the commit: ${JSON.stringify(now)} gone=${JSON.stringify(gone)}`).toBe(true);
    // The journal's directory and every temp file are gone.
    expect((await allNames(root)).filter((n) => n.includes('.dsh-tmp')), `${label}: left behind`).toEqual([]);
    expect(recovered.length, `${label}: said once`).toBeLessThanOrEqual(1);
    if (state !== undefined) {
      // The sandbox agrees with the folder: it shows every new file, and holds a change exactly where the folder is old.
      const reopened = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: state });
      expect(reopened.recovered, `${label}: said only once`).toEqual([]);
      const pending = (await reopened.changes()).length;
      expect(pending, `${label}: changes left in the sandbox`).toBe(allNew ? 0 : FILES + 1);
      for (let i = 0; i < FILES; i += 7) expect((await reopened.readText(await reopened.resolve(join(root, rel(i))))).text).toBe(newText(i));
    }
    return allNew ? 'new' : 'old';
  }

  async function trial(name: string, persisted: boolean): Promise<void> {
    const area = join(dir, name);
    const dry = join(area, 'dry');
    await seed(join(dry, 'root'));
    const first = await runChild(join(dry, 'root'), persisted ? join(dry, 'state') : undefined, 0);
    expect(first.err).toBe('');
    const { steps, committed } = JSON.parse(first.out) as { steps: number; committed: number };
    expect(committed).toBe(FILES + 1);
    const seen = { old: 0, new: 0 };
    for (const k of killPoints(steps)) {
      const root = join(area, `k${k}/root`);
      const state = persisted ? join(area, `k${k}/state`) : undefined;
      await seed(root);
      const run = await runChild(root, state, k);
      // The number of steps varies a little from run to run (the order of the flush's directories): a
      // child that ran out of steps first finished its commit, and is checked the same way.
      if (run.signal !== 'SIGKILL') expect(k > steps - 10 && run.out.includes('"committed":51'), `step ${k} of ${steps}: ${run.out}${run.err}`).toBe(true);
      const recovered: OverlayRecovery[] = [];
      // The next open: the same sandbox, or (its upper died with it) a new one over the folder.
      await createOverlayFs({ lower: createLocalFs({ root }), ...(state === undefined ? {} : { stateDir: state }), onRecovered: (r) => recovered.push(r) });
      seen[await check(root, state, `${name}, killed at step ${k} of ${steps}`, recovered)]++;
      if (persisted) expect(recovered.every((r) => r.action === 'finished' || r.kind === 'operation')).toBe(true);
      else expect(recovered.every((r) => r.action === 'rolledBack')).toBe(true);
      await rm(join(area, `k${k}`), { recursive: true, force: true });
    }
    // A sandbox kept on disk is finished from its journal on; one in memory is undone until the journal ends.
    expect(persisted ? seen.new : seen.old).toBeGreaterThan(0);
    console.log(`journaled commit (${name}): ${steps} steps, ${killPoints(steps).length} kill points: ${seen.new} finished, ${seen.old} none of it`);
  }

  it('a sandbox kept in a state directory: the next open finishes the commit (or, killed before its journal, leaves it all to do)', async () => {
    await trial('persisted', true);
  }, 1_800_000);

  it('the command line says once, on stderr, that it finished the commit', async () => {
    const root = join(dir, 'cli/root');
    const state = join(dir, 'cli/state');
    await seed(root);
    // Past the journal (its record is written within the first steps), before the last file.
    const run = await runChild(root, state, 120);
    expect(run.signal).toBe('SIGKILL');
    const status = async () => {
      let err = '';
      let out = '';
      const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (t: string) => (sink(t), true) }) as unknown as Io['stdout'];
      const code = await main(['status', '--root', root, '--state', state], { stdout: stream((t) => (out += t)), stderr: stream((t) => (err += t)), env: {}, cwd: REPO });
      return { code, out, err };
    };
    const first = await status();
    expect(first.code).toBe(0);
    expect(first.err).toMatch(/^dsh-fs: finished the commit that process \d+, which was stopped, had left unfinished: \d+ more paths committed \(in .+\)\n$/);
    expect(first.out).toBe('No changes.\n');
    for (let i = 0; i < FILES; i++) expect(await contentOf(join(root, rel(i)))).toBe(newText(i));
    expect(await status()).toEqual({ code: 0, out: 'No changes.\n', err: '' });
  }, 120_000);

  it('a sandbox kept in memory: the next open of the folder rolls the commit back', async () => {
    await trial('memory', false);
  }, 1_800_000);
});
