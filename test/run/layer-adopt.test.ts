import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coreOf } from '../../src/backends/overlay/compose.js';
import type { OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { buildLayer } from '../../src/run/layer.js';
import { runInSandbox } from '../../src/run/index.js';
import { overlayfsMissing, project, type Project } from './support.js';

const missing = await overlayfsMissing();
if (missing !== undefined && process.env.CI) throw new Error(`CI must run the overlayfs tests: ${missing}`);

const layerOf = (s: OverlayFileSystem) => coreOf(s)!.state.snapshot();

/** A layer directory as text: each entry's path, kind, mode and content (whiteouts as devices). */
async function tree(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(join(dir, rel))).sort()) {
    const r = rel === '' ? name : `${rel}/${name}`;
    const info = await lstat(join(dir, r));
    if (info.isDirectory()) out.push(`${r}/`, ...(await tree(dir, r)));
    else if (info.isSymbolicLink()) out.push(`${r} -> ${await readlink(join(dir, r))}`);
    else if (info.isCharacterDevice()) out.push(`${r} whiteout ${info.rdev}`);
    else out.push(`${r} ${(info.mode & 0o777).toString(8)} ${await readFile(join(dir, r), 'utf8')}`);
  }
  return out;
}

describe.skipIf(missing !== undefined)(`the kept layer takes a run's files from its upper${missing === undefined ? '' : ` (skipped: ${missing})`}`, () => {
  let p: Project;
  afterEach(async () => p?.cleanup());

  it('the layer after a run, brought up to date, equals one built afresh; the run\'s files need no rewrite', async () => {
    p = await project({ 'a.txt': 'a\n', 'lib/x.js': 'x\n', 'old/y': 'y\n', 'dir/z': 'z\n', 'same.txt': 's\n' });
    const sandbox = await p.sandbox();
    const at = (rel: string) => sandbox.resolve(join(p.root, rel));
    await sandbox.writeText(await at('agent.txt'), 'agent\n');
    await sandbox.rmdir(await at('old'), { recursive: true });
    await sandbox.mkdir(await at('old'));
    await sandbox.writeText(await at('gone.txt'), 'soon gone\n');
    const script = [
      'mkdir -p out/deep/er && for i in 1 2 3 4 5 6; do echo $i > out/deep/er/f$i; done',
      'echo changed > agent.txt && echo lib > lib/new.js && echo A > a.txt && echo s > same.txt',
      'printf "#!/bin/sh\\n" > out/run.sh && chmod 755 out/run.sh && chmod 600 out/deep/er/f1',
      'echo in-opaque > old/w && rm -r dir && echo now-a-file > dir && rm gone.txt && ln -s a.txt link',
    ].join(' && ');
    const result = await runInSandbox(sandbox, ['sh', '-c', script], { scratchDir: p.scratch, stdio: 'pipe' });
    expect(result.exitCode, result.stderr?.toString()).toBe(0);
    const kept = { dir: join(p.scratch, 'layer'), manifest: join(p.scratch, 'layer.json') };
    const manifest = JSON.parse(await readFile(kept.manifest, 'utf8')) as { dirty: boolean; entries: Record<string, string> };
    expect(manifest.dirty).toBe(false);
    // The run's plain new files came from its upper: already in the layer, with their signature.
    for (const rel of ['out/deep/er/f2', 'out/run.sh', 'lib/new.js', 'agent.txt', 'a.txt']) expect(manifest.entries[rel], rel).toMatch(/^f:/);
    const next = await buildLayer(kept, layerOf(sandbox), p.root);
    expect(next.made).toBeLessThan(5);
    const fresh = { dir: join(p.dir, 'fresh'), manifest: join(p.dir, 'fresh.json') };
    await buildLayer(fresh, layerOf(sandbox), p.root);
    expect(await tree(kept.dir)).toEqual(await tree(fresh.dir));
    // And what a program sees through it is the sandbox.
    const seen = await runInSandbox(sandbox, ['sh', '-c', 'cat agent.txt a.txt dir old/w out/deep/er/f6; ls old; test -x out/run.sh && echo x'], { scratchDir: p.scratch, stdio: 'pipe' });
    expect(seen.stdout?.toString()).toBe('changed\nA\nnow-a-file\nin-opaque\n6\nw\nx\n');
  });
});
