import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresFs } from '../../src/backends/postgres/index.js';
import type { FsChangeEvent, FsWatch } from '../../src/seam/index.js';
import { SERVER, newWorkspace } from './helpers.js';

// Watches through one pg Client (not a Pool): the Client listens itself, for every workspace on it.

const WHY_SKIPPED = SERVER === undefined ? ' (skipped: needs a real server; set DSH_FS_TEST_PG or run through scripts/ci-postgres.sh)' : '';

/** The next event, or undefined when none came within `ms`. */
async function nextWithin(watch: FsWatch, ms: number): Promise<FsChangeEvent | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((done) => (timer = setTimeout(() => done(undefined), ms)));
  try {
    const r = await Promise.race([watch.next(), timeout]);
    return r === undefined || r.done ? undefined : r.value;
  } finally {
    clearTimeout(timer);
  }
}

const write = async (fs: ReturnType<typeof createPostgresFs>, path: string, text: string) => fs.writeText(await fs.resolve(path), text);

describe.runIf(SERVER !== undefined)(`postgres: watches through one pg Client${WHY_SKIPPED}`, () => {
  it('twelve workspaces on one Client: one notification listener, no warning, each hears its own', async () => {
    const client = new pg.Client({ connectionString: SERVER });
    await client.connect();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const workspaces = Array.from({ length: 12 }, () => newWorkspace('feed-client'));
      const watches = workspaces.map((workspace) => createPostgresFs({ client, workspace }).watch!());
      await Promise.all(watches.map((w) => w.ready));
      expect(client.listenerCount('notification')).toBe(1);
      await write(createPostgresFs({ client, workspace: workspaces[7]! }), '/seven.txt', '7\n');
      expect((await nextWithin(watches[7]!, 15_000))?.path).toBe('/seven.txt');
      expect(await nextWithin(watches[3]!, 300)).toBeUndefined();
      for (const w of watches) await w.return?.();
      expect(client.listenerCount('notification')).toBe(0);
      await new Promise((done) => setImmediate(done));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      await client.end();
    }
  });

  it('two filesystems of one workspace on one Client: one stopping watching leaves the other listening', async () => {
    const client = new pg.Client({ connectionString: SERVER });
    await client.connect();
    try {
      const workspace = newWorkspace('feed-client-shared');
      const [a, b] = [createPostgresFs({ client, workspace }), createPostgresFs({ client, workspace })];
      const [wa, wb] = [a.watch!(), b.watch!()];
      await Promise.all([wa.ready, wb.ready]);
      await wa.return?.();
      await write(a, '/after.txt', 'x\n');
      expect((await nextWithin(wb, 15_000))?.path).toBe('/after.txt');
      await wb.return?.();
    } finally {
      await client.end();
    }
  });
});
