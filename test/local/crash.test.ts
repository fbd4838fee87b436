import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { TEMP_NAME_PATTERN, createLocalProvider } from '../../src/backends/local/index.js';
import { buildForChildren, makeArea, REPO, type Area, type Build } from './helpers.js';

/**
 * Crash consistency: a child process keeps replacing a large file through the provider and is
 * killed with SIGKILL at a random moment. Afterwards the file holds exactly the old or the new
 * content (never a mix, never empty), keeps its mode, and anything left behind is a temp file of
 * the documented pattern, which sweepTemps then removes.
 */

const TRIALS = Number(process.env.DSH_FS_CRASH_TRIALS ?? 50);
const SIZE = 1024 * 1024;

let area: Area;
let build: Build;

beforeAll(async () => {
  area = await makeArea('crash');
  build = buildForChildren();
}, 120_000);

afterAll(async () => {
  await area.cleanup();
});

const content = (tag: string) => {
  const body = Buffer.alloc(SIZE, tag.charCodeAt(0));
  body.write(`version ${tag}\n`, 0);
  return body;
};

/** Starts up (import, resolve) and waits for a line on stdin before it begins writing. */
const writerScript = (url: string, root: string, rel: string, durable: boolean) => `
  const { createLocalFs } = await import(${JSON.stringify(url)});
  const fs = createLocalFs({ root: ${JSON.stringify(root)}, durable: ${durable} });
  const t = await fs.resolve(${JSON.stringify(rel)});
  const make = (tag) => { const b = Buffer.alloc(${SIZE}, tag.charCodeAt(0)); b.write('version ' + tag + '\\n', 0); return b; };
  const a = make('A'), b = make('B');
  process.stdin.once('data', async () => {
    process.stdout.write('ready\\n');
    for (let i = 0; ; i++) {
      await fs.writeBytes(t, i % 2 ? a : b);
      process.stdout.write('w\\n');
    }
  });
  process.stdout.write('warm\\n');
`;

interface Writer {
  readonly child: ChildProcess;
  readonly warm: Promise<void>;
  readonly ready: Promise<void>;
  /** Resolves once the child reported `n` completed writes (or exited). */
  writes(n: number): Promise<void>;
  readonly exit: Promise<{ signal: NodeJS.Signals | null; stderr: string }>;
}

function startWriter(script: string): Writer {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let out = '';
  let onWarm!: () => void;
  let onReady!: () => void;
  let done = 0;
  let exited = false;
  const waiters: { n: number; resolve: () => void }[] = [];
  const wake = () => {
    for (const w of waiters.splice(0)) {
      if (exited || done >= w.n) w.resolve();
      else waiters.push(w);
    }
  };
  const warm = new Promise<void>((r) => (onWarm = r));
  const ready = new Promise<void>((r) => (onReady = r));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('warm')) onWarm();
    if (out.includes('ready')) onReady();
    done = out.split('w\n').length - 1;
    wake();
  });
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exit = new Promise<{ signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on('close', (_code, signal) => {
      clearTimeout(guard);
      exited = true;
      onWarm();
      onReady();
      wake();
      resolve({ signal, stderr });
    });
  });
  const writes = (n: number) =>
    new Promise<void>((resolve) => {
      waiters.push({ n, resolve });
      wake();
    });
  return { child, warm, ready, writes, exit };
}

test(`SIGKILL at random moments, ${TRIALS} trials: the target is always exactly old or new`, async () => {
  const a = content('A');
  const b = content('B');
  const seen = { A: 0, B: 0 };
  let tempsLeft = 0;
  let next = 0;
  // Two writers at once, each on its own file (one durable, one not); the next process starts up
  // while the current one runs, since start-up dominates a trial.
  const slot = async (n: number) => {
    const dir = join(area.root, `data-${n}`);
    const target = join(dir, 'big.bin');
    await fsp.mkdir(dir);
    await fsp.writeFile(target, a);
    await fsp.chmod(target, 0o640);
    const script = writerScript(build.localUrl, area.root, `data-${n}/big.bin`, n === 0);
    let temps = 0;
    let cycleMs = 50;
    let warm = startWriter(script);
    try {
      while (next < TRIALS) {
        const trial = next++;
        const current = warm;
        await current.warm;
        warm = startWriter(script);
        current.child.stdin!.write('go\n');
        await current.ready;
        // Let 0–2 writes complete, then kill at a random point of the next one: the kills spread
        // over every phase of a write (read, temp, fsync, rename) whatever the machine's speed.
        const started = Date.now();
        const completed = Math.floor(Math.random() * 3);
        await current.writes(completed);
        if (completed > 0) cycleMs = (cycleMs + (Date.now() - started) / completed) / 2;
        const delay = Math.floor(Math.random() * cycleMs * 1.2);
        setTimeout(() => current.child.kill('SIGKILL'), delay);
        const { signal, stderr } = await current.exit;
        expect(signal, `trial ${trial}: the writer ended by itself: ${stderr}`).toBe('SIGKILL');
        const now = await fsp.readFile(target);
        const which = now.equals(a) ? 'A' : now.equals(b) ? 'B' : undefined;
        expect(which, `trial ${trial} (killed ${delay} ms in): the target is neither old nor new content (${now.length} bytes)`).toBeDefined();
        seen[which!]++;
        expect((await fsp.stat(target)).mode & 0o7777).toBe(0o640);
        const others = (await fsp.readdir(dir)).filter((name) => name !== 'big.bin');
        for (const name of others) expect(name, `trial ${trial}: an unexpected file was left`).toMatch(TEMP_NAME_PATTERN);
        tempsLeft += others.length - temps;
        temps = others.length;
      }
    } finally {
      warm.child.kill('SIGKILL');
      await warm.exit;
    }
  };
  await Promise.all([0, 1].map(slot));
  expect((await fsp.readdir(area.root)).sort()).toEqual(['data-0', 'data-1']);
  const swept = await createLocalProvider({ root: area.root }).sweepTemps({ olderThanMs: 0 });
  expect(swept).toHaveLength(tempsLeft);
  for (const n of [0, 1]) expect(await fsp.readdir(join(area.root, `data-${n}`))).toEqual(['big.bin']);
  console.log(
    `crash: ${TRIALS} trials; the target held the old/new content A ${seen.A}×, B ${seen.B}×; ` +
      `temp files left by killed writers: ${tempsLeft}, all matching the pattern and swept`,
  );
  expect(seen.A + seen.B).toBe(TRIALS);
}, 180_000);
