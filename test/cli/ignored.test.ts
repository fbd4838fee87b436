import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { git, hasGit } from '../support/git.js';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { createSqliteFs, createSqliteUpperStore } from '../../src/backends/sqlite/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { REPO, project, removeTemps, tempDir } from './helpers.js';

/*
 * status, diff and commit over ignored outputs and git's own files. The sandbox's changes are
 * made through the library here (what a program run in the sandbox would leave: real git run in
 * a scratch copy, its changes copied in); the same checks after `dsh-fs run` belong with run.
 */

afterAll(removeTemps);

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const code = await main(argv, { stdout: stream((s) => (out += s)), stderr: stream((s) => (err += s)), env: {}, cwd: REPO });
  return { code, stdout: out, stderr: err };
}


function files(dir: string, under = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? files(path, under) : e.isFile() ? [relative(under, path)] : [];
  });
}

/**
 * Runs `script` with real git in a scratch copy of `root` (new inodes and device, as a program in
 * the sandbox sees them), then copies what it changed into the sandbox through the library.
 */
async function gitInSandbox(root: string, overlay: OverlayFileSystem, script: (scratch: string) => void): Promise<void> {
  const scratch = join(await tempDir('dsh-git-scratch-'), 'copy');
  execFileSync('cp', ['-a', root, scratch]);
  script(scratch);
  for (const rel of files(scratch)) {
    const bytes = new Uint8Array(readFileSync(join(scratch, rel)));
    const before = existsSync(join(root, rel)) ? readFileSync(join(root, rel)) : undefined;
    if (before === undefined || Buffer.compare(before, bytes) !== 0) await overlay.writeBytes(await overlay.resolve(join(root, rel)), bytes);
  }
  for (const rel of files(root)) if (!existsSync(join(scratch, rel))) await overlay.remove(await overlay.resolve(join(root, rel)));
}

/** A git repository with one commit, and a sandbox over it kept in a state directory. */
async function repository() {
  const p = await project({ 'a.txt': 'a\n', 'src/b.ts': 'b\n' });
  git(p.root, 'init', '-q', '-b', 'main');
  git(p.root, 'add', '-A');
  git(p.root, 'commit', '-q', '-m', 'one');
  const overlay = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state });
  return { ...p, overlay, args: ['--root', p.root, '--state', p.state] };
}

describe('ignored outputs in status, diff and commit', () => {
  it('are one counted line per top directory, left out of commit unless --include-ignored (--root)', async () => {
    const p = await project({ '.gitignore': 'node_modules/\n', 'src/a.ts': 'a\n' });
    const overlay = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state });
    for (let i = 0; i < 12; i++) await overlay.writeText(await overlay.resolve(join(p.root, `node_modules/p${i}/index.js`)), `${i}\n`);
    await overlay.writeText(await overlay.resolve(join(p.root, 'src/a.ts')), 'a2\n');
    const args = ['--root', p.root, '--state', p.state];
    expect((await cli(['status', ...args])).stdout).toBe(
      'M src/a.ts\n! node_modules/ (12 files, ignored)\nIgnored outputs and git\'s files are counted, not listed; "dsh-fs commit --include-ignored" commits them.\n',
    );
    const json = JSON.parse((await cli(['status', '--json', ...args])).stdout);
    expect(json).toEqual({ changes: [{ path: 'src/a.ts', kind: 'modified', type: 'file', size: 3 }], ignored: [{ path: 'node_modules/', ignored: 'gitignore', count: 12 }], removedTempFiles: [] });
    const diff = (await cli(['diff', '--color', 'never', ...args])).stdout;
    expect(diff.startsWith('# not shown: node_modules/ (12 files, ignored)\ndiff --git a/src/a.ts b/src/a.ts\n')).toBe(true);
    expect(JSON.parse((await cli(['diff', '--json', ...args])).stdout).at(-1)).toEqual({ path: 'node_modules/', ignored: 'gitignore', count: 12 });
    const commit = await cli(['commit', '--json', ...args]);
    expect(JSON.parse(commit.stdout)).toMatchObject({ committed: [{ path: 'src/a.ts', kind: 'modified' }], ignored: [{ path: 'node_modules/', ignored: 'gitignore', count: 12 }] });
    expect(existsSync(join(p.root, 'node_modules'))).toBe(false);
    const all = await cli(['commit', ...args, '--include-ignored']);
    expect(all.stdout).toContain('  + node_modules/ (12 files, ignored)\n');
    expect(readFileSync(join(p.root, 'node_modules/p11/index.js'), 'utf8')).toBe('11\n');
    expect((await cli(['status', ...args])).stdout).toBe('No changes.\n');
  });

  it('the same over a --sqlite sandbox', async () => {
    const dir = await tempDir();
    const file = join(dir, 'w.db');
    const fs = createSqliteFs({ path: file, workspace: 'app' });
    await fs.writeText(await fs.resolve('/.gitignore'), 'dist/\n');
    const args = ['--sqlite', file, '--workspace', 'app'];
    // The sandbox the CLI opens (named as the workspace), written through the library; its lock goes with close.
    const store = createSqliteUpperStore({ path: file, sandbox: 'app' });
    const overlay = await createOverlayFs({ lower: fs, store });
    await overlay.writeText(await overlay.resolve('/dist/x.js'), 'x\n');
    await overlay.writeText(await overlay.resolve('/dist/y.js'), 'y\n');
    await overlay.writeText(await overlay.resolve('/README.md'), 'r\n');
    await store.close();
    await fs.close();
    expect(JSON.parse((await cli(['status', '--json', ...args])).stdout).ignored).toEqual([{ path: 'dist/', ignored: 'gitignore', count: 2 }]);
    expect(JSON.parse((await cli(['commit', '--json', ...args])).stdout).committed).toEqual([{ path: 'README.md', kind: 'added' }]);
    expect(JSON.parse((await cli(['commit', '--json', '--include-ignored', ...args])).stdout).committed).toEqual([{ path: 'dist/', ignored: 'gitignore', count: 2 }]);
  });
});

describe.skipIf(!hasGit)('git inside the sandbox (real git on the PATH; changes copied in through the library)', () => {
  it('read-only git commands: a refreshed .git/index is no change, and commit leaves the folder\'s index byte-identical', async () => {
    const r = await repository();
    const index = readFileSync(join(r.root, '.git/index'));
    await gitInSandbox(r.root, r.overlay, (scratch) => {
      const t = Date.now() / 1000 + 100;
      for (const rel of ['a.txt', 'src/b.ts']) utimesSync(join(scratch, rel), t, t);
      git(scratch, 'status');
      git(scratch, 'diff');
      git(scratch, 'log');
      expect(Buffer.compare(readFileSync(join(scratch, '.git/index')), index)).not.toBe(0);
    });
    expect(JSON.parse((await cli(['status', '--json', ...r.args])).stdout)).toEqual({ changes: [], ignored: [], removedTempFiles: [] });
    expect((await cli(['commit', ...r.args])).stdout).toBe('Nothing to commit.\n');
    await cli(['commit', '--include-ignored', ...r.args]);
    expect(Buffer.compare(readFileSync(join(r.root, '.git/index')), index)).toBe(0);
  });

  it('a commit made in the sandbox: the file is listed and .git/ counted; commit writes the file only; --include-ignored brings the commit', async () => {
    const r = await repository();
    await gitInSandbox(r.root, r.overlay, (scratch) => {
      writeFileSync(join(scratch, 'a.txt'), 'a\nb\n');
      git(scratch, 'add', '-A');
      git(scratch, 'commit', '-q', '-m', 'x');
    });
    const status = (await cli(['status', ...r.args])).stdout.split('\n');
    expect(status[0]).toBe('M a.txt');
    expect(status[1]).toMatch(/^! \.git\/ \(\d+ files, git's own\)$/);
    const json = JSON.parse((await cli(['status', '--json', ...r.args])).stdout);
    expect(json.ignored).toEqual([{ path: '.git/', ignored: 'git', count: expect.any(Number) }]);
    expect(json.ignored[0].count).toBeGreaterThanOrEqual(5);
    expect((await cli(['diff', '--color', 'never', ...r.args])).stdout).not.toContain('diff --git a/.git');
    expect((await cli(['commit', ...r.args])).code).toBe(0);
    expect(readFileSync(join(r.root, 'a.txt'), 'utf8')).toBe('a\nb\n');
    expect(git(r.root, 'log', '--oneline').trim().split('\n')).toHaveLength(1);
    const all = await cli(['commit', '--include-ignored', ...r.args]);
    expect(all.code).toBe(0);
    expect(git(r.root, 'log', '--oneline').trim().split('\n')).toHaveLength(2);
    expect(git(r.root, 'status', '--porcelain')).toBe('');
  });

  it('with --include-ignored, a ref that moved in the folder meanwhile makes all of .git/ a conflict and nothing of it is written', async () => {
    const r = await repository();
    await gitInSandbox(r.root, r.overlay, (scratch) => {
      writeFileSync(join(scratch, 'a.txt'), 'sandbox\n');
      git(scratch, 'commit', '-q', '-am', 'in the sandbox');
    });
    writeFileSync(join(r.root, 'src/b.ts'), 'folder\n');
    git(r.root, 'commit', '-q', '-am', 'in the folder');
    const head = git(r.root, 'rev-parse', 'HEAD');
    const objects = files(join(r.root, '.git/objects')).length;
    const out = await cli(['commit', '--json', '--include-ignored', ...r.args]);
    expect(out.code).toBe(1);
    const report = JSON.parse(out.stdout);
    expect(report.committed).toEqual([{ path: 'a.txt', kind: 'modified' }]);
    expect(report.conflicts.length).toBeGreaterThanOrEqual(5);
    expect(report.conflicts.every((c: { path: string; code: string }) => c.path.startsWith('.git/') && c.code === 'FS_CONFLICT')).toBe(true);
    expect(git(r.root, 'rev-parse', 'HEAD')).toBe(head);
    expect(files(join(r.root, '.git/objects')).length).toBe(objects);
  });
});
