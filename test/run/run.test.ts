import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runInSandbox } from '../../src/run/index.js';
import { overlayfsMissing, project, type Project } from './support.js';

const missing = await overlayfsMissing();
if (missing !== undefined && process.env.CI) throw new Error(`CI must run the overlayfs tests: ${missing}`);

describe.skipIf(missing !== undefined)(`runInSandbox on overlayfs${missing === undefined ? '' : ` (skipped: ${missing})`}`, () => {
  let p: Project;
  afterEach(async () => p?.cleanup());

  it('imports what the program wrote, removed and made as one checkpoint; the project folder is untouched', async () => {
    p = await project({ 'a.txt': 'a\n', 'keep.txt': 'k\n', 'sub/b.txt': 'b\n', 'gone/x': 'x\n' });
    const sandbox = await p.sandbox();
    const at = (rel: string) => sandbox.resolve(join(p.root, rel));
    const before = sandbox.checkpoints().length;
    const script = 'echo A > a.txt && echo new > n.txt && rm -r gone && mkdir -p d/e && ln -s a.txt l && printf "#!/bin/sh\\n" > s.sh && chmod +x s.sh && cat keep.txt > /dev/null';
    const result = await runInSandbox(sandbox, ['sh', '-c', script], { scratchDir: p.scratch, stdio: 'pipe' });
    expect(result.exitCode).toBe(0);
    expect(result.conflicts).toEqual([]);
    expect(await sandbox.readText(await at('a.txt'))).toMatchObject({ text: 'A\n' });
    expect(await sandbox.readText(await at('n.txt'))).toMatchObject({ text: 'new\n' });
    expect(await sandbox.stat(await at('gone'))).toBeUndefined();
    expect((await sandbox.stat(await at('d/e')))?.type).toBe('directory');
    expect(await sandbox.readlink!(await sandbox.resolve(join(p.root, 'l'), { noFollow: true }))).toBe('a.txt');
    expect((await sandbox.stat(await at('s.sh')))?.executable).toBe(true);
    expect(sandbox.checkpoints().length).toBe(before + 1);
    expect(sandbox.checkpoints().at(-1)?.source).toBe(`run: sh -c ${script}`);
    expect(result.changed).toEqual([join(p.root, 'a.txt')]);
    expect(result.deleted).toEqual([join(p.root, 'gone')]);
    expect([...result.added].sort()).toEqual(['d', 'd/e', 'l', 'n.txt', 's.sh'].map((r) => join(p.root, r)));
    expect(await readFile(join(p.root, 'a.txt'), 'utf8')).toBe('a\n');
    expect((await readdir(p.root)).sort()).toEqual(['a.txt', 'gone', 'keep.txt', 'sub']);
    expect(await readdir(join(p.scratch, 'runs'))).toEqual([]);
  });
});
