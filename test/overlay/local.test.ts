import { mkdir, mkdtemp, readFile, readdir, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';

const areas: string[] = [];
afterEach(async () => {
  for (const a of areas.splice(0)) await rm(a, { recursive: true, force: true });
});

async function area() {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'dsh-fs-overlay-local-')));
  areas.push(dir);
  const root = join(dir, 'root');
  await mkdir(join(root, 'src'), { recursive: true });
  await writeFile(join(root, 'src', 'app.ts'), 'const a = 1;\r\nexport default a;\r\n');
  await writeFile(join(root, 'src', 'old.ts'), 'old\n');
  await writeFile(join(dir, 'secret.txt'), 'outside\n');
  await symlink(join(dir, 'secret.txt'), join(root, 'escape'));
  await symlink('src', join(root, 'alias'));
  return { dir, root, stateDir: join(dir, 'state') };
}

/** Every file under `dir` with its bytes and mode: any write, removal or chmod shows. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out[p] = `${(await stat(p)).mode.toString(8)} ${(await readFile(p)).toString('base64')}`;
      else out[p] = 'link';
    }
  };
  await walk(dir);
  return out;
}

describe('overlay over a local directory', () => {
  it('leaves the disk untouched until commit, then writes exactly the reviewed changes', async () => {
    const { dir, root, stateDir } = await area();
    const before = await snapshot(dir);
    const lower = createLocalFs({ root });
    const fs = await createOverlayFs({ lower, stateDir });
    const app = await fs.resolve('alias/app.ts');
    expect(app.targetKey).toBe(join(root, 'src', 'app.ts'));
    await fs.editText(app, { oldString: 'const a = 1;\nexport', newString: 'const a = 2;\nexport' });
    await fs.remove(await fs.resolve('src/old.ts'));
    await fs.writeText(await fs.resolve('src/lib/new.ts'), 'export const n = 1;\n');
    await expect(fs.resolve('escape')).rejects.toMatchObject({ code: 'FS_OUTSIDE_ROOT' });
    await expect(fs.resolve('/etc/x')).rejects.toMatchObject({ code: 'FS_OUTSIDE_ROOT' });

    const disk = await snapshot(root);
    expect(disk).toEqual(Object.fromEntries(Object.entries(before).filter(([p]) => p.startsWith(`${root}/`))));

    expect(await fs.diff()).toBe(
      [
        'diff --git a/src/app.ts b/src/app.ts',
        '--- a/src/app.ts',
        '+++ b/src/app.ts',
        '@@ -1,2 +1,2 @@',
        '-const a = 1;\r',
        '+const a = 2;\r',
        ' export default a;\r',
        'diff --git a/src/lib/new.ts b/src/lib/new.ts',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/src/lib/new.ts',
        '@@ -0,0 +1,1 @@',
        '+export const n = 1;',
        'diff --git a/src/old.ts b/src/old.ts',
        'deleted file mode 100644',
        '--- a/src/old.ts',
        '+++ /dev/null',
        '@@ -1,1 +0,0 @@',
        '-old',
        '',
      ].join('\n'),
    );

    // Another process reviewing and committing after the agent stopped.
    const reviewer = await createOverlayFs({ lower: createLocalFs({ root }), stateDir });
    expect((await reviewer.changes()).map((c) => [c.path.slice(root.length), c.kind])).toEqual([
      ['/src/app.ts', 'modified'],
      ['/src/lib/new.ts', 'added'],
      ['/src/old.ts', 'deleted'],
    ]);
    const result = await reviewer.commit();
    expect(result.conflicts).toEqual([]);
    expect(result.failed).toEqual([]);
    expect(await readFile(join(root, 'src', 'app.ts'), 'utf8')).toBe('const a = 2;\r\nexport default a;\r\n');
    expect(await readFile(join(root, 'src', 'lib', 'new.ts'), 'utf8')).toBe('export const n = 1;\n');
    await expect(stat(join(root, 'src', 'old.ts'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(join(dir, 'secret.txt'), 'utf8')).toBe('outside\n');
    expect(await reviewer.changes()).toEqual([]);
  });

  it('a file edited on disk after the overlay copied it is a conflict and keeps the disk version', async () => {
    const { root } = await area();
    const fs = await createOverlayFs({ lower: createLocalFs({ root }) });
    await fs.writeText(await fs.resolve('src/app.ts'), 'agent version\n');
    await writeFile(join(root, 'src', 'app.ts'), 'human version\n');
    const result = await fs.commit();
    expect(result.conflicts.map((c) => [c.path, c.code])).toEqual([[join(root, 'src', 'app.ts'), 'FS_CONFLICT']]);
    expect(await readFile(join(root, 'src', 'app.ts'), 'utf8')).toBe('human version\n');
    // The file kept its CRLF style when the agent wrote it (L5).
    expect((await fs.readText(await fs.resolve('src/app.ts'))).text).toBe('agent version\r\n');
  });
});
