import { readFile, readdir, writeFile } from 'node:fs/promises';
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

  it('a second run sees the first run and the agent: removals, a directory made again, links, modes; the layer is redone only where they changed', async () => {
    p = await project({ 'a.txt': 'a\n', 'dir/one': '1\n', 'dir/two': '2\n', 'rm.txt': 'r\n', 'bin/tool': 'echo\n', 'old/x/y': 'y', 'old/z': 'z' });
    const sandbox = await p.sandbox();
    const at = (rel: string) => sandbox.resolve(join(p.root, rel));
    await sandbox.writeText(await at('agent.txt'), 'by agent\n');
    await sandbox.rmdir(await at('old'), { recursive: true });
    await sandbox.mkdir(await at('old/x'));
    await sandbox.writeText(await at('old/four'), '4');
    const first = await runInSandbox(sandbox, ['sh', '-c', 'rm -r dir && mkdir dir && echo 3 > dir/three && rm rm.txt && chmod +x bin/tool && ln -s dir/three t'], { scratchDir: p.scratch });
    expect(first.exitCode).toBe(0);
    const seen = await runInSandbox(sandbox, ['sh', '-c', 'ls -A . dir old old/x | tr "\\n" " "; cat agent.txt t; test -x bin/tool && echo x'], { scratchDir: p.scratch, stdio: 'pipe' });
    expect(seen.stdout?.toString()).toBe('.: a.txt agent.txt bin dir old t  dir: three  old: four x  old/x: by agent\n3\nx\n');
    expect(seen.added.length + seen.changed.length + seen.deleted.length).toBe(0);
    expect(seen.checkpoint).toBeUndefined();
    const manifest = JSON.parse(await readFile(join(p.scratch, 'layer.json'), 'utf8')) as { entries: Record<string, string> };
    expect(manifest.entries).toMatchObject({ 'agent.txt': expect.stringMatching(/^f:/), old: 'do', 'rm.txt': 'w', t: 'l:dir/three' });
  });

  it('a path the sandbox changed during the run is a conflict: the sandbox keeps its bytes, the program\'s are kept aside, the rest imports', async () => {
    p = await project({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const sandbox = await p.sandbox();
    const at = (rel: string) => sandbox.resolve(join(p.root, rel));
    const go = join(p.dir, 'go');
    const started = join(p.dir, 'started');
    const running = runInSandbox(sandbox, ['sh', '-c', `echo prog > a.txt; echo prog > b.txt; touch ${started}; while [ ! -e ${go} ]; do sleep 0.02; done`], { scratchDir: p.scratch });
    while (!(await readFile(started).then(() => true, () => false))) await new Promise((r) => setTimeout(r, 20));
    await sandbox.writeText(await at('a.txt'), 'agent\n');
    await sandbox.writeText(await at('c.txt'), 'agent\n');
    await writeFile(go, '');
    const result = await running;
    expect(result.exitCode).toBe(0);
    expect(result.conflicts.map((c) => c.path)).toEqual([join(p.root, 'a.txt')]);
    expect(await readFile(result.conflicts[0]!.kept!, 'utf8')).toBe('prog\n');
    expect(result.changed).toEqual([join(p.root, 'b.txt')]);
    expect((await sandbox.readText(await at('a.txt'))).text).toBe('agent\n');
    expect((await sandbox.readText(await at('b.txt'))).text).toBe('prog\n');
    expect((await sandbox.readText(await at('c.txt'))).text).toBe('agent\n');
  });

  it('a program killed by a signal: its exit status is 128+signal and what it wrote before is imported', async () => {
    p = await project({ 'a.txt': 'a\n' });
    const sandbox = await p.sandbox();
    const result = await runInSandbox(sandbox, ['sh', '-c', 'echo k > a.txt; kill -KILL $$'], { scratchDir: p.scratch, stdio: 'pipe' });
    expect(result.exitCode).toBe(137);
    expect((await sandbox.readText(await sandbox.resolve(join(p.root, 'a.txt')))).text).toBe('k\n');
  });

  it('what the sandbox cannot hold is reported and not imported; a file rewritten with the same bytes is no change', async () => {
    p = await project({ 'same.txt': 's\n' });
    const sandbox = await p.sandbox();
    const result = await runInSandbox(sandbox, ['sh', '-c', 'echo s > same.txt; mkfifo f; echo h > h1; ln h1 h2'], { scratchDir: p.scratch });
    expect(result.skipped.map((s) => s.path).sort()).toEqual(['f', 'h1', 'h2'].map((r) => join(p.root, r)));
    expect(result.changed).toEqual([]);
    expect(result.added).toEqual([]);
    expect(await sandbox.changes()).toEqual([]);
  });

  it('GIT_OPTIONAL_LOCKS=0 unless set, and the program starts in the directory given', async () => {
    p = await project({ 'sub/x': '' });
    const sandbox = await p.sandbox();
    const result = await runInSandbox(sandbox, ['sh', '-c', 'echo "$GIT_OPTIONAL_LOCKS $(pwd)"'], { scratchDir: p.scratch, cwd: join(p.root, 'sub'), stdio: 'pipe' });
    expect(result.stdout?.toString()).toBe(`0 ${join(p.root, 'sub')}\n`);
  });
});
