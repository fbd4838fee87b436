import { describe, expect, it } from 'vitest';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { createSqliteFs, createSqliteUpperStore } from '../../src/backends/sqlite/index.js';
import { describeConformance, type OutOfBandHooks } from '../../src/conformance/index.js';
import { isFsError, type FileSystem } from '../../src/seam/index.js';
import { sqliteSubject, tempSqlite } from './helpers.js';

/**
 * As in test/overlay/conformance.test.ts: an out-of-band change is another process changing the
 * lower (here: the workspace, through another filesystem on the file), after the sandbox let go
 * of its copy of that path.
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

/**
 * The overlay's properties over a SQLite workspace (its upper layer in memory, as for PostgreSQL;
 * the upper store in the file is exercised by upper.test.ts and the round trip below).
 */
describeConformance(
  'overlay over sqlite',
  async () => {
    const lowerSubject = await sqliteSubject();
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
  },
);

const read = async (fs: FileSystem, path: string) => {
  try {
    return (await fs.readText(await fs.resolve(path))).text;
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
    throw err;
  }
};

describe('a sandbox over a SQLite workspace, in the same file', () => {
  it('keeps the workspace untouched until commit, is reviewed through another store, and commits without overwriting what changed meanwhile', async () => {
    const temp = await tempSqlite('overlay');
    const shared = createSqliteFs({ path: temp.file, workspace: 'w' });
    const other = createSqliteFs({ path: temp.file, workspace: 'w' });
    for (const [path, text] of Object.entries({ '/p/a.txt': 'a\n', '/p/b.txt': 'b\n', '/p/d/c.txt': 'c\n', '/p/z.txt': 'z\n' })) {
      await shared.writeText(await shared.resolve(path), text);
    }
    const agentStore = createSqliteUpperStore({ path: temp.file, sandbox: 'w' });
    const fs = await createOverlayFs({ lower: shared, store: agentStore });
    await fs.editText(await fs.resolve('/p/a.txt'), { oldString: 'a', newString: 'A' });
    await fs.writeText(await fs.resolve('/p/new/n.txt'), 'n\n');
    await fs.remove(await fs.resolve('/p/b.txt'));
    await fs.rename(await fs.resolve('/p/d'), await fs.resolve('/p/e'));
    await fs.editText(await fs.resolve('/p/z.txt'), { oldString: 'z', newString: 'Z' });
    await agentStore.unlock();
    expect(await read(other, '/p/a.txt')).toBe('a\n');
    expect(await read(other, '/p/new/n.txt')).toBeUndefined();

    // Another agent changes z.txt meanwhile; the review happens through a store of its own.
    await other.writeText(await other.resolve('/p/z.txt'), 'theirs\n');
    const reviewStore = createSqliteUpperStore({ path: temp.file, sandbox: 'w' });
    const review = await createOverlayFs({ lower: other, store: reviewStore });
    expect((await review.changes()).map((c) => `${c.kind} ${c.path}`)).toEqual(
      expect.arrayContaining(['modified /p/a.txt', 'deleted /p/b.txt', 'added /p/new/n.txt', 'modified /p/z.txt']),
    );
    const result = await reviewStore.withLock(() => review.commit());
    expect(result.conflicts.map((c) => c.path)).toEqual(['/p/z.txt']);
    expect(result.failed).toEqual([]);
    expect(await read(other, '/p/a.txt')).toBe('A\n');
    expect(await read(other, '/p/b.txt')).toBeUndefined();
    expect(await read(other, '/p/new/n.txt')).toBe('n\n');
    expect(await read(other, '/p/e/c.txt')).toBe('c\n');
    expect(await read(other, '/p/z.txt')).toBe('theirs\n');
    for (const c of [agentStore, reviewStore, shared, other]) await c.close();
    await temp.remove();
  });
});
