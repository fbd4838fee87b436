import { cp, lstat, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { isFsError, type FileSystem } from '../../src/seam/index.js';
import { runInSandbox } from '../../src/run/index.js';
import { runQuietly } from '../../src/run/host.js';
import { overlayfsMissing, project, type Project } from './support.js';

const missing = await overlayfsMissing();
if (missing !== undefined && process.env.CI) throw new Error(`CI must run the overlayfs tests: ${missing}`);

const PATHS = ['f0', 'f1', 'd/x', 'd/y', 'd/e/z', 'n/w'] as const;
const FILES = { f0: '0', f1: '1', 'd/x': 'x', 'd/y': 'y', 'd/e/z': 'z' };

type Op =
  | { kind: 'write'; path: string; text: string }
  | { kind: 'remove'; path: string }
  | { kind: 'mkdir'; path: string }
  | { kind: 'chmod'; path: string }
  | { kind: 'link'; path: string; text: string };

const anyPath = fc.constantFrom<string>(...PATHS, 'd', 'd/e', 'n');
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), path: anyPath, text: fc.constantFrom('a', 'b', 'c') }),
  fc.record({ kind: fc.constant('remove' as const), path: anyPath }),
  fc.record({ kind: fc.constant('mkdir' as const), path: anyPath }),
  fc.record({ kind: fc.constant('chmod' as const), path: anyPath }),
  fc.record({ kind: fc.constant('link' as const), path: anyPath, text: fc.constantFrom('f0', 'gone') }),
);

const q = (s: string) => `'${s}'`;
/** The program's ops as shell commands (each may fail, as a program's may). */
function script(ops: readonly Op[]): string {
  return ops
    .map((o) => {
      if (o.kind === 'write') return `{ mkdir -p "$(dirname ${q(o.path)})" && rm -rf ${q(o.path)} && printf %s ${q(o.text)} > ${q(o.path)}; }`;
      if (o.kind === 'remove') return `rm -rf ${q(o.path)}`;
      if (o.kind === 'mkdir') return `{ [ -d ${q(o.path)} ] || { rm -f ${q(o.path)}; mkdir -p ${q(o.path)}; }; }`;
      if (o.kind === 'chmod') return `{ [ -f ${q(o.path)} ] && [ ! -L ${q(o.path)} ] && chmod +x ${q(o.path)}; }`;
      return `{ mkdir -p "$(dirname ${q(o.path)})" && rm -rf ${q(o.path)} && ln -s ${q(o.text)} ${q(o.path)}; }`;
    })
    .map((c) => `${c} 2>/dev/null`)
    .join('; ');
}

/** The agent's ops through the contract (a refused one is skipped, as an agent's would be). */
async function agent(fs: FileSystem, root: string, ops: readonly Op[]): Promise<void> {
  for (const o of ops) {
    try {
      const target = await fs.resolve(join(root, o.path), { noFollow: true });
      const link = await fs.readlink!(target).catch(() => undefined);
      const info = link === undefined ? await fs.stat(target) : undefined;
      const clear = async () => {
        if (link !== undefined) await fs.removeLink!(target);
        else if (info?.type === 'directory') await fs.rmdir(target, { recursive: true });
        else if (info !== undefined) await fs.remove(target);
      };
      if (o.kind === 'write') {
        if (link !== undefined || info?.type === 'directory') await clear();
        await fs.writeText(await fs.resolve(join(root, o.path)), o.text);
      } else if (o.kind === 'remove') await clear();
      else if (o.kind === 'mkdir' && info?.type !== 'directory') {
        await clear();
        await fs.mkdir(await fs.resolve(join(root, o.path)));
      } else if (o.kind === 'chmod' && info?.type === 'file') await fs.setExecutable!(target, true);
      else if (o.kind === 'link') {
        await clear();
        await fs.mkdir(await fs.resolve(join(root, o.path, '..')));
        await fs.symlink!(target, o.text);
      }
    } catch (err) {
      if (!isFsError(err)) throw err;
    }
  }
}

type Tree = Map<string, string>;

async function treeOfFs(fs: FileSystem, root: string, dir = root, out: Tree = new Map()): Promise<Tree> {
  for (const e of await fs.listDir(await fs.resolve(dir))) {
    const path = join(dir, e.name);
    const rel = relative(root, path);
    const target = await fs.resolve(path, { noFollow: true });
    const link = await fs.readlink!(target).catch(() => undefined);
    if (link !== undefined) out.set(rel, `l:${link}`);
    else if (e.type === 'directory') {
      out.set(rel, 'd');
      await treeOfFs(fs, root, path, out);
    } else {
      const info = await fs.stat(target);
      out.set(rel, `f:${(await fs.readText(target)).text}${info?.executable === true ? ':x' : ''}`);
    }
  }
  return out;
}

async function treeOfDir(root: string, dir = root, out: Tree = new Map()): Promise<Tree> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const rel = relative(root, path);
    const info = await lstat(path);
    if (info.isSymbolicLink()) out.set(rel, `l:${await readlink(path)}`);
    else if (info.isDirectory()) {
      out.set(rel, 'd');
      await treeOfDir(root, path, out);
    } else out.set(rel, `f:${await readFile(path, 'utf8')}${(info.mode & 0o100) !== 0 ? ':x' : ''}`);
  }
  return out;
}

const related = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
function changedPaths(from: Tree, to: Tree): string[] {
  return [...new Set([...from.keys(), ...to.keys()])].filter((k) => from.get(k) !== to.get(k));
}

describe.skipIf(missing !== undefined)(`runs interleaved with agent edits${missing === undefined ? '' : ` (skipped: ${missing})`}`, () => {
  let p: Project | undefined;
  afterEach(async () => p?.cleanup());

  it('end in the state of applying both, but for conflicts, reported exactly where both changed related paths, where the sandbox keeps its own', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 6 }), fc.array(op, { maxLength: 4 }), async (programOps, agentOps) => {
        await p?.cleanup();
        p = await project(FILES);
        const start = await treeOfDir(p.root);
        // What the program alone makes of the start, in a plain copy of the folder.
        const plain = realpathSync(await mkdtemp(join(tmpdir(), 'dsh-fs-run-plain-')));
        await cp(p.root, plain, { recursive: true });
        await runQuietly('sh', ['-c', `cd ${q(plain)} && { ${script(programOps)}; true; }`]);
        const byProgram = await treeOfDir(plain);
        await rm(plain, { recursive: true, force: true });
        // What the agent alone makes of it, on a sandbox of its own.
        const alone = await createOverlayFs({ lower: createLocalFs({ root: p.root }) });
        await agent(alone, p.root, agentOps);
        const byAgent = await treeOfFs(alone, p.root);

        const sandbox = await p.sandbox();
        const go = join(p.dir, 'go');
        const started = join(p.dir, 'started');
        const running = runInSandbox(sandbox, ['sh', '-c', `${script(programOps)}; touch ${q(started)}; while [ ! -e ${q(go)} ]; do sleep 0.01; done`], { scratchDir: p.scratch, stdio: 'ignore' });
        // A run that fails before its program starts ends the wait too.
        let ended = false;
        void running.then(() => (ended = true), () => (ended = true));
        while (!ended && !(await readFile(started).then(() => true, () => false))) await new Promise((r) => setTimeout(r, 10));
        await agent(sandbox, p.root, agentOps);
        await writeFile(go, '');
        const result = await running;
        const final = await treeOfFs(sandbox, p.root);

        const cp_ = changedPaths(start, byProgram);
        const ca = changedPaths(start, byAgent);
        const conflicts = result.conflicts.map((c) => relative(p!.root, c.path));
        const inConflict = (k: string) => conflicts.some((c) => k === c || k.startsWith(`${c}/`));
        for (const c of conflicts) {
          expect(cp_.some((k) => related(k, c)) && ca.some((k) => related(k, c)), `conflict ${c} overlaps both`).toBe(true);
        }
        if (!cp_.some((a) => ca.some((b) => related(a, b)))) expect(conflicts).toEqual([]);
        for (const k of new Set([...start.keys(), ...byProgram.keys(), ...byAgent.keys(), ...final.keys()])) {
          const want = inConflict(k) ? byAgent.get(k) : cp_.includes(k) ? byProgram.get(k) : byAgent.get(k);
          expect(final.get(k), `${k} (program ${JSON.stringify(programOps)}, agent ${JSON.stringify(agentOps)}, conflicts ${conflicts})`).toBe(want);
        }
        expect(await readdir(p.root).then((n) => n.sort())).toEqual(['d', 'f0', 'f1']);
      }),
      // Each case is a real run: report the first failure rather than shrink for minutes.
      { numRuns: Number(process.env.DSH_FS_RUN_PROPERTY_RUNS ?? 12), endOnFailure: true },
    );
  }, 240_000);
});
