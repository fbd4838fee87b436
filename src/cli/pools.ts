// The database pools a --postgres command opened; main ends them without loading the backend.
import type pg from 'pg';
import { requirePeer } from '../peers.js';

const pools = new Set<pg.Pool>();

/** One pool per command; `closePools` ends them so the process can exit. */
export function poolFor(url: string): pg.Pool {
  // pg is an optional peer, loaded by the commands that reach a database.
  const { Pool } = requirePeer<typeof pg>('pg', 'pg', '--postgres');
  const pool = new Pool({ connectionString: url, max: 4, application_name: 'dsh-fs' });
  // An idle connection the server closed: the next statement gets another one.
  pool.on('error', () => {});
  pools.add(pool);
  return pool;
}

export async function closePools(): Promise<void> {
  const all = [...pools];
  pools.clear();
  // `end` waits for every checked-out connection; a command that is done must still exit, so
  // the wait is bounded (the server ends a session whose connection closes with the process).
  const ended = Promise.all(all.map((p) => p.end().catch(() => {})));
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, POOL_END_MS)));
  await Promise.race([ended, bound]);
  clearTimeout(timer);
}

const POOL_END_MS = 2000;
