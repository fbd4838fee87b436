import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readIndex, sameStagedEntries, tryReadIndex } from '../../src/git/staged-entries.js';
import { GIT_ENV, hasGit } from '../support/git.js';

/*
 * Indexes that real git wrote: versions 2, 3 (intent-to-add sets the extended flags) and 4 (path
 * prefix compression), with the TREE, UNTR and link extensions, SHA-1 and SHA-256. Each is read
 * against `git ls-files --stage`, and a refresh that only rewrote stat data is no change.
 */


const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const ENV = GIT_ENV;

function repo(init: string[] = []): { dir: string; git: (...args: string[]) => string; index: () => Uint8Array } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-fs-index-'));
  dirs.push(dir);
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { env: ENV, encoding: 'utf8' });
  git('init', '-q', ...init);
  const files: Record<string, string> = { 'a.txt': 'a\n', 'src/b.ts': 'b\n', 'src/deep/c.ts': 'c\n', 'src/deep/d.ts': 'd\n', 'zz.md': 'z\n' };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  git('add', '-A');
  git('commit', '-q', '-m', 'one');
  return { dir, git, index: () => new Uint8Array(readFileSync(join(dir, '.git/index'))) };
}

/** `git ls-files --stage` as entries. */
function lsFiles(git: (...args: string[]) => string) {
  return git('ls-files', '--stage', '-z')
    .split('\0')
    .filter((l) => l !== '')
    .map((line) => {
      const [meta, path] = line.split('\t') as [string, string];
      const [mode, oid, stage] = meta.split(' ') as [string, string, string];
      return { mode: parseInt(mode, 8), oid, stage: Number(stage), path };
    });
}

/** Makes git rewrite the index with new stat data only: every file's mtime moves, then `git status` refreshes. */
function refresh(r: ReturnType<typeof repo>): void {
  const t = Date.now() / 1000 + 1000;
  for (const rel of ['a.txt', 'src/b.ts', 'src/deep/c.ts', 'src/deep/d.ts', 'zz.md']) utimesSync(join(r.dir, rel), t, t);
  r.git('status', '--porcelain');
}

describe.skipIf(!hasGit)('sameStagedEntries over indexes real git wrote (git on the PATH)', () => {
  // Name, preparation, the version and an extension the index then has, and `git init` options.
  const cases: [string, (r: ReturnType<typeof repo>) => void, number, string, string[]?][] = [
    ['version 2 with the cache tree (TREE)', () => undefined, 2, 'TREE'],
    ['version 3 (an intent-to-add entry sets the extended flags)', (r) => {
      writeFileSync(join(r.dir, 'new.txt'), 'n\n');
      r.git('add', '-N', 'new.txt');
    }, 3, 'TREE'],
    ['version 4 (path prefix compression)', (r) => r.git('update-index', '--index-version', '4'), 4, 'TREE'],
    ['the untracked cache (UNTR)', (r) => {
      r.git('update-index', '--untracked-cache');
      r.git('status', '--porcelain');
    }, 2, 'UNTR'],
    // maxPercentChange 100: a refresh keeps the shared index (its link), whatever share of the
    // entries git finds racily clean; otherwise git may write a new shared index, a new link.
    ['a split index (link)', (r) => {
      r.git('config', 'splitIndex.maxPercentChange', '100');
      r.git('update-index', '--split-index');
    }, 2, 'link'],
    ['SHA-256 object ids', () => undefined, 2, 'TREE', ['--object-format=sha256']],
  ];

  it.each(cases)('%s: reads what ls-files --stage lists; a refresh is no change, a git add is', (_, prepare, version, extension, init) => {
    const r = repo(init);
    prepare(r);
    const before = r.index();
    const read = readIndex(before);
    expect(read.version).toBe(version);
    expect(Buffer.from(before).includes(extension)).toBe(true);
    if (read.link === undefined) expect(read.entries).toEqual(lsFiles(r.git));
    refresh(r);
    const refreshed = r.index();
    expect(Buffer.compare(Buffer.from(before), Buffer.from(refreshed))).not.toBe(0);
    expect(sameStagedEntries(before, refreshed)).toBe(true);
    writeFileSync(join(r.dir, 'src/deep/c.ts'), 'changed\n');
    r.git('add', 'src/deep/c.ts');
    expect(sameStagedEntries(before, r.index())).toBe(false);
  });

  it('a mode change, a removal and an added file are changes; the same entries in another version are not', () => {
    const r = repo();
    const before = r.index();
    r.git('update-index', '--chmod=+x', 'a.txt');
    expect(sameStagedEntries(before, r.index())).toBe(false);
    r.git('update-index', '--chmod=-x', 'a.txt');
    expect(sameStagedEntries(before, r.index())).toBe(true);
    r.git('update-index', '--index-version', '4');
    expect(readIndex(r.index()).version).toBe(4);
    expect(sameStagedEntries(before, r.index())).toBe(true);
    r.git('rm', '-q', '--cached', 'zz.md');
    expect(sameStagedEntries(before, r.index())).toBe(false);
  });

  it('conflict stages are read as ls-files --stage lists them', () => {
    const r = repo();
    r.git('checkout', '-q', '-b', 'other');
    writeFileSync(join(r.dir, 'a.txt'), 'other\n');
    r.git('commit', '-q', '-am', 'other');
    r.git('checkout', '-q', '-');
    writeFileSync(join(r.dir, 'a.txt'), 'main\n');
    r.git('commit', '-q', '-am', 'main');
    try {
      r.git('merge', '-q', 'other');
    } catch {
      // the conflict is the point
    }
    const entries = readIndex(r.index()).entries;
    expect(entries.filter((e) => e.path === 'a.txt').map((e) => e.stage)).toEqual([1, 2, 3]);
    expect(entries).toEqual(lsFiles(r.git));
  });
});

describe('sameStagedEntries on bytes that are not an index', () => {
  it('is never true, and tryReadIndex answers undefined', () => {
    const junk = new TextEncoder().encode('DIRC not an index at all, just text that is long enough');
    expect(tryReadIndex(junk)).toBeUndefined();
    expect(sameStagedEntries(junk, junk)).toBe(false);
    expect(sameStagedEntries(new Uint8Array(0), new Uint8Array(0))).toBe(false);
  });
});
