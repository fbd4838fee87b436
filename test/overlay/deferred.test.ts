import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { JOURNAL_FILE, openDirStore, type UpperStore } from '../../src/backends/overlay/store.js';
import type { FileSystem } from '../../src/seam/index.js';
import { stored } from './helpers.js';

// F1 on an overlay kept in a state directory: a deferred save is visible at once and reaches the
// disk at flush. A power loss is modelled by cutting the journal back to what was last fsynced.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dsh-overlay-deferred-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The state directory's store, counting what of its journal an fsync made durable. */
async function tracked(): Promise<{ store: UpperStore; powerLoss(): Promise<void>; syncs(): number }> {
  const inner = await openDirStore(join(dir, 'state'));
  let durable = 0;
  let syncs = 0;
  const store: UpperStore = {
    ...inner,
    async writeJournal(bytes) {
      await inner.writeJournal(bytes);
      durable = bytes.byteLength;
    },
    async appendJournal(offset, bytes, options) {
      await inner.appendJournal(offset, bytes, options);
      if (options?.sync !== false) {
        durable = offset + bytes.byteLength;
        syncs++;
      }
    },
    async syncJournal() {
      await inner.syncJournal!();
      durable = (await inner.readJournal())?.byteLength ?? 0;
      syncs++;
    },
  };
  return { store, powerLoss: () => truncate(join(dir, 'state', JOURNAL_FILE), durable), syncs: () => syncs };
}

async function open(store: UpperStore) {
  const lower = createMemoryFs({ files: { '/p/kept.txt': 'lower\n' } });
  // No checkpoints: they would hold every released blob themselves.
  return createOverlayFs({ lower, store, keepCheckpoints: 0 });
}

const text = async (fs: FileSystem, path: string) => (await fs.readText(await fs.resolve(path))).text;
const write = async (fs: FileSystem, path: string, body: string, deferred: boolean) =>
  fs.writeBytes(await fs.resolve(path), Buffer.from(body), undefined, deferred ? { durability: 'deferred' } : undefined);

describe('overlay deferred saves (F1)', () => {
  it('are visible at once, not fsynced, and lost together by a power loss before flush', async () => {
    const t = await tracked();
    const fs = await open(t.store);
    await write(fs, '/p/a.txt', 'durable\n', false);
    const before = t.syncs();
    await write(fs, '/p/b.txt', 'deferred 1\n', true);
    await write(fs, '/p/a.txt', 'deferred 2\n', true);
    expect(t.syncs()).toBe(before);
    expect(await text(fs, '/p/b.txt')).toBe('deferred 1\n');
    expect(await text(fs, '/p/a.txt')).toBe('deferred 2\n');

    await t.powerLoss();
    // The blob of a.txt's durable bytes was released by a deferred save: still there to reopen to.
    const reopened = await open((await tracked()).store);
    expect(await text(reopened, '/p/a.txt')).toBe('durable\n');
    expect(await reopened.stat(await reopened.resolve('/p/b.txt'))).toBeUndefined();
  });

  it('are on disk after flush, and after the next immediate save', async () => {
    const t = await tracked();
    const fs = await open(t.store);
    await write(fs, '/p/a.txt', 'one\n', true);
    expect(fs.flush).toBeTypeOf('function');
    await fs.flush!([await fs.resolve('/p')]);
    await write(fs, '/p/b.txt', 'two\n', true);
    await fs.mkdir(await fs.resolve('/q'));
    await write(fs, '/p/c.txt', 'lost\n', true);
    await t.powerLoss();
    const reopened = await open((await tracked()).store);
    expect(await text(reopened, '/p/a.txt')).toBe('one\n');
    expect(await text(reopened, '/p/b.txt')).toBe('two\n');
    expect(await reopened.stat(await reopened.resolve('/p/c.txt'))).toBeUndefined();
  });

  it('flush with nothing deferred writes nothing', async () => {
    const t = await tracked();
    const fs = await open(t.store);
    await write(fs, '/p/a.txt', 'one\n', false);
    const before = t.syncs();
    await fs.flush!([]);
    await fs.flush!([await fs.resolve('/p')]);
    expect(t.syncs()).toBe(before);
  });

  // The journal's pages may reach the disk before the blobs they name (neither was fsynced).
  it('a power loss that kept lazy records without their blobs reopens to the records before the first such', async () => {
    const t = await tracked();
    const fs = await open(t.store);
    await write(fs, '/p/a.txt', 'durable\n', false);
    await write(fs, '/p/b.txt', stored('deferred b'), true);
    await write(fs, '/p/c.txt', stored('deferred c'), true);
    await write(fs, '/p/d.txt', stored('deferred d'), true);
    // c's blob was renamed into place but its bytes never written; d's blob is whole.
    await writeFile(blobPath(stored('deferred c')), '');
    const reopened = await open((await tracked()).store);
    expect(await text(reopened, '/p/a.txt')).toBe('durable\n');
    expect(await text(reopened, '/p/b.txt')).toBe(stored('deferred b'));
    expect(await reopened.stat(await reopened.resolve('/p/c.txt'))).toBeUndefined();
    expect(await reopened.stat(await reopened.resolve('/p/d.txt'))).toBeUndefined();
    expect(await blobs()).not.toContain(blobId(stored('deferred c')));

    // The journal was cut there: what is saved next is what a reopen finds, the same bytes too.
    await write(reopened, '/p/c.txt', stored('deferred c'), false);
    const again = await open((await tracked()).store);
    expect(await text(again, '/p/c.txt')).toBe(stored('deferred c'));
    expect(await again.stat(await again.resolve('/p/d.txt'))).toBeUndefined();
  });

  it('a small content rides in its record: no blob file, and a reopen that kept the record has it', async () => {
    const t = await tracked();
    const fs = await open(t.store);
    await write(fs, '/p/a.txt', 'durable\n', false);
    await write(fs, '/p/b.txt', 'deferred b\n', true);
    expect(await blobs()).toEqual([]);
    const reopened = await open((await tracked()).store);
    expect(await text(reopened, '/p/b.txt')).toBe('deferred b\n');
  });

  it('a missing blob cuts the journal too', async () => {
    const t = await tracked();
    const fs = await open(t.store);
    // The first save writes the state document (which flushes every blob): the journal follows it.
    await write(fs, '/p/a.txt', 'durable\n', false);
    await write(fs, '/p/b.txt', stored('deferred b'), true);
    await rm(blobPath(stored('deferred b')));
    const reopened = await open((await tracked()).store);
    expect(await reopened.stat(await reopened.resolve('/p/b.txt'))).toBeUndefined();
  });

  it('a blob released and deleted after a flush does not cut what came before it', async () => {
    const t = await tracked();
    const fs = await open(t.store);
    await write(fs, '/p/kept.txt', 'the state document\n', false);
    await write(fs, '/p/a.txt', stored('first'), true);
    await fs.flush!([await fs.resolve('/p')]);
    await write(fs, '/p/a.txt', stored('second'), true);
    await write(fs, '/p/b.txt', stored('other'), true);
    await fs.flush!([await fs.resolve('/p')]);
    // Released by the second save, and deleted once it was flushed (no checkpoint holds it).
    expect(await blobs()).not.toContain(blobId(stored('first')));
    const reopened = await open((await tracked()).store);
    expect(await text(reopened, '/p/a.txt')).toBe(stored('second'));
    expect(await text(reopened, '/p/b.txt')).toBe(stored('other'));
  });
});

const blobId = (body: string) => createHash('sha256').update(body).digest('hex');
const blobPath = (body: string) => join(dir, 'state', 'blobs', blobId(body));
const blobs = () => readdir(join(dir, 'state', 'blobs'));
