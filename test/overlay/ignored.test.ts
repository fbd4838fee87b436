import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, ignoredGroups } from '../../src/backends/overlay/index.js';

/** A sandbox over a memory project with a `.gitignore`, and what a build wrote into it. */
async function built() {
  const lower = createMemoryFs({
    cwd: '/p',
    files: { '.gitignore': 'node_modules/\n*.log\n', 'src/a.ts': 'a\n', 'node_modules/old/x.js': 'old\n' },
  });
  const overlay = await createOverlayFs({ lower, cwd: '/p' });
  const write = async (path: string, text: string) => overlay.writeText(await overlay.resolve(path), text);
  for (let i = 0; i < 5; i++) await write(`node_modules/pkg${i}/index.js`, `module.exports = ${i};\n`);
  await overlay.remove(await overlay.resolve('node_modules/old/x.js'));
  await write('src/a.ts', 'a2\n');
  await write('src/debug.log', 'trace\n');
  await write('.git/HEAD', 'ref: refs/heads/main\n');
  return { lower, overlay, read: async (path: string) => (await lower.readText(await lower.resolve(path)).catch(() => undefined))?.text };
}

describe('ignored outputs and git files in a sandbox', () => {
  it('changes marks them; ignoredGroups counts them per top directory; diff leaves them out unless asked', async () => {
    const { overlay } = await built();
    const changes = await overlay.changes();
    expect(changes.filter((c) => c.ignored === undefined).map((c) => c.path)).toEqual(['/p/src/a.ts']);
    expect(ignoredGroups('/p', changes)).toEqual([
      { path: '.git/', reason: 'git', count: 1 },
      { path: 'node_modules/', reason: 'gitignore', count: 6 },
      { path: 'src/', reason: 'gitignore', count: 1 },
    ]);
    const diff = await overlay.diff();
    expect(diff).toContain('src/a.ts');
    expect(diff).not.toContain('node_modules');
    expect(diff).not.toContain('debug.log');
    expect(diff).not.toContain('.git/HEAD');
    expect(await overlay.diff(undefined, { includeIgnored: true })).toContain('node_modules/pkg3/index.js');
  });

  it('commit leaves them out and keeps them in the sandbox; includeIgnored commits them', async () => {
    const { overlay, read } = await built();
    const result = await overlay.commit();
    expect(result.committed).toEqual(['/p/src/a.ts']);
    expect(await read('src/a.ts')).toBe('a2\n');
    expect(await read('node_modules/pkg0/index.js')).toBeUndefined();
    expect(await read('node_modules/old/x.js')).toBe('old\n');
    // Still in the sandbox, so the next program sees them.
    expect((await overlay.readText(await overlay.resolve('node_modules/pkg0/index.js'))).text).toBe('module.exports = 0;\n');
    expect((await overlay.changes()).every((c) => c.ignored !== undefined)).toBe(true);
    const all = await overlay.commit(undefined, { includeIgnored: true });
    expect(all.conflicts).toEqual([]);
    expect(all.committed).toHaveLength(8);
    expect(await read('node_modules/pkg4/index.js')).toBe('module.exports = 4;\n');
    expect(await read('node_modules/old/x.js')).toBeUndefined();
    expect(await read('.git/HEAD')).toBe('ref: refs/heads/main\n');
    expect(await overlay.changes()).toEqual([]);
  });

  it('discard drops them too', async () => {
    const { overlay } = await built();
    await overlay.discard();
    expect(await overlay.changes()).toEqual([]);
    await expect(overlay.readText(await overlay.resolve('node_modules/pkg0/index.js'))).rejects.toMatchObject({ code: 'FS_NOT_FOUND' });
  });

  it('reads the rules as the sandbox shows them: .git/info/exclude, nested .gitignore, a negation', async () => {
    const lower = createMemoryFs({ cwd: '/p', files: { '.git/info/exclude': 'secret.txt\n', 'pkg/.gitignore': 'dist/\n!keep.log\n*.log\n' } });
    const overlay = await createOverlayFs({ lower, cwd: '/p' });
    for (const path of ['secret.txt', 'pkg/dist/a.js', 'pkg/x.log', 'pkg/keep.log', 'dist/b.js']) await overlay.writeText(await overlay.resolve(path), 'x');
    const marks = (await overlay.changes()).map((c) => [c.path.slice(3), c.ignored ?? '-']);
    expect(marks).toEqual([
      ['dist/b.js', '-'],
      ['pkg/dist/a.js', 'gitignore'],
      ['pkg/keep.log', 'gitignore'],
      ['pkg/x.log', 'gitignore'],
      ['secret.txt', 'gitignore'],
    ]);
  });
});
