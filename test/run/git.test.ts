import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../cli/helpers.js';
import { GIT_ENV, git } from '../support/git.js';
import { overlayfsMissing, project, type Project } from './support.js';

/**
 * Git inside `dsh-fs run`, end to end: a read-only git command leaves nothing to review (runs set
 * GIT_OPTIONAL_LOCKS=0, and a refreshed .git/index is no change), and git's own files are counted,
 * left out of commit unless --include-ignored.
 */

const missing = await overlayfsMissing();
if (missing !== undefined && process.env.CI) throw new Error(`CI must run the overlayfs tests: ${missing}`);


async function repository(): Promise<Project & { args: string[] }> {
  const p = await project({ 'a.txt': 'a\n', 'src/b.ts': 'b\n' });
  git(p.root, 'init', '-q', '-b', 'main');
  git(p.root, 'add', '-A');
  git(p.root, 'commit', '-q', '-m', 'one');
  return { ...p, args: ['--root', p.root, '--state', p.state] };
}

describe.skipIf(missing !== undefined)(`git inside dsh-fs run${missing === undefined ? '' : ` (skipped: ${missing})`}`, () => {
  let p: Project | undefined;
  beforeAll(ensureBuilt, 240_000);
  afterEach(async () => p?.cleanup());

  it('git status, diff and log leave no change, and commit leaves the folder\'s .git/index byte-identical', async () => {
    const r = await repository();
    p = r;
    const index = readFileSync(join(r.root, '.git/index'));
    const run = await runCli(['run', ...r.args, '--', 'sh', '-c', 'git status; git diff; git log'], { cwd: r.root, env: GIT_ENV });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('nothing to commit');
    expect(JSON.parse((await runCli(['status', '--json', ...r.args])).stdout)).toEqual({ changes: [], ignored: [], removedTempFiles: [] });
    await runCli(['commit', ...r.args]);
    expect(Buffer.compare(readFileSync(join(r.root, '.git/index')), index)).toBe(0);
  }, 120_000);

  it('a commit inside the run: a.txt listed and .git/ counted; commit writes a.txt only; --include-ignored brings the commit', async () => {
    const r = await repository();
    p = r;
    const run = await runCli(['run', ...r.args, '--', 'sh', '-c', 'echo b >> a.txt && git add -A && git commit -q -m x'], { cwd: r.root, env: GIT_ENV });
    expect(run.code).toBe(0);
    const status = (await runCli(['status', ...r.args])).stdout.split('\n');
    expect(status[0]).toBe('M a.txt');
    expect(status[1]).toMatch(/^! \.git\/ \(\d+ files, git's own\)$/);
    expect(status.filter((line) => line.includes('.git/'))).toHaveLength(1);
    expect((await runCli(['commit', ...r.args])).code).toBe(0);
    expect(readFileSync(join(r.root, 'a.txt'), 'utf8')).toBe('a\nb\n');
    expect(git(r.root, 'log', '--oneline').trim().split('\n')).toHaveLength(1);
    const all = await runCli(['commit', '--include-ignored', ...r.args]);
    expect(all.code).toBe(0);
    expect(git(r.root, 'log', '--oneline').trim().split('\n')).toHaveLength(2);
    expect(git(r.root, 'status', '--porcelain')).toBe('');
  }, 120_000);

  it('the program sees GIT_OPTIONAL_LOCKS=0 unless the caller set it', async () => {
    const r = await repository();
    p = r;
    const out = join(r.dir, 'env.txt');
    await runCli(['run', ...r.args, '--', 'sh', '-c', `echo "$GIT_OPTIONAL_LOCKS" > ${out}`], { cwd: r.root });
    expect(readFileSync(out, 'utf8')).toBe('0\n');
    writeFileSync(out, '');
    await runCli(['run', ...r.args, '--', 'sh', '-c', `echo "$GIT_OPTIONAL_LOCKS" > ${out}`], { cwd: r.root, env: { ...process.env, GIT_OPTIONAL_LOCKS: '1' } });
    expect(readFileSync(out, 'utf8')).toBe('1\n');
  }, 120_000);
});
