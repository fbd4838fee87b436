import { spawn } from 'node:child_process';
import { chmod, chown, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAIN_JS, ensureBuilt, runCli } from '../cli/helpers.js';
import { alive, runQuietly } from '../../src/run/host.js';
import { overlayfsMissing, project, type Project } from './support.js';

const missing = await overlayfsMissing();
if (missing !== undefined && process.env.CI) throw new Error(`CI must run the overlayfs tests: ${missing}`);

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000 && !(await check()); i++) await delay(20);
}

const exists = (path: string) => readFile(path).then(() => true, () => false);

describe.skipIf(missing !== undefined)(`dsh-fs run on overlayfs${missing === undefined ? '' : ` (skipped: ${missing})`}`, () => {
  let p: Project;
  beforeAll(ensureBuilt, 240_000);
  afterEach(async () => p?.cleanup());

  it('runs the command in the sandbox, summarises on stderr after its output, and leaves the folder as it was', async () => {
    p = await project({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const r = await runCli(['run', '--root', p.root, '--state', p.state, '--', 'sh', '-c', 'echo out; echo A > a.txt; rm b.txt; echo c > c.txt'], { cwd: p.root });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toMatch(/^run: 1 changed, 1 deleted, 1 added; checkpoint \d+\n$/);
    expect(await readFile(join(p.root, 'a.txt'), 'utf8')).toBe('a\n');
    expect((await readdir(p.root)).sort()).toEqual(['a.txt', 'b.txt']);
    const status = await runCli(['status', '--root', p.root, '--state', p.state, '--json']);
    const changes = (JSON.parse(status.stdout) as { changes: { path: string; kind: string }[] }).changes;
    expect(changes.map((c) => [c.path, c.kind])).toEqual([['a.txt', 'modified'], ['b.txt', 'deleted'], ['c.txt', 'added']]);
    const json = await runCli(['run', '--root', p.root, '--state', p.state, '--json', '--', 'sh', '-c', 'exit 3'], { cwd: p.root });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ exitCode: 3, added: [], changed: [], deleted: [], conflicts: [] });
  }, 60_000);

  it('counts ignored outputs in the summary and in --json instead of listing them', async () => {
    p = await project({ '.gitignore': 'node_modules/\n', 'a.txt': 'a\n' });
    const script = 'echo A > a.txt; mkdir -p node_modules/x; echo 1 > node_modules/x/i.js; echo 2 > node_modules/j.js';
    const r = await runCli(['run', '--root', p.root, '--state', p.state, '--', 'sh', '-c', script], { cwd: p.root });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^run: 1 changed, 0 deleted, 0 added; 2 ignored \(node_modules\/\); checkpoint \d+\n$/);
    const json = await runCli(['run', '--root', p.root, '--state', p.state, '--json', '--', 'sh', '-c', 'echo 3 > node_modules/k.js'], { cwd: p.root });
    expect(JSON.parse(json.stdout)).toMatchObject({ added: [], changed: [], ignored: [{ path: 'node_modules/', ignored: 'gitignore', count: 1 }] });
  }, 60_000);

  it('a run killed with SIGKILL imports nothing and leaves no process or mount; the next run sweeps its scratch directory', async () => {
    p = await project({ 'a.txt': 'a\n' });
    const pids = join(p.dir, 'pids');
    const child = spawn(process.execPath, [MAIN_JS, 'run', '--root', p.root, '--state', p.state, '--', 'sh', '-c', `echo k > a.txt; echo $$ > ${pids}; sleep 61.5`], { stdio: 'ignore' });
    await until(() => exists(pids));
    const scratchRuns = join(p.scratch, 'runs');
    expect((await readdir(scratchRuns)).length).toBe(1);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    await until(async () => !alive(child.pid!) && (await runQuietly('pgrep', ['-f', '^sleep 61.5$'])).code === 1);
    expect((await runQuietly('pgrep', ['-f', '^sleep 61.5$'])).code).toBe(1);
    const mounts = await readFile('/proc/self/mountinfo', 'utf8');
    expect(mounts).not.toContain(p.root);
    const status = await runCli(['status', '--root', p.root, '--state', p.state, '--json']);
    expect((JSON.parse(status.stdout) as { changes: unknown[] }).changes).toEqual([]);
    const next = await runCli(['run', '--root', p.root, '--state', p.state, '--', 'true'], { cwd: p.root });
    expect(next.code).toBe(0);
    expect(await readdir(scratchRuns)).toEqual([]);
  }, 60_000);

  it('exits 1 with the summary when the program succeeded but a path was a conflict', async () => {
    p = await project({ 'a.txt': 'a\n' });
    const go = join(p.dir, 'go');
    const started = join(p.dir, 'started');
    const running = runCli(['run', '--root', p.root, '--state', p.state, '--', 'sh', '-c', `echo prog > a.txt; touch ${started}; while [ ! -e ${go} ]; do sleep 0.02; done`], { cwd: p.root });
    await until(() => exists(started));
    const sandbox = await p.sandbox();
    await sandbox.writeText(await sandbox.resolve(join(p.root, 'a.txt')), 'agent\n');
    await writeFile(go, '');
    const r = await running;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/1 conflict: a\.txt \(the program's version: .*\)/);
    const kept = /the program's version: ([^)]+)\)/.exec(r.stderr)![1]!;
    expect(await readFile(kept, 'utf8')).toBe('prog\n');
    expect(await readFile(join(p.root, 'a.txt'), 'utf8')).toBe('a\n');
  }, 60_000);

  it('without root: in a user namespace (setpriv to uid 65534)', async () => {
    const setpriv = await runQuietly('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'true']);
    if (setpriv.code !== 0) return expect.soft(setpriv.stderr, 'setpriv cannot change uid here').toBe('');
    p = await project({ 'a.txt': 'a\n' });
    await chmod(p.dir, 0o755);
    for (const path of [p.dir, p.root, join(p.root, 'a.txt')]) await chown(path, 65534, 65534);
    const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, MAIN_JS, 'run', '--root', p.root, '--state', p.state, '--', 'sh', '-c', 'id -u; echo u > a.txt'], { cwd: p.root, env: { ...process.env, HOME: p.dir }, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      child.on('close', (code) => resolve({ code, err }));
    });
    expect(r.err).toMatch(/^run: 1 changed, 0 deleted, 0 added/);
    expect(r.code).toBe(0);
    expect(await readFile(join(p.root, 'a.txt'), 'utf8')).toBe('a\n');
    const sandbox = await p.sandbox();
    expect((await sandbox.readText(await sandbox.resolve(join(p.root, 'a.txt')))).text).toBe('u\n');
  }, 60_000);
});

describe.skipIf(missing !== undefined)('dsh-fs run --jail on overlayfs', () => {
  let p: Project;
  beforeAll(ensureBuilt, 240_000);
  afterEach(async () => p?.cleanup());

  it('the host is read-only, $HOME and /tmp are private and writable (discarded), --no-network leaves only loopback', async () => {
    const bwrap = await runQuietly('bwrap', ['--version']);
    if (bwrap.code !== 0 && !process.env.CI) return;
    p = await project({ 'a.txt': 'a\n' });
    const home = join(p.dir, 'home');
    await mkdir(home);
    const script = [
      'touch /etc/dsh-fs-jail-probe 2>/dev/null && echo host-writable',
      'echo h > "$HOME/h" && echo home-ok',
      'echo t > /tmp/t && echo tmp-ok',
      'echo j > a.txt',
      'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\\n" " "',
    ].join('; ');
    const r = await runCli(['run', '--root', p.root, '--state', p.state, '--jail', '--no-network', '--', 'sh', '-c', script], { cwd: p.root, env: { HOME: home } });
    expect(r.stderr).toMatch(/^run: 1 changed/);
    expect(r.stdout).toBe('home-ok\ntmp-ok\nlo ');
    expect(await readdir(home)).toEqual([]);
    expect(await exists('/etc/dsh-fs-jail-probe')).toBe(false);
    const sandbox = await p.sandbox();
    expect((await sandbox.readText(await sandbox.resolve(join(p.root, 'a.txt')))).text).toBe('j\n');
  }, 60_000);
});
