import { EventEmitter } from 'node:events';
import { expect, it } from 'vitest';
import type { UpperContext } from '../../src/backends/postgres/upper-context.js';
import { acquire, unlock } from '../../src/backends/postgres/upper-lock.js';

// The sandbox lock on a Pool listens for the errors of its connection while held. The connection
// goes back to the pool after, and serves the next lock: the listener must go with the lock.
it('postgres: a sandbox lock taken and let go again and again leaves no listener on its pooled connection', async () => {
  const conn = Object.assign(new EventEmitter(), {
    query: async (text: string) => ({ rows: text.includes('try_advisory_lock') ? [{ ok: true }] : [] }),
    release: () => undefined,
  });
  const pool = { totalCount: 1, connect: async () => conn, query: conn.query };
  const ctx = { client: pool, sandbox: 's', where: 'sandbox "s"', key: '1', ready: async () => {}, held: undefined, acquiring: undefined } as unknown as UpperContext;
  for (let i = 0; i < 12; i++) {
    await acquire(ctx, {});
    expect(conn.listenerCount('error')).toBe(1);
    await unlock(ctx);
    expect(conn.listenerCount('error')).toBe(0);
  }
});
