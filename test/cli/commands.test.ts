import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { COMMANDS, UsageError } from '../../src/cli/args.js';
import { HELP, MAIN_HELP } from '../../src/cli/help.js';
import { colorsFor } from '../../src/cli/color.js';
import { LOCK_FILE, withStateLock } from '../../src/sandbox/lock.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { rootRelative } from '../../src/cli/sandbox.js';
import { defaultStateDir, resolveStateDir } from '../../src/cli/workspace.js';
import { isFsError } from '../../src/seam/index.js';
import { REPO, ensureBuilt, project, removeTemps, runCli, tempDir } from './helpers.js';

afterAll(removeTemps);

interface Captured {
  io: Io;
  out: () => string;
  err: () => string;
}

function capture(options: { tty?: boolean; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Captured {
  let out = '';
  let err = '';
  const stream = (sink: (s: string) => void) =>
    ({
      isTTY: options.tty ?? false,
      write: (s: string) => {
        sink(s);
        return true;
      },
    }) as unknown as Io['stdout'];
  return {
    io: { stdout: stream((s) => (out += s)), stderr: stream((s) => (err += s)), env: options.env ?? {}, cwd: options.cwd ?? REPO },
    out: () => out,
    err: () => err,
  };
}

async function run(argv: string[], options: Parameters<typeof capture>[0] = {}) {
  const c = capture(options);
  const code = await main(argv, c.io);
  return { code, stdout: c.out(), stderr: c.err() };
}

const SAMPLE = {
  'src/app.ts': 'export const a = 1;\nexport const b = 2;\n',
  'src/old.ts': 'gone\n',
  'README.md': '# r\n',
};

/** A sandbox with one file added, one modified and one deleted, made through the library. */
async function sandboxWithChanges() {
  const p = await project(SAMPLE);
  const overlay = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state });
  await overlay.writeText(await overlay.resolve('src/new.ts'), 'export {};\n');
  await overlay.editText(await overlay.resolve('src/app.ts'), { oldString: 'b = 2', newString: 'b = 3' });
  await overlay.remove(await overlay.resolve('src/old.ts'));
  return p;
}

describe('help, version and usage errors', () => {
  it('prints the main help and each command’s help on stdout', async () => {
    expect(await run(['--help'])).toEqual({ code: 0, stdout: MAIN_HELP, stderr: '' });
    expect((await run(['-h'])).stdout).toBe(MAIN_HELP);
    for (const command of COMMANDS) {
      const r = await run([command, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(HELP[command]);
      expect(r.stdout.startsWith(`Usage: dsh-fs ${command}`)).toBe(true);
      expect(MAIN_HELP).toContain(`dsh-fs ${command}`);
    }
    expect((await run(['help', 'commit'])).stdout).toBe(HELP.commit);
    // --help is answered before any value is checked; an unknown option is still a usage error.
    expect((await run(['serve', '--bogus', '--help'])).code).toBe(2);
    expect((await run(['serve', '--root', '/nonexistent', '--help'])).stdout).toBe(HELP.serve);
  });

  it('reports each usage error on stderr with exit status 2', async () => {
    const p = await project(SAMPLE);
    const cases: [string[], RegExp][] = [
      [[], /^dsh-fs — /],
      [['frobnicate'], /^dsh-fs: unknown command "frobnicate"\nRun "dsh-fs --help" for usage\.\n$/],
      [['--frobnicate'], /^dsh-fs: unknown option "--frobnicate"\n/],
      [['serve'], /^dsh-fs serve: --root is required\nRun "dsh-fs serve --help" for usage\.\n$/],
      [['serve', '--root', p.root, '--mode', 'yolo'], /^dsh-fs serve: --mode must be one of sandbox, direct, not "yolo"\n/],
      [['serve', '--root', p.root, '--mode', 'direct', '--state', p.state], /^dsh-fs serve: --state applies to --mode sandbox only\n/],
      [['serve', '--root', p.root, 'extra'], /^dsh-fs serve: unexpected argument "extra"\n/],
      [['status', '--root'], /^dsh-fs status: --root needs a value\n/],
      [['status', '--root', p.root, '--bogus'], /^dsh-fs status: unknown option "--bogus"\n/],
      [['status', '--root', p.root, '--json=yes'], /^dsh-fs status: --json does not take a value\n/],
      [['status', '--root', ''], /^dsh-fs status: --root needs a non-empty value\n/],
      [['diff', '--root', p.root, '--color', 'sometimes'], /^dsh-fs diff: --color must be one of auto, always, never/],
      [['status', '--root', join(p.base, 'missing')], /^dsh-fs: --root ".*missing": no such directory\n/],
      [['status', '--root', join(p.root, 'README.md')], /^dsh-fs: --root ".*README\.md": not a directory\n/],
      [['status', '--root', p.root, '--state', join(p.root, 'src', 'st')], /lies inside --root/],
      [['commit', '--root', p.root, '--state', p.state, '../elsewhere'], /^dsh-fs commit: "\.\.\/elsewhere" is outside --root/],
      [['demo', 'now'], /^dsh-fs demo: unexpected argument "now"\n/],
    ];
    for (const [argv, message] of cases) {
      const r = await run(argv, { cwd: p.base });
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stdout, argv.join(' ')).toBe('');
      expect(r.stderr, argv.join(' ')).toMatch(message);
    }
    expect(existsSync(p.state)).toBe(false);
  });

  it('the built binary prints its version and uses exit statuses 0 and 2', { timeout: 600_000 }, async () => {
    await ensureBuilt();
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const usage = await runCli(['status']);
    expect(usage).toMatchObject({ code: 2, stdout: '' });
    expect(usage.stderr).toContain('--root is required');
    expect(readFileSync(join(REPO, 'dist/cli/main.js'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
});

describe('status, diff, commit and discard', () => {
  it('status lists added, modified and deleted files, as text or JSON, limited to PATHs', async () => {
    const p = await sandboxWithChanges();
    const args = ['--root', p.root, '--state', p.state];
    expect(await run(['status', ...args])).toEqual({ code: 0, stdout: 'M src/app.ts\nA src/new.ts\nD src/old.ts\n', stderr: '' });
    const json = JSON.parse((await run(['status', ...args, '--json'])).stdout) as { changes: unknown; removedTempFiles: unknown };
    expect(json.removedTempFiles).toEqual([]);
    expect(json.changes).toEqual([
      { path: 'src/app.ts', kind: 'modified', type: 'file', size: 40 },
      { path: 'src/new.ts', kind: 'added', type: 'file', size: 11 },
      { path: 'src/old.ts', kind: 'deleted', type: 'file' },
    ]);
    // From outside the root, PATHs are relative to the root; from inside it, to the current directory.
    expect((await run(['status', ...args, 'src/app.ts', 'src/old.ts'], { cwd: p.base })).stdout).toBe('M src/app.ts\nD src/old.ts\n');
    expect((await run(['status', ...args, 'new.ts'], { cwd: join(p.root, 'src') })).stdout).toBe('A src/new.ts\n');
    expect((await run(['status', ...args, 'README.md'], { cwd: p.base })).stdout).toBe('No changes.\n');
  });

  it('status and diff of a root with no sandbox say so and create nothing', async () => {
    const p = await project(SAMPLE);
    const args = ['--root', p.root, '--state', p.state];
    expect((await run(['status', ...args])).stdout).toBe('No changes.\n');
    expect(JSON.parse((await run(['status', ...args, '--json'])).stdout)).toEqual({ changes: [], ignored: [], removedTempFiles: [] });
    expect(await run(['diff', ...args])).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await run(['commit', ...args])).toEqual({ code: 0, stdout: 'Nothing to commit.\n', stderr: '' });
    expect(await run(['discard', ...args])).toEqual({ code: 0, stdout: 'Nothing to discard.\n', stderr: '' });
    expect(existsSync(p.state)).toBe(false);
  });

  it('diff is plain when piped or with NO_COLOR, coloured on a terminal or with --color always', async () => {
    const p = await sandboxWithChanges();
    const args = ['--root', p.root, '--state', p.state];
    const plain = await run(['diff', ...args, 'src/app.ts']);
    expect(plain.stdout).toBe(
      [
        'diff --git a/src/app.ts b/src/app.ts',
        '--- a/src/app.ts',
        '+++ b/src/app.ts',
        '@@ -1,2 +1,2 @@',
        ' export const a = 1;',
        '-export const b = 2;',
        '+export const b = 3;',
        '',
      ].join('\n'),
    );
    expect((await run(['diff', ...args, 'src/app.ts'], { tty: true, env: { NO_COLOR: '1' } })).stdout).toBe(plain.stdout);
    expect((await run(['diff', ...args, 'src/app.ts', '--color', 'never'], { tty: true })).stdout).toBe(plain.stdout);
    const tty = (await run(['diff', ...args, 'src/app.ts'], { tty: true })).stdout;
    const forced = (await run(['diff', ...args, 'src/app.ts', '--color', 'always'])).stdout;
    expect(forced).toBe(tty);
    expect(tty).toContain('\x1b[32m+export const b = 3;\x1b[39m');
    expect(tty).toContain('\x1b[31m-export const b = 2;\x1b[39m');
    expect(tty.replace(/\x1b\[\d+m/g, '')).toBe(plain.stdout);

    const all = (await run(['diff', ...args])).stdout;
    expect(all).toContain('diff --git a/src/new.ts b/src/new.ts\nnew file mode 100644\n--- /dev/null\n+++ b/src/new.ts\n');
    expect(all).toContain('diff --git a/src/old.ts b/src/old.ts\ndeleted file mode 100644\n--- a/src/old.ts\n+++ /dev/null\n');
  });

  it('discard drops the selected changes, then all; the directory is never touched', async () => {
    const p = await sandboxWithChanges();
    const args = ['--root', p.root, '--state', p.state];
    expect(await run(['discard', ...args, 'src/new.ts'])).toEqual({ code: 0, stdout: 'Discarded 1 change.\n', stderr: '' });
    expect((await run(['status', ...args])).stdout).toBe('M src/app.ts\nD src/old.ts\n');
    expect((await run(['discard', ...args])).stdout).toBe('Discarded 2 changes.\n');
    expect((await run(['status', ...args])).stdout).toBe('No changes.\n');
    expect(existsSync(join(p.root, 'src/new.ts'))).toBe(false);
    expect(await readFile(join(p.root, 'src/app.ts'), 'utf8')).toBe(SAMPLE['src/app.ts']);
    expect(await readFile(join(p.root, 'src/old.ts'), 'utf8')).toBe('gone\n');
  });

  it('commit writes selected changes, shows progress in place on a terminal, and keeps the rest', async () => {
    const p = await sandboxWithChanges();
    const args = ['--root', p.root, '--state', p.state];
    const one = await run(['commit', ...args, 'src/app.ts'], { tty: true, env: { NO_COLOR: '1' } });
    expect(one.code).toBe(0);
    expect(one.stdout).toBe(`Committed 1 change to ${await realpath(p.root)}:\n  M src/app.ts\n`);
    expect(one.stderr).toBe('\r\x1b[2K[1/1] committed src/app.ts\r\x1b[2K');
    expect(await readFile(join(p.root, 'src/app.ts'), 'utf8')).toBe('export const a = 1;\nexport const b = 3;\n');
    expect((await run(['status', ...args])).stdout).toBe('A src/new.ts\nD src/old.ts\n');

    const rest = await run(['commit', ...args]);
    expect(rest.stdout).toContain('  A src/new.ts\n  D src/old.ts\n');
    expect(existsSync(join(p.root, 'src/old.ts'))).toBe(false);
    expect(await readFile(join(p.root, 'src/new.ts'), 'utf8')).toBe('export {};\n');
    expect((await run(['commit', ...args])).stdout).toBe('Nothing to commit.\n');
  });
});

describe('state directory, paths and the lock', () => {
  it('defaults the state directory to XDG_STATE_HOME (when absolute) or ~/.local/state', () => {
    const d = defaultStateDir('/srv/ws', { XDG_STATE_HOME: '/x/state' });
    expect(d).toMatch(/^\/x\/state\/dsh-fs\/[0-9a-f]{16}$/);
    expect(defaultStateDir('/srv/ws', { XDG_STATE_HOME: '/x/state' })).toBe(d);
    expect(defaultStateDir('/srv/other', { XDG_STATE_HOME: '/x/state' })).not.toBe(d);
    expect(defaultStateDir('/srv/ws', { XDG_STATE_HOME: 'relative' })).toBe(join(homedir(), '.local/state', d.slice('/x/state/'.length)));
    expect(defaultStateDir('/srv/ws', {})).toBe(join(homedir(), '.local/state', d.slice('/x/state/'.length)));
  });

  it('refuses a state directory inside the root, also through a symlink', async () => {
    const p = await project(SAMPLE);
    const root = await realpath(p.root);
    await symlink(join(root, 'src'), join(p.base, 'link'));
    await expect(resolveStateDir(root, join(p.base, 'link', 'state'))).rejects.toThrow(UsageError);
    await expect(resolveStateDir(root, root)).rejects.toThrow(UsageError);
    await expect(resolveStateDir(root, undefined, { XDG_STATE_HOME: join(root, 'x') })).rejects.toThrow(UsageError);
    expect(await resolveStateDir(root, p.state)).toBe(p.state);
  });

  it('maps PATH arguments onto the root', async () => {
    const p = await project(SAMPLE);
    const root = await realpath(p.root);
    await symlink(root, join(p.base, 'alias'));
    const alias = join(p.base, 'alias');
    expect(rootRelative('src/app.ts', root, root, p.base, 'status')).toBe('src/app.ts');
    expect(rootRelative('app.ts', root, root, join(root, 'src'), 'status')).toBe('src/app.ts');
    expect(rootRelative('..', root, root, join(root, 'src'), 'status')).toBe('.');
    expect(rootRelative(join(root, 'src'), root, root, '/', 'status')).toBe('src');
    // The root given through a symlink: both spellings of a path work.
    expect(rootRelative(join(alias, 'src/app.ts'), alias, root, '/', 'status')).toBe('src/app.ts');
    expect(rootRelative('x', alias, root, join(alias, 'src'), 'status')).toBe('src/x');
    expect(() => rootRelative('/etc/passwd', root, root, p.base, 'status')).toThrow(UsageError);
    expect(() => rootRelative('../..', root, root, join(root, 'src'), 'status')).toThrow(/is outside --root/);
  });

  it('withStateLock runs holders one at a time, waits for a live holder and takes over a dead one', async () => {
    const dir = await tempDir();
    const events: string[] = [];
    const holder = (name: string) =>
      withStateLock(dir, async () => {
        events.push(`${name}+`);
        await new Promise((r) => setTimeout(r, 30));
        events.push(`${name}-`);
      });
    await Promise.all([holder('a'), holder('b'), holder('c')]);
    for (let i = 0; i < events.length; i += 2) expect(events[i]!.slice(0, 1)).toBe(events[i + 1]!.slice(0, 1));
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);

    // A live holder (this very process) on this host: wait, then give up naming it.
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, host: hostname(), token: 'x' }));
    const waited: (number | undefined)[] = [];
    const err = await withStateLock(dir, async () => 'ran', { timeoutMs: 150, onWait: (pid) => waited.push(pid) }).catch((e: unknown) => e);
    expect(isFsError(err, 'FS_IO_ERROR')).toBe(true);
    expect(String((err as Error).message)).toContain(`locked by process ${process.pid}`);
    expect(waited).toEqual([process.pid]);

    // A holder that has exited: its lock is taken over.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: Number(dead.stdout), host: hostname(), token: 'y' }));
    expect(await withStateLock(dir, async () => 'ran', { timeoutMs: 5_000 })).toBe('ran');
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('withStateLock: many takers of one dead holder\'s lock still run one at a time (regression: two could win)', async () => {
    const dir = await tempDir();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    for (let round = 0; round < 6; round++) {
      await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: Number(dead.stdout), host: hostname(), token: `dead${round}` }));
      let active = 0;
      let most = 0;
      // Staggered starts, so that some takers judge the dead lock while others have replaced it.
      const taker = async (_: unknown, i: number) => {
        await new Promise((r) => setTimeout(r, i % 4));
        return withStateLock(
          dir,
          async () => {
            most = Math.max(most, ++active);
            await new Promise((r) => setTimeout(r, 5));
            active--;
          },
          { timeoutMs: 30_000 },
        );
      };
      await Promise.all(Array.from({ length: 10 }, taker));
      expect(most, `round ${round}: holders at once`).toBe(1);
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
      expect((await readdir(dir)).filter((n) => n !== LOCK_FILE), 'nothing left beside the lock').toEqual([]);
    }
  });

  it('colours only terminals, and never with NO_COLOR or TERM=dumb unless forced', () => {
    expect(colorsFor({ isTTY: true }, 'auto', {}).enabled).toBe(true);
    expect(colorsFor({ isTTY: false }, 'auto', {}).enabled).toBe(false);
    expect(colorsFor({ isTTY: true }, 'auto', { NO_COLOR: '1' }).enabled).toBe(false);
    expect(colorsFor({ isTTY: true }, 'auto', { NO_COLOR: '' }).enabled).toBe(true);
    expect(colorsFor({ isTTY: true }, 'auto', { TERM: 'dumb' }).enabled).toBe(false);
    expect(colorsFor({ isTTY: false }, 'always', { NO_COLOR: '1' }).enabled).toBe(true);
    expect(colorsFor({ isTTY: true }, 'never', {}).enabled).toBe(false);
  });
});

describe('dsh-fs demo', () => {
  beforeAll(ensureBuilt, 600_000);

  it('runs the scripted session, exits 0 and removes its temporary directory', { timeout: 120_000 }, async () => {
    const r = await runCli(['demo']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const steps = [...r.stdout.matchAll(/^── (\d+)\. (.*?) ─+$/gm)].map((m) => m[2]);
    expect(steps).toEqual([
      'Read a file',
      'Find files, and search inside them',
      'Create a new file: no read needed',
      'Overwrite a file it never read: refused',
      'Edit after someone else changed the file: refused as stale',
      'Edit a CRLF file with an LF old_string',
      'An ambiguous edit, and its fix',
      'Review: the project directory is untouched; the diff',
      'Commit',
    ]);
    expect(r.stdout).toContain('→ read {"file_path":"src/greet.js"}');
    // Newest first: the two files may share a modification time, so either order is right.
    expect(r.stdout).toMatch(/→ glob \{"pattern":"\*\.js"\}\n← (src\/util\.js\n {2}src\/greet\.js|src\/greet\.js\n {2}src\/util\.js)\n/);
    expect(r.stdout).toContain('← Found 2 matches in 1 file');
    expect(r.stdout).toContain('[FS_NOT_OBSERVED]');
    expect(r.stdout).toContain('[FS_STALE_VERSION]');
    expect(r.stdout).toMatch(/old_string matches 2 times \(at lines 3, 10\).*\[FS_AMBIGUOUS_EDIT\]/);
    expect(r.stdout).toContain('config.ini in the sandbox, as bytes: "[server]\\r\\nhost = 0.0.0.0\\r\\nport = 9090\\r\\n"');
    expect(r.stdout).toContain('diff --git a/src/util.js b/src/util.js');
    expect(r.stdout).toContain('committed config.ini');
    expect(r.stdout).not.toContain('\x1b[');
    const temp = /\(removed (.*)\)\n$/.exec(r.stdout)?.[1];
    expect(temp).toMatch(/dsh-fs-demo-/);
    expect(existsSync(temp!)).toBe(false);
  });
});

describe('containment compares path segments', () => {
  it('--state inside --root is refused in every spelling, also through a symlink', async () => {
    const p = await project({ 'a.txt': 'a\n' });
    const root = await realpath(p.root);
    await symlink(root, join(p.base, 'alias'));
    await symlink(join(root, 'sub'), join(p.base, 'into-sub'));
    const inside = [
      join(p.root, '..state'),
      join(p.root, '..'),
      `${p.root}/`,
      join(p.root, 'x', '..', '..state'),
      join(p.base, 'alias', '..state'),
      join(p.base, 'alias'),
      join(p.base, 'into-sub', 'st'),
    ];
    for (const state of inside.slice(1, 2)) await expect(resolveStateDir(root, state)).resolves.toBe(p.base);
    for (const state of [inside[0]!, ...inside.slice(2)]) {
      await expect(resolveStateDir(root, state), state).rejects.toThrow(/lies inside --root/);
      const r = await run(['status', '--root', p.root, '--state', state], { cwd: p.base });
      expect(r.code, state).toBe(2);
      expect(r.stderr, state).toMatch(/lies inside --root/);
    }
    // Siblings whose names start like the root are outside.
    await expect(resolveStateDir(root, `${root}-state`)).resolves.toBe(`${root}-state`);
    await expect(resolveStateDir(root, `${root}..state`)).resolves.toBe(`${root}..state`);
  });

  it('--state is judged by its real path: a link in --root that leads outside is outside, one that leads inside is not', async () => {
    const p = await project({ 'a.txt': 'a\n', 'sub/b.txt': 'b\n' });
    const root = await realpath(p.root);
    const away = join(await realpath(p.base), 'away');
    await mkdir(away);
    await symlink(away, join(root, 'dir-link'));
    await symlink(join(p.base, 'not-yet'), join(root, 'dangling-out'));
    await symlink(join(root, 'sub'), join(away, 'back'));
    await symlink(join(root, 'sub'), join(root, 'in-link'));
    await symlink('.', join(root, 'self'));
    await symlink(join(root, 'missing'), join(root, 'dangling-in'));
    const outside: Array<[string, string]> = [
      [join(root, 'dir-link', 'st'), join(away, 'st')],
      [join(p.root, 'dir-link', 'deeper', 'st'), join(away, 'deeper', 'st')],
      [join(root, 'dangling-out', 'st'), join(await realpath(p.base), 'not-yet', 'st')],
    ];
    for (const [state, real] of outside) {
      await expect(resolveStateDir(root, state), state).resolves.toBe(real);
      const r = await run(['status', '--root', p.root, '--state', state], { cwd: p.base });
      expect(r.stderr, state).toBe('');
      expect(r.code, state).toBe(0);
    }
    const inside = [join(root, 'in-link', 'st'), join(root, 'dir-link', 'back', 'st'), join(root, 'self', 'st'), join(root, 'dangling-in', 'st'), join(root, 'sub')];
    for (const state of inside) {
      await expect(resolveStateDir(root, state), state).rejects.toThrow(/lies inside --root/);
      const r = await run(['status', '--root', p.root, '--state', state], { cwd: p.base });
      expect(r.code, state).toBe(2);
      expect(r.stderr, state).toMatch(/lies inside --root/);
    }
    // Nothing was created inside the root on the way.
    expect((await readdir(root)).sort()).toEqual(['a.txt', 'dangling-in', 'dangling-out', 'dir-link', 'in-link', 'self', 'sub']);
    expect(await readdir(join(root, 'sub'))).toEqual(['b.txt']);
  });

  it('a name starting with ".." is inside the root for every command, and the diff header is root-relative', async () => {
    const p = await project({ '..foo': 'one\n', 'src/..bar/x.txt': 'x\n' });
    const root = await realpath(p.root);
    const overlay = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: p.state });
    await overlay.writeText(await overlay.resolve('..foo'), 'two\n');
    await overlay.writeText(await overlay.resolve('src/..bar/x.txt'), 'y\n');
    const args = ['--root', p.root, '--state', p.state];
    expect(rootRelative('..foo', root, root, root, 'status')).toBe('..foo');
    expect(rootRelative('..foo', root, root, p.base, 'status')).toBe('..foo');
    expect(rootRelative(join(root, '..foo'), root, root, '/', 'status')).toBe('..foo');
    expect(() => rootRelative('../foo', root, root, root, 'status')).toThrow(/is outside --root/);
    expect(await run(['status', ...args])).toEqual({ code: 0, stdout: 'M ..foo\nM src/..bar/x.txt\n', stderr: '' });
    expect(await run(['status', ...args, '..foo'], { cwd: root })).toEqual({ code: 0, stdout: 'M ..foo\n', stderr: '' });
    const diff = await run(['diff', ...args, '--color', 'never', '..foo'], { cwd: root });
    expect(diff.code).toBe(0);
    expect(diff.stdout).toMatch(/^diff --git a\/\.\.foo b\/\.\.foo\n/);
    expect(diff.stdout).toContain('--- a/..foo\n+++ b/..foo\n');
    expect(diff.stdout).not.toContain(root);
    const all = await run(['diff', ...args, '--color', 'never']);
    expect(all.stdout).toContain('diff --git a/src/..bar/x.txt b/src/..bar/x.txt\n');
    const committed = await run(['commit', ...args, '..foo'], { cwd: root });
    expect(committed.code, committed.stderr).toBe(0);
    expect(committed.stdout).toContain('  M ..foo\n');
    expect(await readFile(join(root, '..foo'), 'utf8')).toBe('two\n');
    expect(await run(['discard', ...args, 'src/..bar'], { cwd: root })).toMatchObject({ code: 0, stdout: 'Discarded 1 change.\n' });
  });
});

describe('temp files left by a commit that was killed', () => {
  /** A lock as a process killed mid-commit leaves it: naming a pid that no longer exists. */
  async function deadLock(state: string): Promise<number> {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const pid = Number(child.stdout);
    await writeFile(join(state, LOCK_FILE), `${JSON.stringify({ pid, host: hostname(), token: 'dead' })}\n`);
    return pid;
  }
  const TEMP = '.app.ts.0123456789abcdef0123456789abcdef.dsh-tmp';

  it('status sweeps them (and reports them on stderr and in --json); a live holder is left alone', async () => {
    const p = await sandboxWithChanges();
    const args = ['--root', p.root, '--state', p.state];
    await writeFile(join(p.root, 'src', TEMP), 'half a commit');
    await writeFile(join(p.root, 'keep.dsh-tmp'), 'not ours');
    // A live holder (this process): nothing is swept.
    await writeFile(join(p.state, LOCK_FILE), `${JSON.stringify({ pid: process.pid, host: hostname(), token: 'live' })}\n`);
    expect(JSON.parse((await run(['status', ...args, '--json'])).stdout).removedTempFiles).toEqual([]);
    expect(existsSync(join(p.root, 'src', TEMP))).toBe(true);
    const pid = await deadLock(p.state);
    const r = await run(['status', ...args, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ removedTempFiles: [`src/${TEMP}`] });
    expect(r.stderr).toBe(`dsh-fs: removed 1 temp file left in ${await realpath(p.root)} by process ${pid}, which was stopped while it held the sandbox's lock: src/${TEMP}\n`);
    expect(existsSync(join(p.root, 'src', TEMP))).toBe(false);
    expect(existsSync(join(p.root, 'keep.dsh-tmp'))).toBe(true);
    expect(existsSync(join(p.state, LOCK_FILE))).toBe(false);
    // Nothing left to report the next time.
    expect(await run(['status', ...args])).toEqual({ code: 0, stdout: 'M src/app.ts\nA src/new.ts\nD src/old.ts\n', stderr: '' });
  });

  it('a resumed commit sweeps them before committing', async () => {
    const p = await sandboxWithChanges();
    const args = ['--root', p.root, '--state', p.state];
    await writeFile(join(p.root, 'src', TEMP), 'half a commit');
    await deadLock(p.state);
    const r = await run(['commit', ...args]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^dsh-fs: removed 1 temp file left in .* by process \d+, which was stopped while it held the sandbox's lock: src\/\.app\.ts\.0123456789abcdef0123456789abcdef\.dsh-tmp\n/);
    expect(await readdir(join(p.root, 'src'))).toEqual(['app.ts', 'new.ts']);
  });
});
