import { createHash } from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import { constants, existsSync, mkdirSync, promises as fsp, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A fresh temp area: `<area>/root` (the provider's root), `<area>/root-evil` and `<area>/outside`. */
export interface Area {
  readonly area: string;
  readonly root: string;
  readonly evil: string;
  readonly outside: string;
  cleanup(): Promise<void>;
}

export async function makeArea(label = 'local'): Promise<Area> {
  const area = await fsp.realpath(await fsp.mkdtemp(join(tmpdir(), `dsh-fs-${label}-`)));
  const root = join(area, 'root');
  const evil = join(area, 'root-evil');
  const outside = join(area, 'outside');
  for (const d of [root, evil, outside]) await fsp.mkdir(d);
  return { area, root, evil, outside, cleanup: () => fsp.rm(area, { recursive: true, force: true }) };
}

/** Old enough that any read under `relatime` moves it (atime older than 24 h). */
const OLD_ATIME = new Date('2001-01-01T00:00:00Z');

/**
 * Sets every atime under `dir` to a date long past, so a later read of any file there shows up
 * in `treeDigest` (on a mount without noatime).
 */
export async function ageAtimes(dir: string, exclude?: string): Promise<void> {
  for (const p of await walk(dir, exclude)) {
    const st = await fsp.lstat(p);
    if (st.isSymbolicLink()) continue;
    await fsp.utimes(p, OLD_ATIME, st.mtime);
  }
}

async function walk(dir: string, exclude?: string): Promise<string[]> {
  const out: string[] = [dir];
  for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (p === exclude) continue;
    if (e.isDirectory()) out.push(...(await walk(p, exclude)));
    else out.push(p);
  }
  return out;
}

/**
 * Everything observable about a tree: names, types, modes, link counts, owners, link texts,
 * contents, mtime and ctime, and (with `atime`) the atime of files, so that a read shows up once
 * `ageAtimes` ran. Directory atimes are left out: walking the tree itself moves them.
 */
export async function treeDigest(dir: string, options: { atime?: boolean; exclude?: string } = {}): Promise<string> {
  const lines: string[] = [];
  for (const p of (await walk(dir, options.exclude)).sort()) {
    const st = await fsp.lstat(p, { bigint: true });
    const rel = posix.relative(dir, p) || '.';
    let body = '';
    if (st.isSymbolicLink()) body = `-> ${await fsp.readlink(p)}`;
    else if (st.isFile()) body = createHash('sha256').update(await readNoAtime(p)).digest('hex');
    const atime = options.atime !== false && st.isFile() ? `a${st.atimeNs} ` : '';
    const times = st.isSymbolicLink() ? '' : `${atime}m${st.mtimeNs} c${st.ctimeNs}`;
    lines.push(`${rel} ${st.mode.toString(8)} n${st.nlink} u${st.uid}:${st.gid} s${st.size} ${times} ${body}`);
  }
  return lines.join('\n');
}

/** Reads without moving the atime (O_NOATIME), so the digest does not disturb read detection. */
async function readNoAtime(p: string): Promise<Buffer> {
  const handle = await fsp.open(p, constants.O_RDONLY | (constants.O_NOATIME ?? 0));
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Whether reading a file moves its atime here (false on noatime mounts). */
export async function atimeDetectsReads(dir: string): Promise<boolean> {
  const probe = join(dir, '.atime-probe');
  await fsp.writeFile(probe, 'x');
  await fsp.utimes(probe, OLD_ATIME, new Date());
  const before = (await fsp.stat(probe, { bigint: true })).atimeNs;
  await fsp.readFile(probe);
  const after = (await fsp.stat(probe, { bigint: true })).atimeNs;
  await fsp.rm(probe);
  return after !== before;
}

/** Every temp file of the provider's naming pattern under `dir`. */
export async function findTemps(dir: string): Promise<string[]> {
  return (await walk(dir)).filter((p) => /\.[0-9a-f]{32}\.dsh-tmp$/.test(p));
}

/**
 * Writes bytes in place, as an editor or another process would. With keepMtime, atime and mtime
 * are restored with nanosecond precision (GNU touch), else with what fs.utimes offers.
 */
export async function writeOutOfBand(path: string, bytes: Uint8Array, keepMtime = false): Promise<void> {
  await fsp.mkdir(dirname(path), { recursive: true });
  const before = keepMtime ? await fsp.stat(path, { bigint: true }).catch(() => undefined) : undefined;
  await fsp.writeFile(path, bytes);
  if (before === undefined) return;
  if (!setTimesNs(path, before.atimeNs, before.mtimeNs)) await fsp.utimes(path, before.atime, before.mtime);
}

let touchWorks: boolean | undefined;

function setTimesNs(path: string, atimeNs: bigint, mtimeNs: bigint): boolean {
  if (touchWorks === false) return false;
  const stamp = (ns: bigint) => `@${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;
  try {
    execFileSync('touch', ['-a', '-d', stamp(atimeNs), path], { stdio: 'ignore' });
    execFileSync('touch', ['-m', '-d', stamp(mtimeNs), path], { stdio: 'ignore' });
    touchWorks = true;
    return true;
  } catch {
    touchWorks = false;
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Child processes: Node 20 cannot import TypeScript, so the provider is compiled into the repo's
// node_modules/.cache (bare imports still resolve from the repo).
// ---------------------------------------------------------------------------------------------

export interface Build {
  /** file URL of the compiled `src/backends/local/index.js`. */
  readonly localUrl: string;
  /** file URL of the compiled module for a source path such as `src/tools/index.ts`. */
  url(source: string): string;
  readonly dir: string;
}

/**
 * Compiles the given entry points (and what they import) once per source state: the output
 * directory is named by a digest of the sources, so test files and runs share it, and a build
 * is published by an atomic rename so concurrent workers never see half of one. When the repo
 * is not reachable by other users (a clone in a 0700 directory) and we are root, the build and
 * node_modules are mirrored under the temp directory so a child running as another uid can load them.
 */
export function buildForChildren(entries: readonly string[] = ['src/backends/local/index.ts']): Build {
  const sources = listTs(join(REPO, 'src')).sort();
  const digest = createHash('sha256');
  for (const f of [...entries, ...sources, join(REPO, 'tsconfig.json'), join(REPO, 'tsconfig.build.json')]) {
    digest.update(f).update('\0').update(existsSync(f) ? readFileSync(f) : '').update('\0');
  }
  const id = digest.digest('hex').slice(0, 16);
  const cache = join(REPO, 'node_modules', '.cache', 'dsh-fs-test-build');
  let dir = join(cache, id);
  const compiled = (base: string, source: string) => join(base, 'out', source.replace(/^src\//, '').replace(/\.ts$/, '.js'));
  if (!entries.every((e) => existsSync(compiled(dir, e)))) {
    const work = `${dir}.${process.pid}.${Date.now()}.tmp`;
    mkdirSync(work, { recursive: true });
    const tsconfig = join(work, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        extends: join(REPO, 'tsconfig.build.json'),
        compilerOptions: { rootDir: join(REPO, 'src'), outDir: join(work, 'out'), declaration: false, sourceMap: false, noCheck: true },
        include: [],
        files: entries.map((e) => join(REPO, e)),
      }),
    );
    try {
      execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], { stdio: 'pipe' });
    } catch (err) {
      if (!entries.every((e) => existsSync(compiled(work, e)))) {
        const out = (err as { stdout?: Buffer }).stdout?.toString() ?? String(err);
        rmSync(work, { recursive: true, force: true });
        throw new Error(`could not compile ${entries.join(', ')} for child processes:\n${out}`);
      }
    }
    try {
      renameSync(work, dir);
    } catch {
      rmSync(work, { recursive: true, force: true }); // another worker published the same build
    }
    pruneBuilds(cache, dir);
  }
  if (process.getuid?.() === 0 && !reachableByOthers(dir)) dir = mirrorForOthers(dir, id);
  const url = (source: string) => pathToFileURL(compiled(dir, source)).href;
  return { localUrl: url('src/backends/local/index.ts'), url, dir };
}

/** Every ancestor directory lets other users pass through. */
function reachableByOthers(path: string): boolean {
  for (let p = path; ; p = dirname(p)) {
    if ((statSync(p).mode & 0o001) === 0) return false;
    if (p === dirname(p)) return true;
  }
}

/** A world-traversable copy of a build plus the repo's node_modules (hard links where possible). */
function mirrorForOthers(build: string, id: string): string {
  const mirror = join(tmpdir(), `dsh-fs-child-build-${id}`);
  if (existsSync(join(mirror, 'ready'))) return mirror;
  const work = `${mirror}.${process.pid}.${Date.now()}.tmp`;
  mkdirSync(work, { recursive: true, mode: 0o755 });
  execFileSync('cp', ['-r', join(build, 'out'), join(work, 'out')]);
  try {
    execFileSync('cp', ['-al', join(REPO, 'node_modules'), join(work, 'node_modules')], { stdio: 'pipe' });
  } catch {
    rmSync(join(work, 'node_modules'), { recursive: true, force: true });
    execFileSync('cp', ['-r', join(REPO, 'node_modules'), join(work, 'node_modules')]);
  }
  execFileSync('chmod', ['-R', 'o+rX', work]);
  writeFileSync(join(work, 'ready'), '');
  try {
    renameSync(work, mirror);
  } catch {
    rmSync(work, { recursive: true, force: true }); // another worker published the same mirror
  }
  return mirror;
}

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listTs(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Drops builds of older sources (more than an hour old), keeping the cache small. */
function pruneBuilds(cache: string, keep: string): void {
  for (const name of readdirSync(cache)) {
    const p = join(cache, name);
    if (p === keep) continue;
    try {
      if (Date.now() - statSync(p).mtimeMs > 3_600_000) rmSync(p, { recursive: true, force: true });
    } catch {
      // raced with another pruner
    }
  }
}

export interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs an ES module script (text) in a child node, with an overall timeout. */
export function runScript(
  script: string,
  options: { uid?: number; gid?: number; cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: options.cwd ?? REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
      env: { ...process.env, ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

export function readText(path: string): string {
  return readFileSync(path, 'utf8');
}
