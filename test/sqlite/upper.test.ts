import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { createSqliteUpperStore, type SqliteUpperStore } from '../../src/backends/sqlite/index.js';
import { openSqlite } from '../../src/backends/sqlite/db.js';
import { codeOf } from '../support/code-of.js';
import { RUNS, viewOf } from '../overlay/helpers.js';
import { crashAfter, describeUpperStoreKit, type StoreBacking } from '../overlay/store-kit.js';
import { tempSqlite } from './helpers.js';

const shared = await tempSqlite('upper');
afterAll(() => shared.remove());
let counter = 0;
const newSandbox = (label: string) => `${label}-${++counter}`;

/** Each place is a fresh sandbox of one file; opening it again ends the earlier "processes" (they let go of the lock). */
function sqliteBacking(): StoreBacking {
  const open: SqliteUpperStore[] = [];
  return {
    // Every save is a transaction flushed to disk: fewer runs keep the file quick.
    runsFactor: 0.3,
    async fresh() {
      for (const s of open.splice(0)) await s.close();
      const sandbox = newSandbox('kit');
      const next = async () => {
        for (const s of open) await s.unlock();
        const s = createSqliteUpperStore({ path: shared.file, sandbox });
        open.push(s);
        return s;
      };
      return {
        open: next,
        // A crashed process's lock is taken over (its holder is gone).
        crashing: async (crashAt, tear) => {
          const s = await next();
          return crashAfter(s, crashAt, tear, () => s.unlock());
        },
      };
    },
  };
}

describeUpperStoreKit('SQLite', sqliteBacking());

describe('SQLite upper store', () => {
  it('appendJournal writes at the offset and drops everything after it, across chunks (model property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant('write' as const), bytes: fc.uint8Array({ maxLength: 12 }) }),
            fc.record({ op: fc.constant('append' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.uint8Array({ maxLength: 12 }) }),
          ),
          { maxLength: 12 },
        ),
        async (steps) => {
          const store = createSqliteUpperStore({ path: shared.file, sandbox: newSandbox('journal') });
          let model: Uint8Array | undefined;
          for (const s of steps) {
            if (s.op === 'write') {
              await store.writeJournal(s.bytes);
              model = s.bytes;
            } else if (model !== undefined) {
              const offset = Math.floor(s.at * model.byteLength);
              await store.appendJournal(offset, s.bytes);
              model = new Uint8Array([...model.subarray(0, offset), ...s.bytes]);
            }
            const got = await store.readJournal();
            expect(got === undefined ? undefined : [...got]).toEqual(model === undefined ? undefined : [...model]);
          }
          await store.drop();
          await store.close();
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a second store cannot write a sandbox the first holds (FS_CONFLICT naming the holder); withLock waits, and lets go after', async () => {
    const sandbox = newSandbox('same-process');
    const a = createSqliteUpperStore({ path: shared.file, sandbox });
    const b = createSqliteUpperStore({ path: shared.file, sandbox });
    await a.writeBlob('a'.repeat(64), new Uint8Array([1]));
    expect(a.locked).toBe(true);
    const err = await b.writeBlob('b'.repeat(64), new Uint8Array([2])).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'FS_CONFLICT', message: expect.stringMatching(new RegExp(`locked by process ${process.pid} on `)) });
    expect(await codeOf(b.lock({ timeoutMs: 30 }))).toBe('FS_CONFLICT');
    let waited = '';
    const waiting = b.withLock(
      async () => {
        await b.writeBlob('b'.repeat(64), new Uint8Array([2]));
        return b.locked;
      },
      { timeoutMs: 60_000, onWait: (h) => (waited = h) },
    );
    await new Promise((r) => setTimeout(r, 60));
    await a.unlock();
    expect(await waiting).toBe(true);
    expect(waited).toMatch(/^process \d+ on /);
    expect(b.locked).toBe(false);
    expect(await a.listBlobs()).toEqual(['a'.repeat(64), 'b'.repeat(64)]);
    await a.close();
    await b.close();
  });

  it('a lock whose holder process is gone is taken over', async () => {
    const sandbox = newSandbox('dead');
    const first = createSqliteUpperStore({ path: shared.file, sandbox });
    await first.writeState(new Uint8Array([1]));
    // As if the holder had died: a process id that is not running.
    const db = openSqlite(shared.file, 'test');
    const dead = JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import('node:os')).hostname(), token: 'gone' });
    await db.transaction('fake a dead holder', (sql) => sql.run('UPDATE dsh_fs_sandboxes SET holder = ? WHERE sandbox = ?', [dead, sandbox]));
    await db.close();
    const second = createSqliteUpperStore({ path: shared.file, sandbox });
    await second.lock();
    await second.writeState(new Uint8Array([2]));
    // The first store lost its lock: it cannot write after.
    expect(await codeOf(first.writeState(new Uint8Array([9])))).toBe('FS_CONFLICT');
    expect(await second.readState()).toEqual(new Uint8Array([2]));
    await first.close();
    await second.close();
  });

  it('an overlay that let go of the lock while another process saved the sandbox is refused (FS_CONFLICT), not saved over it', async () => {
    const sandbox = newSandbox('stale');
    const lower = createMemoryFs({ files: { '/a': 'a' } });
    const first = createSqliteUpperStore({ path: shared.file, sandbox });
    const a = await createOverlayFs({ lower, store: first });
    await a.writeText(await a.resolve('/one'), '1');
    await first.unlock();
    const second = createSqliteUpperStore({ path: shared.file, sandbox });
    const b = await createOverlayFs({ lower, store: second });
    await b.writeText(await b.resolve('/two'), '2');
    await second.unlock();
    expect(await codeOf(a.writeText(await a.resolve('/three'), '3'))).toBe('FS_CONFLICT');
    const reopened = await createOverlayFs({ lower, store: createSqliteUpperStore({ path: shared.file, sandbox }) });
    expect((await reopened.changes()).map((c) => c.path)).toEqual(['/one', '/two']);
    await first.close();
    await second.close();
  });

  it('forks into another sandbox of the same file; reopened, the fork shows its own view', async () => {
    const lower = createMemoryFs({ files: { '/a.txt': 'a\n' } });
    const parentStore = createSqliteUpperStore({ path: shared.file, sandbox: newSandbox('parent') });
    const parent = await createOverlayFs({ lower, store: parentStore });
    await parent.writeText(await parent.resolve('/a.txt'), 'parent\n');
    const name = newSandbox('child');
    const child = await parent.fork({ stateDir: name });
    await child.writeText(await child.resolve('/b.txt'), 'child\n');
    await parent.writeText(await parent.resolve('/c.txt'), 'later\n');
    const childStore = createSqliteUpperStore({ path: shared.file, sandbox: name });
    const reopened = await createOverlayFs({ lower, store: childStore });
    expect(await viewOf(reopened)).toEqual(await viewOf(child));
    expect((await reopened.readText(await reopened.resolve('/a.txt'))).text).toBe('parent\n');
    expect(await reopened.stat(await reopened.resolve('/c.txt'))).toBeUndefined();
    expect(await codeOf(parent.fork({ stateDir: name }))).toBe('FS_ALREADY_EXISTS');
    await parentStore.close();
    await childStore.close();
  });
});
