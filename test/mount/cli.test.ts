import { lstat, mkdir, readFile, readlink, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { mountFs } from '../../src/mount/index.js';
import { ensureBuilt, project, removeTemps, runCli } from '../cli/helpers.js';
import { fingerprint, forceUnmount, fuseUnavailable, hasCommand, isMounted, sh, startMount } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);
const hasGit = await hasCommand('git');
const hasBwrap = await hasCommand('bwrap');

/** Every directory, then every file with its digest, below the cwd: what a program saw, or the directory after commit. */
const MANIFEST = `find . -mindepth 1 -type d | LC_ALL=C sort; find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2`;

const GIT_ENV = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', GIT_CONFIG_NOSYSTEM: '1' };

describe.skipIf(why !== undefined)('dsh-fs mount and run', () => {
  beforeAll(async () => {
    await ensureBuilt();
  });
  afterAll(() => removeTemps());

  /**
   * Runs `script` through `dsh-fs run` on a fixture project, then checks: the directory is byte for
   * byte as before, status lists `changes` exactly, and commit makes the directory what the
   * program saw at its end (MANIFEST printed inside the mount).
   */
  async function throughRun(script: string, changes: string | ((seen: string) => string), env: NodeJS.ProcessEnv = {}, commitArgs: readonly string[] = []): Promise<string> {
    const p = await project({ 'crlf.txt': 'alpha\r\nbeta\r\ngamma\r\n', 'src/a.js': 'console.log(1);\n', 'src/b.txt': 'b\n', 'keep.txt': 'keep\n' });
    const all = { ...env, XDG_STATE_HOME: join(p.base, 'xdg'), HOME: p.base };
    const before = await fingerprint(p.root);
    const r = await runCli(['run', '--root', p.root, '--', 'sh', '-c', `${script} && echo --- && ${MANIFEST}`], { env: all });
    expect(r.code, r.stderr).toBe(0);
    expect(await fingerprint(p.root)).toEqual(before);
    const seen = r.stdout.slice(r.stdout.indexOf('---\n') + 4);
    const status = await runCli(['status', '--root', p.root], { env: all });
    // A computed list is compared as a set: its order is the test's, not status's.
    const listed = typeof changes === 'string' ? status.stdout : `${status.stdout.trim().split('\n').sort().join('\n')}\n`;
    expect(listed, status.stderr).toBe(typeof changes === 'string' ? changes : changes(seen));
    const commit = await runCli(['commit', '--root', p.root, ...commitArgs], { env: all });
    expect(commit.code, commit.stderr).toBe(0);
    expect((await sh(`cd "${p.root}" && ${MANIFEST}`)).stdout).toBe(seen);
    return p.root;
  }

  it('run sed -i on a CRLF file: only the matched line changes, the others byte for byte', async () => {
    const root = await throughRun('sed -i s/beta/BETA/ crlf.txt', 'M crlf.txt\n');
    expect(await readFile(join(root, 'crlf.txt'), 'latin1')).toBe('alpha\r\nBETA\r\ngamma\r\n');
  });

  it('run tar c | tar x: a copy of a tree', async () => {
    const root = await throughRun('mkdir copy && tar cf - src crlf.txt | tar xf - -C copy', 'A copy/crlf.txt\nA copy/src/a.js\nA copy/src/b.txt\n');
    expect(await readFile(join(root, 'copy/crlf.txt'), 'latin1')).toBe('alpha\r\nbeta\r\ngamma\r\n');
  });

  it('run node: a script writes in pieces, renames and deletes', async () => {
    const js = `const fs = require('fs'); fs.mkdirSync('out'); const fd = fs.openSync('out/n.txt', 'w'); for (let i = 0; i < 100; i++) fs.writeSync(fd, i + ' '); fs.closeSync(fd); fs.renameSync('src/a.js', 'src/moved.js'); fs.unlinkSync('keep.txt');`;
    const root = await throughRun(`node -e "${js}"`, 'D keep.txt\nA out/n.txt\nR src/a.js -> src/moved.js\n');
    expect(await readFile(join(root, 'out/n.txt'), 'utf8')).toBe(Array.from({ length: 100 }, (_, i) => `${i} `).join(''));
  });

  it('run ln -s, mv and rm of links: status and diff show the links, commit makes them real links', async () => {
    const root = await throughRun(
      'ln -s keep.txt link && ln -s b.txt tmp && mv tmp src/b-link && ln -s x gone && rm gone && cat src/b-link',
      'A link -> keep.txt\nA src/b-link -> b.txt\n',
    );
    expect(await readlink(join(root, 'link'))).toBe('keep.txt');
    expect(await readlink(join(root, 'src/b-link'))).toBe('b.txt');
    expect(await readFile(join(root, 'keep.txt'), 'utf8')).toBe('keep\n');
    await expect(lstat(join(root, 'tmp'))).rejects.toThrow();
  });

  it('status and diff of a link removed and one moved in the sandbox, before commit', async () => {
    const p = await project({ 'f.txt': 'f\n' });
    await symlink('f.txt', join(p.root, 'old'));
    const env = { XDG_STATE_HOME: join(p.base, 'xdg'), HOME: p.base };
    const r = await runCli(['run', '--root', p.root, '--', 'sh', '-c', 'mv old new && readlink new'], { env });
    expect(r.stdout, r.stderr).toBe('f.txt\n');
    expect((await runCli(['status', '--root', p.root], { env })).stdout).toBe('A new -> f.txt\nD old\n');
    const diff = (await runCli(['diff', '--root', p.root, '--color', 'never'], { env })).stdout;
    expect(diff).toContain('diff --git a/new b/new\nnew file mode 120000\n');
    expect(diff).toContain('diff --git a/old b/old\ndeleted file mode 120000\n');
    expect(await readlink(join(p.root, 'old'))).toBe('f.txt');
  });

  it('run mkdir -p: nested directories, empty ones listed as such', async () => {
    const root = await throughRun('mkdir -p deep/er/est src/new/dir && echo f > deep/er/f.txt', 'A deep/er/est/\nA deep/er/f.txt\nA src/new/dir/\n');
    expect(await readFile(join(root, 'deep/er/f.txt'), 'utf8')).toBe('f\n');
    expect((await stat(join(root, 'src/new/dir'))).isDirectory()).toBe(true);
    expect((await stat(join(root, 'deep/er/est'))).isDirectory()).toBe(true);
  });

  it.skipIf(!hasGit)('run git init, add, commit, then sed: status lists the sed and counts everything git made in one .git/ line; commit --include-ignored brings all of it', async () => {
    // What status must say: the sed, and one counted line for git's own files and the directories it left empty.
    const fromGit = (seen: string) => {
      const files = seen.split('\n').flatMap((l) => (/^[0-9a-f]{64} {2}\.\/(\.git\/.*)$/.exec(l) ?? []).slice(1));
      const dirs = seen.split('\n').flatMap((l) => (/^\.\/(\.git\/.*)$/.exec(l) ?? []).slice(1));
      const empty = dirs.filter((d) => ![...files, ...dirs].some((x) => x.startsWith(`${d}/`)));
      const lines = [
        'M crlf.txt',
        `! .git/ (${files.length + empty.length} files, git's own)`,
        'Ignored outputs and git\'s files are counted, not listed; "dsh-fs commit --include-ignored" commits them.',
      ];
      return `${lines.sort().join('\n')}\n`;
    };
    const root = await throughRun('git init -q && git add -A && git commit -qm x && sed -i s/beta/BETA/ crlf.txt', fromGit, GIT_ENV, ['--include-ignored']);
    const log = await sh(`cd "${root}" && git log --format=%s && git status --porcelain && git fsck --no-progress`, GIT_ENV);
    // The commit x, and the sed made after it: a change git sees in the working tree.
    expect(log.stdout, log.stderr).toBe('x\n M crlf.txt\n');
  });

  it('run exits with the command’s status and leaves no mount', async () => {
    const p = await project({ 'f.txt': 'x\n' });
    const env = { XDG_STATE_HOME: join(p.base, 'xdg') };
    const r = await runCli(['run', '--root', p.root, '--', 'sh', '-c', 'cat f.txt; pwd; exit 7'], { env });
    expect(r.code, r.stderr).toBe(7);
    const [content, where] = r.stdout.split('\n');
    expect(content).toBe('x');
    expect(await isMounted(where!)).toBe(false);
    const usage = await runCli(['run', '--root', p.root], { env });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/give the command to run after --/);
  });

  it('run --read-only and --mode direct: on the FUSE mount, said once on stderr', async () => {
    const p = await project({ 'f.txt': 'x\n' });
    const env = { XDG_STATE_HOME: join(p.base, 'xdg') };
    const ro = await runCli(['run', '--root', p.root, '--read-only', '--', 'sh', '-c', 'cat f.txt; echo y > f.txt || echo refused'], { env });
    expect(ro.stdout).toBe('x\nrefused\n');
    expect(ro.stderr.match(/running on the FUSE mount/g)).toEqual(['running on the FUSE mount']);
    expect(ro.stderr).toMatch(/^dsh-fs: run: --read-only is served by the FUSE mount: running on the FUSE mount\n/);
    const direct = await runCli(['run', '--root', p.root, '--mode', 'direct', '--', 'true'], { env });
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.stderr).toBe('dsh-fs: run: --mode direct writes the folder itself: running on the FUSE mount\n');
  });

  it('run --cache: a number of seconds, and a caching mount works like any other', async () => {
    const p = await project({ 'f.txt': 'x\n' });
    const env = { XDG_STATE_HOME: join(p.base, 'xdg') };
    const bad = await runCli(['run', '--root', p.root, '--cache', 'soon', '--', 'true'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--cache takes a number of seconds from 0 to 3600, got "soon"/);
    const r = await runCli(['run', '--root', p.root, '--cache', '5', '--', 'sh', '-c', 'echo y >> f.txt; cat f.txt; stat -c %s f.txt'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('x\ny\n4\n');
  });

  it.skipIf(!hasBwrap)('run --jail: the command writes only the sandbox and its private /tmp', async () => {
    const p = await project({ 'f.txt': 'x\n' });
    const env = { XDG_STATE_HOME: join(p.base, 'xdg') };
    const before = await fingerprint(p.root);
    // The project's own path is the sandbox there (overlayfs); the rest of the host is read-only,
    // and /tmp (where the project lies here) is the jail's own.
    const script = `echo changed > f.txt; echo t > /tmp/t && cat /tmp/t; echo escape > /etc/dsh-fs-jail-probe || echo refused; echo escape > "${p.base}/out.txt"`;
    const r = await runCli(['run', '--root', p.root, '--jail', '--no-network', '--', 'sh', '-c', script], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('t\nrefused\n');
    expect(r.stderr).toMatch(/cannot create/);
    await expect(stat('/etc/dsh-fs-jail-probe')).rejects.toThrow();
    expect(await fingerprint(p.root)).toEqual(before);
    await expect(stat(join(p.base, 'out.txt'))).rejects.toThrow();
    const status = await runCli(['status', '--root', p.root], { env });
    expect(status.stdout).toBe('M f.txt\n');
  });

  it('run --fork: the run lands in a new fork; the sandbox it was forked from is left as it was', async () => {
    const p = await project({ 'f.txt': 'x\n' });
    const env = { XDG_STATE_HOME: join(p.base, 'xdg') };
    const into = join(p.base, 'attempt');
    const r = await runCli(['run', '--root', p.root, '--fork', into, '--', 'sh', '-c', 'echo forked > f.txt'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`running in a fork of the sandbox, kept in ${into}`);
    expect((await runCli(['status', '--root', p.root], { env })).stdout).toBe('No changes.\n');
    expect((await runCli(['status', '--root', p.root, '--state', into], { env })).stdout).toBe('M f.txt\n');
    const diff = await runCli(['diff', '--root', p.root, '--state', into, '--against-parent', '--color', 'never'], { env });
    expect(diff.stdout).toContain('-x\n+forked\n');
    expect(await readFile(join(p.root, 'f.txt'), 'utf8')).toBe('x\n');
  });

  it('mount serves until SIGTERM, then exits 0 with nothing left in /proc/mounts', async () => {
    const p = await project({ 'f.txt': 'served\n' });
    const where = join(p.base, 'mnt');
    await mkdir(where);
    const m = startMount(['--root', p.root, where], { XDG_STATE_HOME: join(p.base, 'xdg') });
    try {
      await m.ready;
      expect(await isMounted(where)).toBe(true);
      const r = await sh(`cat "${where}/f.txt" && echo more > "${where}/g.txt"`);
      expect(r.stdout, r.stderr).toBe('served\n');
      // The review commands get the sandbox between bursts of calls.
      const status = await runCli(['status', '--root', p.root], { env: { XDG_STATE_HOME: join(p.base, 'xdg') } });
      expect(status.stdout, status.stderr).toBe('A g.txt\n');
      m.child.kill('SIGTERM');
      expect(await m.exited).toBe(0);
      expect(await isMounted(where)).toBe(false);
      expect(m.stderr()).toMatch(/unmounted .* \(SIGTERM\)/);
      await expect(stat(join(p.root, 'g.txt'))).rejects.toThrow();
    } finally {
      m.child.kill('SIGKILL');
      await forceUnmount(where);
    }
  });

  it('a mount left by a killed server is cleared by the next mountFs, which says so', async () => {
    const p = await project({ 'f.txt': 'x\n' });
    const where = join(p.base, 'mnt');
    await mkdir(where);
    const m = startMount(['--root', p.root, where], { XDG_STATE_HOME: join(p.base, 'xdg') });
    try {
      await m.ready;
      m.child.kill('SIGKILL');
      await m.exited;
      await expect(stat(where)).rejects.toMatchObject({ code: 'ENOTCONN' });
      const warnings: string[] = [];
      const mount = await mountFs(createMemoryFs({ files: { '/new.txt': 'fresh\n' } }), where, { onWarning: (w) => warnings.push(w) });
      try {
        expect(mount.notes).toEqual(warnings);
        expect(warnings[0]).toMatch(/stale mount .* fusermount -uz/);
        const r = await sh(`cat "${where}/new.txt"`);
        expect(r.stdout).toBe('fresh\n');
      } finally {
        await mount.unmount();
      }
      expect(await isMounted(where)).toBe(false);
    } finally {
      m.child.kill('SIGKILL');
      await forceUnmount(where);
    }
  });
});
