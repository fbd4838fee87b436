import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { FsError, type FileSystem, type FsChange } from '../../src/seam/index.js';
import { codeOf } from '../support/code-of.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const seed = { '/src/a.ts': 'a\n', '/src/b.ts': 'b\n', '/src/c.ts': 'c\n' };

/** Every file of the view: path → text. */
async function files(fs: FileSystem): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const e of fs.walk(await fs.resolve('/'))) {
    if (e.type === 'file') out[e.target.displayPath] = (await fs.readText(e.target)).text;
  }
  return out;
}

/** An upper whose writes can be made to fail, counting the journal's appends. */
function flakyUpper() {
  const inner = createMemoryFs();
  let failing = false;
  const writes = { journal: 0 };
  const fs: FileSystem = {
    ...inner,
    resolve: (p, o) => inner.resolve(p, o),
    contains: (a, b) => inner.contains(a, b),
    writeBytes: (t, b, i, o) => {
      if (failing) return Promise.reject(new FsError('FS_IO_ERROR', 'disk full'));
      if (t.displayPath.endsWith('.journal')) writes.journal++;
      return inner.writeBytes(t, b, i, o);
    },
  };
  return { fs, inner, writes, setFailing: (f: boolean) => void (failing = f) };
}

async function batchOf(fs: FileSystem): Promise<FsChange[]> {
  const at = (p: string) => fs.resolve(p);
  const version = async (p: string) => (await fs.stat(await at(p)))!.version;
  return [
    { kind: 'write', target: await at('/src/a.ts'), bytes: utf8('A\n'), intent: { kind: 'replaceIfVersion', version: await version('/src/a.ts') } },
    { kind: 'remove', target: await at('/src/b.ts'), version: await version('/src/b.ts') },
    { kind: 'write', target: await at('/new/deep/n.ts'), bytes: utf8('new\n'), intent: { kind: 'createIfAbsent' } },
    { kind: 'move', from: await at('/src/c.ts'), to: await at('/src/d.ts'), expect: await version('/src/c.ts'), replace: false, bytes: utf8('D\n') },
  ];
}

describe('overlay: applyChanges', () => {
  it('saves a whole batch as one journal append, and a reopened overlay shows it', async () => {
    const upper = flakyUpper();
    const lower = createMemoryFs({ files: seed });
    const fs = await createOverlayFs({ lower, upper: upper.fs });
    await fs.writeText(await fs.resolve('/src/a.ts'), 'a2\n'); // the state's document and journal exist now
    const before = upper.writes.journal;
    await fs.applyChanges!(await batchOf(fs));
    expect(upper.writes.journal - before).toBe(1);
    const want = { '/src/a.ts': 'A\n', '/src/d.ts': 'D\n', '/new/deep/n.ts': 'new\n' };
    expect(await files(fs)).toEqual(want);
    expect(await files(await createOverlayFs({ lower, upper: upper.inner }))).toEqual(want);
    // The move is reviewed as a rename with edits, as a rename then a write would be.
    expect((await fs.changes()).find((c) => c.path === '/src/d.ts')).toMatchObject({ kind: 'renamed', from: '/src/c.ts' });
  });

  it('a batch whose save fails changes nothing, live or reopened', async () => {
    const upper = flakyUpper();
    const lower = createMemoryFs({ files: seed });
    const fs = await createOverlayFs({ lower, upper: upper.fs });
    await fs.writeText(await fs.resolve('/src/a.ts'), 'a2\n');
    const view = await files(fs);
    const changes = await batchOf(fs);
    upper.setFailing(true);
    expect(await codeOf(fs.applyChanges!(changes))).toBe('FS_IO_ERROR');
    expect(await files(fs)).toEqual(view);
    upper.setFailing(false);
    expect(await files(await createOverlayFs({ lower, upper: upper.inner }))).toEqual(view);
    // The same batch applies once the store is back: nothing of the failed one stayed.
    await fs.applyChanges!(changes);
    expect(await files(fs)).toEqual({ '/src/a.ts': 'A\n', '/src/d.ts': 'D\n', '/new/deep/n.ts': 'new\n' });
  });

  it('a broken guard in the last change: nothing is saved', async () => {
    const upper = flakyUpper();
    const lower = createMemoryFs({ files: seed });
    const fs = await createOverlayFs({ lower, upper: upper.fs });
    const view = await files(fs);
    const changes = await batchOf(fs);
    await lower.writeText(await lower.resolve('/src/c.ts'), 'changed underneath\n');
    const err = await fs.applyChanges!(changes).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FsError);
    expect((err as FsError).code).toBe('FS_STALE_VERSION');
    expect((err as FsError).message).toMatch(/"\/src\/c\.ts" \(file 4 of 4\).*nothing was changed/);
    expect(await files(fs)).toEqual({ ...view, '/src/c.ts': 'changed underneath\n' });
    expect(await fs.changes()).toEqual([]);
  });
});
