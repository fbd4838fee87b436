import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresFs, type PgQueryable } from '../../src/backends/postgres/index.js';
import { FsError, type FileSystem, type FsChange } from '../../src/seam/index.js';
import { codeOf } from '../support/code-of.js';
import { SERVER, closeShared, newWorkspace, rowHooks, sharedPglite, sharedPool } from './helpers.js';

const SUBJECTS: [string, () => Promise<PgQueryable> | PgQueryable][] = [
  ['PGlite', sharedPglite],
  ...(SERVER === undefined ? [] : ([['server', sharedPool]] as [string, () => PgQueryable][])),
];

afterAll(closeShared);

const utf8 = (s: string) => new TextEncoder().encode(s);
const seed = { '/ws/a.txt': 'a\n', '/ws/b.txt': 'b\n', '/ws/c.txt': 'c\n' };

/**
 * The client with every statement counted once `armed`, the `failAt`-th of them failing as a lost
 * connection would. Wraps what the provider uses: a PGlite's transaction, a pool's connections.
 */
function faulty(client: PgQueryable) {
  const state = { armed: false, count: 0, failAt: 0 };
  const wrap = (q: PgQueryable['query'], self: unknown): PgQueryable['query'] =>
    async (text, values) => {
      if (state.armed && !/^(BEGIN|COMMIT|ROLLBACK)/.test(text.trim()) && ++state.count === state.failAt) {
        throw Object.assign(new Error('injected failure'), { code: 'XX000' });
      }
      return q.call(self, text, values);
    };
  const c = client as PgQueryable & {
    transaction?: <T>(fn: (tx: PgQueryable) => Promise<T>) => Promise<T>;
    connect?: () => Promise<PgQueryable & { release(d?: unknown): void }>;
    totalCount?: number;
  };
  const out: Record<string, unknown> = { query: wrap(c.query, c) };
  if (c.transaction) out.transaction = <T>(fn: (tx: PgQueryable) => Promise<T>) => c.transaction!((tx) => fn({ query: wrap(tx.query, tx) }));
  if (c.connect) {
    out.connect = async () => {
      const conn = await c.connect!();
      return Object.assign(Object.create(conn), { query: wrap(conn.query, conn), release: (d?: unknown) => conn.release(d) });
    };
    Object.defineProperty(out, 'totalCount', { get: () => c.totalCount });
  }
  return { client: out as unknown as PgQueryable, state };
}

async function batchOf(fs: FileSystem): Promise<FsChange[]> {
  const at = (p: string) => fs.resolve(p);
  const version = async (p: string) => (await fs.stat(await at(p)))!.version;
  return [
    { kind: 'write', target: await at('/ws/a.txt'), bytes: utf8('A\n'), intent: { kind: 'replaceIfVersion', version: await version('/ws/a.txt') } },
    { kind: 'remove', target: await at('/ws/b.txt'), version: await version('/ws/b.txt') },
    { kind: 'write', target: await at('/ws/new/deep/n.txt'), bytes: utf8('new\n'), intent: { kind: 'createIfAbsent' } },
    { kind: 'move', from: await at('/ws/c.txt'), to: await at('/ws/d.txt'), expect: await version('/ws/c.txt'), replace: false, bytes: utf8('D\n') },
  ];
}

describe.each(SUBJECTS)('postgres applyBatch over %s: one transaction', (_name, getClient) => {
  const setup = async () => {
    const raw = await getClient();
    const workspace = newWorkspace('batch');
    const { client, state } = faulty(raw);
    const fs = createPostgresFs({ client, workspace, root: '/ws' });
    await fs.provider.ready();
    const hooks = rowHooks(raw, workspace);
    for (const [p, t] of Object.entries(seed)) await hooks.writeBytes(p, utf8(t));
    const files = async () => {
      const out: Record<string, string | undefined> = {};
      for (const p of ['/ws/a.txt', '/ws/b.txt', '/ws/c.txt', '/ws/d.txt', '/ws/new/deep/n.txt']) {
        const b = await hooks.readBytes(p);
        out[p] = b && Buffer.from(b).toString('utf8');
      }
      return out;
    };
    return { fs, state, files, hooks };
  };

  it('a failure at any statement of the transaction writes nothing', async () => {
    // The n-th statement fails, for n = 1, 2, … until the batch has fewer statements than n.
    let failed = 0;
    for (let n = 1; ; n++) {
      const { fs, state, files } = await setup();
      const before = await files();
      const changes = await batchOf(fs);
      Object.assign(state, { armed: true, count: 0, failAt: n });
      const code = await codeOf(fs.applyChanges!(changes));
      state.armed = false;
      const after = { '/ws/a.txt': 'A\n', '/ws/b.txt': undefined, '/ws/c.txt': undefined, '/ws/d.txt': 'D\n', '/ws/new/deep/n.txt': 'new\n' };
      if (code === 'ok') {
        expect(await files()).toEqual(after);
        break;
      }
      failed++;
      expect(code, `statement ${n}`).toBe('FS_IO_ERROR');
      expect(await files(), `statement ${n}`).toEqual(before);
      // Nothing stayed of the failed batch: the same one applies now.
      await fs.applyChanges!(changes);
      expect(await files(), `after statement ${n}`).toEqual(after);
    }
    // Locking, two removals, an update, a create with its parents, the moved file's write.
    expect(failed).toBeGreaterThanOrEqual(6);
  });

  it('a guard broken in the last change rolls back the changes before it', async () => {
    const { fs, files, hooks } = await setup();
    const changes = await batchOf(fs);
    await hooks.writeBytes('/ws/c.txt', utf8('theirs\n'));
    const before = await files();
    const err = await fs.applyChanges!(changes).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FsError);
    expect((err as FsError).code).toBe('FS_STALE_VERSION');
    expect((err as FsError).message).toMatch(/"\/ws\/c\.txt" \(file 4 of 4\).*nothing was changed/);
    expect(await files()).toEqual(before);
  });

  it('a moved file keeps its executable bit', async () => {
    const { fs } = await setup();
    const c = await fs.resolve('/ws/c.txt');
    await fs.setExecutable!(c, true);
    const changes = await batchOf(fs);
    await fs.applyChanges!(changes);
    expect((await fs.stat(await fs.resolve('/ws/d.txt')))?.executable).toBe(true);
    expect((await fs.stat(await fs.resolve('/ws/a.txt')))?.executable).toBe(false);
  });
});
