import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { shellWord } from '../../src/cli/advice.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { project, removeTemps } from './helpers.js';

afterAll(removeTemps);

async function run(argv: readonly string[], cwd: string) {
  let stdout = '';
  let stderr = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const io: Io = { stdout: stream((s) => (stdout += s)), stderr: stream((s) => (stderr += s)), env: {}, cwd };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

/** A line of POSIX shell words (plain, single-quoted or backslash-escaped) as the arguments a shell passes. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === ' ') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (ch === '\\') {
      word = (word ?? '') + line[++i]!;
    } else word = (word ?? '') + ch;
  }
  if (word !== undefined) words.push(word);
  return words;
}

describe('commands the CLI prints work when pasted', () => {
  it('shell words survive quoting', () => {
    for (const word of ['plain/path.txt', 'with space', "it's", '$HOME', 'a"b', '--root']) expect(shellWords(shellWord(word))).toEqual([word]);
  });

  it("commit's conflict advice names the root and state it was given, and its commands resolve the conflict", async () => {
    const p = await project({});
    // A root and state whose paths need quoting, and a state directory given explicitly.
    const root = join(p.base, 'my project');
    await rename(p.root, root);
    await writeFile(join(root, "it's.txt"), 'one\n');
    await writeFile(join(root, 'b.txt'), 'two\n');
    const state = join(p.base, 'state dir');
    const overlay = await createOverlayFs({ lower: createLocalFs({ root }), stateDir: state });
    for (const name of ["it's.txt", 'b.txt']) {
      const t = await overlay.resolve(name);
      await overlay.writeText(t, 'sandbox\n');
    }
    await writeFile(join(root, "it's.txt"), 'someone else\n');
    await writeFile(join(root, 'b.txt'), 'someone else\n');
    // Run from elsewhere: the printed commands must not depend on the current directory.
    const elsewhere = join(p.base, 'elsewhere');
    await mkdir(elsewhere);

    const commit = await run(['commit', '--root', root, '--state', state], elsewhere);
    expect(commit.code).toBe(1);
    const commands = commit.stdout.split('\n').filter((l) => l.startsWith('  dsh-fs ')).map((l) => shellWords(l.trim()).slice(1));
    expect(commands.map((c) => c[0])).toEqual(['diff', 'commit', 'discard']);
    for (const c of commands) expect(c.slice(1, 5)).toEqual(['--root', root, '--state', state]);

    const diff = await run(commands[0]!, p.base);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('+sandbox');
    const forced = await run(commands[1]!, p.base);
    expect(forced).toMatchObject({ code: 0, stderr: expect.not.stringContaining('Run "') });
    expect(await readFile(join(root, "it's.txt"), 'utf8')).toBe('sandbox\n');
    expect(await readFile(join(root, 'b.txt'), 'utf8')).toBe('sandbox\n');
  });
});

describe('dsh-fs fork --into', () => {
  it('a directory inside the root is refused naming --into and the fork command', async () => {
    const p = await project({ 'a.txt': 'one\n' });
    const r = await run(['fork', '--root', p.root, '--state', p.state, '--into', join(p.root, 'st')], p.base);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^dsh-fs fork: --into ".*st" lies inside --root ".*"; keep the fork's state outside the directory it protects\nRun "dsh-fs fork --help" for usage\.\n$/);
    expect(r.stderr).not.toContain('--state');
  });
});
