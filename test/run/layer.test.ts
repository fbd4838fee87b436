import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coreOf } from '../../src/backends/overlay/compose.js';
import type { OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { buildLayer } from '../../src/run/layer.js';
import { project, type Project } from './support.js';

const layerOf = (s: OverlayFileSystem) => coreOf(s)!.state.snapshot();

describe('the sandbox laid out as a lower layer', () => {
  let p: Project;
  afterEach(async () => p?.cleanup());

  it('holds files with their mode, links and whiteouts; a later build redoes only what changed since', async () => {
    p = await project({ 'gone.txt': 'g', 'keep.txt': 'k' });
    const sandbox = await p.sandbox();
    const at = (rel: string) => sandbox.resolve(join(p.root, rel));
    for (let i = 0; i < 40; i++) await sandbox.writeText(await at(`many/f${i}`), `${i}`);
    await sandbox.remove(await at('gone.txt'));
    await sandbox.symlink!(await sandbox.resolve(join(p.root, 'l'), { noFollow: true }), 'keep.txt');
    await sandbox.writeText(await at('x.sh'), 'echo');
    await sandbox.setExecutable!(await at('x.sh'), true);
    const paths = { dir: join(p.scratch, 'layer'), manifest: join(p.scratch, 'layer.json') };
    const first = await buildLayer(paths, layerOf(sandbox), p.root);
    expect(first).toEqual({ made: 44, removed: 0 });
    const whiteout = await lstat(join(paths.dir, 'gone.txt'));
    expect(whiteout.isCharacterDevice() && whiteout.rdev === 0).toBe(true);
    expect(await readlink(join(paths.dir, 'l'))).toBe('keep.txt');
    expect((await stat(join(paths.dir, 'x.sh'))).mode & 0o777).toBe(0o755);
    expect((await readdir(join(paths.dir, 'many'))).length).toBe(40);

    await sandbox.writeText(await at('many/f3'), 'changed');
    await sandbox.remove(await at('many/f4'));
    await sandbox.writeText(await at('gone.txt'), 'back');
    const second = await buildLayer(paths, layerOf(sandbox), p.root);
    // f4 was the sandbox's own file: removed, it leaves no entry at all (the project has none).
    expect(second).toEqual({ made: 2, removed: 3 });
    await expect(lstat(join(paths.dir, 'many/f4'))).rejects.toThrow();
    expect((await readdir(join(paths.dir, 'many'))).length).toBe(39);
    expect((await lstat(join(paths.dir, 'gone.txt'))).isFile()).toBe(true);
    expect(await buildLayer(paths, layerOf(sandbox), p.root)).toEqual({ made: 0, removed: 0 });
  });
});
