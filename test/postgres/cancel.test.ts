import { describe, expect, it } from 'vitest';
import { Db, type PgQueryable } from '../../src/backends/postgres/client.js';

// A cancel request names a backend, not a statement, and may arrive after the statement it was
// meant for has ended: a connection one was sent for must never run another statement.
describe('postgres: an aborted statement', () => {
  it('is cancelled on the server, and its connection leaves the pool instead of being reused', async () => {
    const sent: string[] = [];
    const released: unknown[] = [];
    let finishSlow!: () => void;
    const conn = {
      processID: 4242,
      query: async (text: string) => {
        sent.push(`conn: ${text}`);
        if (text === 'SELECT slow') await new Promise<void>((done) => (finishSlow = done));
        return { rows: [] };
      },
      release: (destroy?: unknown) => released.push(destroy),
      on: () => undefined,
      removeListener: () => undefined,
    };
    const pool = {
      totalCount: 1,
      connect: async () => conn,
      query: async (text: string, values?: unknown[]) => {
        sent.push(`pool: ${text} ${String(values)}`);
        return { rows: [] };
      },
    } satisfies PgQueryable & Record<string, unknown>;
    const db = new Db(pool);
    const ac = new AbortController();
    const running = db.session('slow', ac.signal, (q) => q('SELECT slow'));
    await new Promise((done) => setImmediate(done));
    ac.abort();
    await expect(running).rejects.toMatchObject({ code: 'FS_ABORTED' });
    // The statement ends later (the cancel came too late for it, say): only then is the connection let go.
    finishSlow();
    await new Promise((done) => setImmediate(done));
    expect(sent).toContain('pool: SELECT pg_cancel_backend($1) 4242');
    expect(released).toEqual([true]);
  });

  it('that was not aborted gives its connection back for reuse', async () => {
    const released: unknown[] = [];
    const conn = { processID: 7, query: async () => ({ rows: [] }), release: (d?: unknown) => released.push(d) };
    const db = new Db({ totalCount: 1, connect: async () => conn, query: async () => ({ rows: [] }) } as PgQueryable);
    await db.session('quick', new AbortController().signal, (q) => q('SELECT 1'));
    expect(released).toEqual([undefined]);
  });
});
