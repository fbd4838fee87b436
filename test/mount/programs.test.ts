import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryFs, type MemoryFileSystem } from '../../src/backends/memory/index.js';
import { mountFs, type Mount } from '../../src/mount/index.js';
import { cleanUp, fuseUnavailable, hasCommand, sh } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);
const hasGit = await hasCommand('git');
const hasPython = await hasCommand('python3');

describe.skipIf(why !== undefined)('programs on a mounted memory filesystem', () => {
  let dir: string;
  let scratch: string;
  let fs: MemoryFileSystem;
  let mount: Mount;
  const bytes = async (path: string) => Buffer.from((await fs.readBytes(await fs.resolve(path), { maxBytes: 1 << 24 })).bytes);
  const text = async (path: string) => (await bytes(path)).toString();
  const type = async (path: string) => (await fs.stat(await fs.resolve(path)))?.type;
  const inMount = (script: string, env?: NodeJS.ProcessEnv) => sh(`cd "${dir}" && ${script}`, env);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-'));
    scratch = await mkdtemp(join(tmpdir(), 'dsh-fs-mount-scratch-'));
    fs = createMemoryFs({
      files: {
        '/a.txt': 'hello\n',
        '/d/b.txt': 'bee\n',
        '/d/e/c.bin': new Uint8Array([0, 1, 2, 255]),
        '/crlf.txt': 'one\r\nfoo\r\nthree\r\n',
      },
    });
    mount = await mountFs(fs, dir);
  });
  afterAll(async () => {
    await cleanUp(mount, dir);
    await rm(scratch, { recursive: true, force: true });
  });

  it('ls shows the entries with their types and stable inode numbers; cat reads them', async () => {
    const r = await inMount('ls -p; stat -c "%i %F %s" a.txt; stat -c "%i" a.txt; cat a.txt d/b.txt');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual(['a.txt', 'crlf.txt', 'd/']);
    const [ino, ...kind] = lines[3]!.split(' ');
    expect(kind.join(' ')).toBe('regular file 6');
    expect(lines[4]).toBe(ino);
    expect(lines.slice(5, 7)).toEqual(['hello', 'bee']);
  });

  it('echo > f creates and replaces; >> appends', async () => {
    const r = await inMount('echo first > new.txt && echo second >> new.txt && echo again > a2.txt && echo over > a2.txt');
    expect(r.code, r.stderr).toBe(0);
    expect(await text('/new.txt')).toBe('first\nsecond\n');
    expect(await text('/a2.txt')).toBe('over\n');
  });

  it('mkdir -p, mv and rm -r act on the contract', async () => {
    const r = await inMount('mkdir -p m/n/o && echo x > m/n/o/f && mv m/n/o m/p && mv a2.txt m/moved.txt && mkdir m && echo no');
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/File exists/);
    expect(await type('/m/n')).toBe('directory');
    expect(await type('/m/n/o')).toBeUndefined();
    expect(await text('/m/p/f')).toBe('x\n');
    expect(await text('/m/moved.txt')).toBe('over\n');
    expect(await type('/a2.txt')).toBeUndefined();
    const rm = await inMount('rm -r m && ls');
    expect(rm.code, rm.stderr).toBe(0);
    expect(await type('/m')).toBeUndefined();
    expect(rm.stdout.split('\n')).not.toContain('m');
  });

  it('truncate(1) shortens a file nobody has open, and extends it with zeros', async () => {
    const r = await inMount('echo 0123456789 > t.txt && truncate -s 4 t.txt && cat t.txt && echo && truncate -s 6 t.txt');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('0123\n');
    expect([...(await bytes('/t.txt'))]).toEqual([...Buffer.from('0123'), 0, 0]);
  });

  it('a change made through the contract shows at once (no kernel caching of names or attributes)', async () => {
    const first = await inMount('cat seen.txt 2>/dev/null; stat -c %s a.txt');
    expect(first.stdout).toBe('6\n');
    await fs.writeBytes(await fs.resolve('/seen.txt'), Buffer.from('fresh\n'));
    await fs.writeBytes(await fs.resolve('/a.txt'), Buffer.from('hello, longer\n'));
    const second = await inMount('cat seen.txt; stat -c %s a.txt; cat a.txt');
    expect(second.stdout).toBe('fresh\n14\nhello, longer\n');
    await fs.writeBytes(await fs.resolve('/a.txt'), Buffer.from('hello\n'));
  });

  it('sed -i on a CRLF file changes only the matched line, byte for byte', async () => {
    const r = await inMount('sed -i s/foo/bar/ crlf.txt');
    expect(r.code, r.stderr).toBe(0);
    expect((await bytes('/crlf.txt')).toString('latin1')).toBe('one\r\nbar\r\nthree\r\n');
  });

  it('tar c then tar x round-trips a tree with binary content', async () => {
    const archive = join(scratch, 'd.tar');
    const r = await inMount(`tar cf "${archive}" d && mkdir copy && tar xf "${archive}" -C copy && cmp d/e/c.bin copy/d/e/c.bin`);
    expect(r.code, r.stderr).toBe(0);
    expect([...(await bytes('/copy/d/e/c.bin'))]).toEqual([0, 1, 2, 255]);
    expect(await text('/copy/d/b.txt')).toBe('bee\n');
  });

  it('a node program writes in pieces, renames and deletes', async () => {
    const script = [
      "const fs = require('fs');",
      "const fd = fs.openSync('w.txt', 'w');",
      "for (let i = 0; i < 100; i++) fs.writeSync(fd, 'line ' + i + '\\n');",
      'fs.closeSync(fd);',
      "fs.renameSync('w.txt', 'renamed.txt');",
      "fs.writeFileSync('gone.txt', 'x');",
      "fs.unlinkSync('gone.txt');",
      "fs.appendFileSync('renamed.txt', 'end\\n');",
      "console.log(fs.readFileSync('renamed.txt', 'utf8').length);",
    ].join('\n');
    const r = await inMount(`node -e "$SCRIPT"`, { SCRIPT: script });
    expect(r.code, r.stderr).toBe(0);
    const expected = Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join('') + 'end\n';
    expect(r.stdout.trim()).toBe(String(expected.length));
    expect(await text('/renamed.txt')).toBe(expected);
    expect(await type('/w.txt')).toBeUndefined();
    expect(await type('/gone.txt')).toBeUndefined();
  });

  it.skipIf(!hasGit)('git init, add and commit', async () => {
    const env = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', GIT_CONFIG_NOSYSTEM: '1', HOME: scratch };
    const r = await inMount('mkdir repo && cd repo && echo content > f.txt && git init -q && git add -A && git commit -qm first && git log --format=%s && git status --porcelain', env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('first\n');
    expect(await type('/repo/.git/HEAD')).toBe('file');
    expect(await text('/repo/.git/HEAD')).toMatch(/^ref: refs\/heads\//);
    const fsck = await inMount('cd repo && git fsck --strict 2>&1 && git cat-file -p HEAD:f.txt', env);
    expect(fsck.code, fsck.stdout).toBe(0);
    expect(fsck.stdout).toContain('content');
  });

  it('refuses what the contract cannot hold, and records nothing', async () => {
    const r = await inMount('chmod 600 a.txt; chmod 644 a.txt && echo same-mode-ok; chmod 700 d; ln a.txt h; mkfifo ff; chown 1234 a.txt; true');
    expect(r.stdout).toBe('same-mode-ok\n');
    for (const what of [/chmod: changing permissions of 'a\.txt': Operation not permitted/, /chmod: changing permissions of 'd': Operation not permitted/, /hard link 'h'.*Operation not permitted/, /fifo 'ff': Operation not permitted/, /chown: changing ownership of 'a\.txt': Operation not permitted/]) {
      expect(r.stderr).toMatch(what);
    }
    for (const name of ['/h', '/ff']) expect(await type(name)).toBeUndefined();
    const x = await inMount('test -x a.txt && echo executable || echo not-executable; stat -c %a a.txt');
    expect(x.stdout).toBe('not-executable\n644\n');
  });

  it('chmod +x makes a script runnable and is recorded; chmod -x clears it', async () => {
    const r = await inMount('printf "#!/bin/sh\\necho ran\\n" > script.sh && chmod +x script.sh && ./script.sh && stat -c %a script.sh && test -x script.sh && echo x');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('ran\n755\nx\n');
    expect((await fs.stat(await fs.resolve('/script.sh')))?.executable).toBe(true);
    const again = await inMount('echo "echo ran again" >> script.sh && ./script.sh && chmod -x script.sh && stat -c %a script.sh && (./script.sh || echo refused)');
    expect(again.stdout).toBe('ran\nran again\n644\nrefused\n');
    expect((await fs.stat(await fs.resolve('/script.sh')))?.executable).toBe(false);
  });

  it('ln -s makes a link readlink and ls show, reads follow it, and the contract holds its text', async () => {
    const r = await inMount('ln -s a.txt link.txt && readlink link.txt && cat link.txt && test -L link.txt && echo is-link && ln -s missing dangling && readlink dangling && stat -c %F link.txt');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('a.txt\nhello\nis-link\nmissing\nsymbolic link\n');
    expect(await fs.readlink!(await fs.resolve('/link.txt', { noFollow: true }))).toBe('a.txt');
    const plain = await inMount('readlink a.txt || echo no-link');
    expect(plain.stdout).toBe('no-link\n');
  });

  it('rm and mv act on a link itself: what it leads to stays', async () => {
    const own = async (path: string) => fs.resolve(path, { noFollow: true });
    const r = await inMount(
      [
        'mkdir lk && cd lk && echo target > t.txt && ln -s t.txt l1 && ln -s t.txt l2 && ln -s missing l3',
        'rm l1 && (test -e l1 || test -L l1 || echo l1-gone)',
        'mv l2 moved && readlink moved && cat moved',
        'echo plain > f.txt && mv moved f.txt && readlink f.txt',
        'echo over > o.txt && mv o.txt l3 && (test -L l3 || cat l3)',
        'ls && cat t.txt',
      ].join(' && '),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('l1-gone\nt.txt\ntarget\nt.txt\nover\nf.txt\nl3\nt.txt\ntarget\n');
    expect(await fs.readlink!(await own('/lk/f.txt'))).toBe('t.txt');
    expect(await text('/lk/t.txt')).toBe('target\n');
    expect(await text('/lk/l3')).toBe('over\n');
    expect(await type('/lk/missing')).toBeUndefined();
  });

  it.skipIf(!hasGit)('git records an executable file as mode 100755', async () => {
    const env = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', GIT_CONFIG_NOSYSTEM: '1', HOME: scratch };
    const r = await inMount('mkdir xrepo && cd xrepo && echo "echo hi" > run.sh && echo data > plain.txt && chmod +x run.sh && git init -q && git add -A && git ls-files -s', env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^100644 \w+ 0\tplain\.txt\n100755 \w+ 0\trun\.sh\n$/);
  });

  it.skipIf(!hasPython)('extended attributes are not supported (ENOTSUP)', async () => {
    const script = "import os, errno\nfor f in (lambda: os.setxattr('a.txt', 'user.k', b'v'), lambda: os.getxattr('a.txt', 'user.k')):\n  try:\n    f(); print('ok')\n  except OSError as e:\n    print(errno.errorcode[e.errno])";
    const r = await inMount(`python3 -c "$SCRIPT"`, { SCRIPT: script });
    // One number on Linux, which Python names ENOTSUP.
    expect(r.stdout, r.stderr).toMatch(/^(ENOTSUP|EOPNOTSUPP)\n(ENOTSUP|EOPNOTSUPP)\n$/);
  });

  it('a file removed while open stays readable and writable through its descriptor, and is not published', async () => {
    const script = [
      "const fs = require('fs');",
      "const fd = fs.openSync('tmp.txt', 'w+');",
      "fs.unlinkSync('tmp.txt');",
      "fs.writeSync(fd, 'scratch');",
      "const b = Buffer.alloc(7); fs.readSync(fd, b, 0, 7, 0);",
      'fs.closeSync(fd);',
      'console.log(b.toString());',
    ].join('\n');
    const r = await inMount(`node -e "$SCRIPT" && ls -A`, { SCRIPT: script });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('scratch');
    expect(r.stdout).not.toMatch(/tmp\.txt|fuse_hidden/);
    expect(await type('/tmp.txt')).toBeUndefined();
  });
});
