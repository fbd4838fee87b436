import { promises as fsp, type PathLike } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createLocalFs, type LocalFileSystem } from '../../src/backends/local/index.js';
import { activeJournals, JOURNAL_DIR_PATTERN } from '../../src/backends/local/journal.js';
import { glob, grep } from '../../src/index.js';
import { isFsError } from '../../src/seam/index.js';
import { makeArea, type Area } from './helpers.js';

// J1 on local disk: the journal's directory is one of the provider's reserved names, and a
// journal left by a process that is gone puts every recorded path back.

let area: Area;
let fs: LocalFileSystem;
beforeEach(async () => {
  area = await makeArea('journal');
  fs = createLocalFs({ root: area.root });
  await fsp.mkdir(join(area.root, 'src'));
  await fsp.writeFile(join(area.root, 'src/a.txt'), 'old a\n');
  await fsp.writeFile(join(area.root, 'src/gone.txt'), 'old gone\n');
});
afterEach(() => area.cleanup());

const journalDirs = async () => (await fsp.readdir(area.root)).filter((n) => JOURNAL_DIR_PATTERN.test(n));
const text = (rel: string) => fsp.readFile(join(area.root, rel), 'utf8').catch(() => undefined);

describe('journal (J1), local provider', () => {
  test('while a journal is open its directory is never listed, globbed or grepped, and its name cannot be written; end removes it', async () => {
    const handle = await fs.provider.journal.begin({ kind: 'commit', keys: [join(area.root, 'src/a.txt'), join(area.root, 'src/new.txt')] });
    const [name] = await journalDirs();
    expect(name).toBeDefined();
    expect((await fs.listDir(await fs.resolve(area.root))).map((e) => e.name)).toEqual(['src']);
    expect((await glob(fs, '**', { cwd: area.root, onlyFiles: false, dot: true })).matches.map((m) => m.path)).not.toContain(join(area.root, name!));
    // The journal holds a link to the old a.txt: its text would be found by a grep that saw it.
    const found = await grep(fs, 'old a', { path: area.root, hidden: true, gitignore: false });
    expect(found.matches.map((m) => m.path)).toEqual([join(area.root, 'src/a.txt')]);
    const refused = await fs
      .resolve(join(area.root, name!, 'x'))
      .then((t) => fs.writeText(t, 'mine'))
      .catch((err: unknown) => err);
    expect(isFsError(refused, 'FS_INVALID_ARGUMENT')).toBe(true);
    // Not taken for a dead process's while this one runs it.
    expect(await fs.provider.journal.pending()).toEqual([]);
    await handle.end();
    expect(await journalDirs()).toEqual([]);
  });

  test('a journal whose process is gone is rolled back: replaced and removed files come back, made files and directories go, temps too', async () => {
    const keys = ['src/a.txt', 'src/gone.txt', 'src/new.txt', 'made/deep/b.txt'].map((k) => join(area.root, k));
    await fs.provider.journal.begin({ kind: 'commit', payload: { paths: null }, keys });
    // The operation, part-way: a replaced, gone removed, new and made/deep/b created, a temp left.
    await fs.writeText(await fs.resolve(join(area.root, 'src/a.txt')), 'new a\n');
    await fs.remove(await fs.resolve(join(area.root, 'src/gone.txt')));
    await fs.writeText(await fs.resolve(join(area.root, 'src/new.txt')), 'new\n');
    await fs.writeText(await fs.resolve(join(area.root, 'made/deep/b.txt')), 'b\n');
    await fsp.writeFile(join(area.root, 'src/.new.txt.0123456789abcdef0123456789abcdef.dsh-tmp'), 'half');
    await fsp.writeFile(join(area.root, 'src/.other.txt.0123456789abcdef0123456789abcdef.dsh-tmp'), 'not this one');
    // As if this process had died: its journal is no longer one under way.
    activeJournals.clear();
    const other = createLocalFs({ root: area.root });
    const [pending, ...more] = await other.provider.journal.pending();
    expect(more).toEqual([]);
    expect(pending).toMatchObject({ kind: 'commit', pid: process.pid, payload: { paths: null } });
    // Claimed: a second look finds nothing to take.
    expect(await createLocalFs({ root: area.root }).provider.journal.pending()).toEqual([]);
    const restored = await pending!.rollBack();
    expect(restored).toEqual(expect.arrayContaining([...keys, join(area.root, 'made'), join(area.root, 'made/deep')]));
    expect(await text('src/a.txt')).toBe('old a\n');
    expect(await text('src/gone.txt')).toBe('old gone\n');
    expect(await text('src/new.txt')).toBeUndefined();
    expect(await fsp.readdir(area.root)).toEqual(['src']);
    expect((await fsp.readdir(join(area.root, 'src'))).sort()).toEqual(['.other.txt.0123456789abcdef0123456789abcdef.dsh-tmp', 'a.txt', 'gone.txt']);
  });

  test('without hard links (link(2) answers EPERM) the old files are copied aside, and put back all the same', async () => {
    const io = { ...fsp, link: async (from: PathLike, to: PathLike): Promise<void> => Promise.reject(Object.assign(new Error(`EPERM: link '${String(from)}' -> '${String(to)}'`), { code: 'EPERM' })) };
    const noLinks = createLocalFs({ root: area.root, io });
    await noLinks.provider.journal.begin({ kind: 'commit', keys: [join(area.root, 'src/a.txt')] });
    await noLinks.writeText(await noLinks.resolve(join(area.root, 'src/a.txt')), 'new a\n');
    activeJournals.clear();
    const [pending] = await noLinks.provider.journal.pending();
    expect(await pending!.rollBack()).toEqual([join(area.root, 'src/a.txt')]);
    expect(await text('src/a.txt')).toBe('old a\n');
    expect(await journalDirs()).toEqual([]);
  });

  test('a journal killed before its record was written changed nothing: its directory is removed', async () => {
    const name = `.dsh-journal.${'ab'.repeat(16)}.dsh-tmp`;
    await fsp.mkdir(join(area.root, name));
    await fsp.writeFile(join(area.root, name, '0'), 'a link, half made');
    const [pending] = await fs.provider.journal.pending();
    expect(pending).toMatchObject({ kind: undefined, owner: undefined });
    expect(await pending!.rollBack()).toEqual([]);
    expect(await fsp.readdir(area.root)).toEqual(['src']);
    expect(await text('src/a.txt')).toBe('old a\n');
  });
});
