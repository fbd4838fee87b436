import { afterAll, describe, expect, it } from 'vitest';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { createPostgresFs, type PgQueryable } from '../../src/backends/postgres/index.js';
import { describeConformance, type OutOfBandHooks } from '../../src/conformance/index.js';
import { isFsError, type FileSystem } from '../../src/seam/index.js';
import { SERVER, closeShared, newWorkspace, postgresSubject, sharedPglite, sharedPool } from './helpers.js';

/**
 * As in test/overlay/conformance.test.ts: an out-of-band change is another process changing the
 * lower (here: rows of the table), after the sandbox let go of its copy of that path.
 */
function overlayHooks(fs: OverlayFileSystem, lower: OutOfBandHooks): OutOfBandHooks {
  const letGo = async (path: string) => {
    try {
      await fs.discard([path]);
    } catch (err) {
      if (!isFsError(err, 'FS_OUTSIDE_ROOT')) throw err;
    }
  };
  return {
    async writeBytes(path, bytes, options) {
      await letGo(path);
      await lower.writeBytes(path, bytes, options);
    },
    async remove(path) {
      const below = await lower.readBytes!(path);
      await letGo(path);
      if (below !== undefined) await lower.remove(path);
    },
    readBytes: (path) => lower.readBytes!(path),
  };
}

async function overlaySubject(client: PgQueryable) {
  const lowerSubject = await postgresSubject(client);
  const fs = await createOverlayFs({ lower: lowerSubject.fs });
  return {
    fs,
    lower: lowerSubject.fs,
    base: lowerSubject.base,
    outOfBand: overlayHooks(fs, lowerSubject.outOfBand!),
    setup: lowerSubject.setup!,
    capabilities: { symlinks: true },
    cleanup: lowerSubject.cleanup!,
  };
}

describeConformance('overlay over postgres (PGlite)', async () => overlaySubject(await sharedPglite()));

describe.runIf(SERVER !== undefined)('against DSH_FS_TEST_PG', () => {
  afterAll(closeShared);
  describeConformance('overlay over postgres (server)', async () => overlaySubject(sharedPool()));
});

const read = async (fs: FileSystem, path: string) => {
  try {
    return (await fs.readText(await fs.resolve(path))).text;
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
    throw err;
  }
};

describe('a sandbox over a shared PostgreSQL workspace', () => {
  it('keeps the workspace untouched until commit, then commits files, removals and renames, and reports what another machine changed meanwhile', async () => {
    const client = await sharedPglite();
    const workspace = newWorkspace('overlay');
    // Two machines on one workspace: the sandbox's and another agent's.
    const shared = createPostgresFs({ client, workspace });
    const other = createPostgresFs({ client, workspace });
    for (const [path, text] of Object.entries({ '/p/a.txt': 'a\n', '/p/b.txt': 'b\n', '/p/d/c.txt': 'c\n', '/p/z.txt': 'z\n' })) {
      await shared.writeText(await shared.resolve(path), text);
    }
    const fs = await createOverlayFs({ lower: shared });
    await fs.editText(await fs.resolve('/p/a.txt'), { oldString: 'a', newString: 'A' });
    await fs.writeText(await fs.resolve('/p/new/n.txt'), 'n\n');
    await fs.remove(await fs.resolve('/p/b.txt'));
    await fs.rename(await fs.resolve('/p/d'), await fs.resolve('/p/e'));
    await fs.editText(await fs.resolve('/p/z.txt'), { oldString: 'z', newString: 'Z' });

    expect(await read(other, '/p/a.txt')).toBe('a\n');
    expect(await read(other, '/p/new/n.txt')).toBeUndefined();
    expect(await read(other, '/p/d/c.txt')).toBe('c\n');
    expect((await fs.changes()).map((c) => `${c.kind} ${c.path}`)).toEqual(
      expect.arrayContaining(['modified /p/a.txt', 'deleted /p/b.txt', 'added /p/new/n.txt', 'modified /p/z.txt']),
    );
    expect(await fs.diff(['/p/a.txt'])).toContain('+A');

    // Meanwhile another agent changes z.txt in the shared workspace: the sandbox's commit must not overwrite it.
    await other.writeText(await other.resolve('/p/z.txt'), 'theirs\n');
    const result = await fs.commit();
    expect(result.conflicts.map((c) => c.path)).toEqual(['/p/z.txt']);
    expect(result.failed).toEqual([]);

    expect(await read(other, '/p/a.txt')).toBe('A\n');
    expect(await read(other, '/p/b.txt')).toBeUndefined();
    expect(await read(other, '/p/new/n.txt')).toBe('n\n');
    expect(await read(other, '/p/d/c.txt')).toBeUndefined();
    expect(await read(other, '/p/e/c.txt')).toBe('c\n');
    expect(await read(other, '/p/z.txt')).toBe('theirs\n');
    expect(await read(fs, '/p/z.txt')).toBe('Z\n');
  });
});
