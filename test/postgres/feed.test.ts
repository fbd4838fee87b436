import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresFs, type PgQueryable } from '../../src/backends/postgres/index.js';
import { feedChannel, parsePayload } from '../../src/backends/postgres/provider-watch.js';
import { createHarness } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { isFsError, type FileSystem, type FsChangeEvent, type FsWatch } from '../../src/seam/index.js';
import { fsTools } from '../../src/tools/index.js';
import { ensureBuilt } from '../cli/helpers.js';
import { drainUntil, perPath } from '../seam/feed-helpers.js';
import { SERVER, closeShared, newWorkspace, sharedPglite, sharedPool } from './helpers.js';

const WORKER = fileURLToPath(new URL('./feed-worker.mjs', import.meta.url));
/** Generous: a change by another process arrives well within a second; this only bounds a hang. */
const ARRIVAL_TIMEOUT_MS = 15_000;

const client = async (): Promise<PgQueryable> => (SERVER === undefined ? await sharedPglite() : sharedPool());

afterAll(closeShared);

/** The next event, or a failure after the timeout. */
async function nextEvent(watch: FsWatch): Promise<FsChangeEvent> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no change event arrived before the timeout')), ARRIVAL_TIMEOUT_MS);
  });
  try {
    const r = await Promise.race([watch.next(), timeout]);
    if (r.done) throw new Error('the watch ended');
    return r.value;
  } finally {
    clearTimeout(timer);
  }
}

describe(`postgres: the change feed (W1, ${SERVER === undefined ? 'PGlite' : 'server'})`, () => {
  it("another filesystem's writes and removals on the workspace arrive with their versions, in order (property)", async () => {
    const db = await client();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ path: fc.constantFrom('/d/a', '/d/b', '/d/c'), text: fc.option(fc.constantFrom('', 'x', 'yy'), { nil: undefined }) }), { maxLength: 12 }),
        async (ops) => {
          const workspace = newWorkspace('feed');
          const writer = createPostgresFs({ client: db, workspace });
          const reader = createPostgresFs({ client: db, workspace });
          await writer.mkdir(await writer.resolve('/d'));
          const watch = reader.watch!();
          await watch.ready;
          const expected: Omit<FsChangeEvent, 'owner'>[] = [];
          for (const { path, text } of ops) {
            const target = await writer.resolve(path);
            try {
              if (text === undefined) {
                await writer.remove(target);
                expected.push({ kind: 'remove', path });
              } else {
                const { version } = await writer.writeText(target, text);
                expected.push({ kind: 'write', path, version });
              }
            } catch (err) {
              if (!isFsError(err, 'FS_NOT_FOUND')) throw err;
            }
          }
          await writer.mkdir(await writer.resolve('/sentinel'));
          const got = await drainUntil(watch, '/sentinel');
          await watch.return();
          expect(perPath(got)).toEqual(perPath(expected));
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: SERVER === undefined ? 5 : 25 },
    );
  });

  it('directories, moves, modes and links arrive too; the root confines what is seen; another workspace is not heard', async () => {
    const db = await client();
    const workspace = newWorkspace('feed-kinds');
    const writer = createPostgresFs({ client: db, workspace });
    const reader = createPostgresFs({ client: db, workspace, root: '/w' });
    const other = createPostgresFs({ client: db, workspace: newWorkspace('feed-other') });
    await writer.mkdir(await writer.resolve('/w'));
    const watch = reader.watch!();
    await watch.ready;
    const at = (p: string) => writer.resolve(p, { noFollow: true });
    await other.writeText(await other.resolve('/w/elsewhere'), 'x');
    await writer.writeText(await at('/outside'), 'o');
    await writer.mkdir(await at('/w/d'));
    const { version } = await writer.writeText(await at('/w/d/f'), 'f');
    await writer.setExecutable!(await at('/w/d/f'), true);
    await writer.rename(await at('/w/d/f'), await at('/w/d/g'));
    await writer.symlink!(await at('/w/l'), 'd/g');
    await writer.rmdir(await at('/w/d'), { recursive: true });
    await writer.mkdir(await at('/w/sentinel'));
    const got = await drainUntil(watch, '/w/sentinel');
    await watch.return();
    expect(got.slice(0, 5)).toEqual([
      { kind: 'mkdir', path: '/w/d' },
      { kind: 'write', path: '/w/d/f', version },
      { kind: 'mode', path: '/w/d/f' },
      { kind: 'rename', path: '/w/d/g', from: '/w/d/f', version },
      { kind: 'link', path: '/w/l' },
    ]);
    // One event per row the recursive removal deleted, in no particular order.
    expect(got.slice(5).map((e) => `${e.kind} ${e.path}`).sort()).toEqual(['remove /w/d/g', 'rmdir /w/d']);
  });

  it('a client that can only run statements cannot watch: FS_UNSUPPORTED from ready and next()', async () => {
    const db = await client();
    const bare: PgQueryable = { query: (text, values) => db.query(text, values) };
    const watch = createPostgresFs({ client: bare, workspace: newWorkspace('feed-bare') }).watch!();
    await expect(watch.ready).rejects.toMatchObject({ name: 'FsError', code: 'FS_UNSUPPORTED' });
    await expect(watch.next()).rejects.toMatchObject({ code: 'FS_UNSUPPORTED' });
  });

  it('the trigger payload: a channel per workspace, malformed payloads ignored', () => {
    expect(feedChannel('ws')).toMatch(/^dsh_fs_[0-9a-f]{24}$/);
    expect(feedChannel('ws')).not.toBe(feedChannel('ws2'));
    expect(parsePayload('{"k":"write","p":"/a","v":"v1"}')).toEqual({ kind: 'write', path: '/a', version: 'v1' });
    expect(parsePayload('{"k":"rename","p":"/b","f":"/a","v":null}')).toEqual({ kind: 'rename', path: '/b', from: '/a' });
    for (const bad of ['', 'null', '{"k":"nope","p":"/a"}', '{"k":"rename","p":"/a"}', '{"k":"write"}']) expect(parsePayload(bad)).toBeUndefined();
  });

  it('in one process: an owner on one filesystem is told of a change made through another filesystem of the workspace', async () => {
    const db = await client();
    const workspace = newWorkspace('feed-policy');
    const other = createPostgresFs({ client: db, workspace });
    await other.writeText(await other.resolve('/src/a.ts'), 'one\n');
    const { run, policy } = await agent(createPostgresFs({ client: db, workspace }));
    await run('read', { file_path: '/src/a.ts' });
    await other.writeText(await other.resolve('/src/a.ts'), 'two\n');
    const note = await untilNote(run);
    expect(note).toContain('Note: /src/a.ts, which you read, was changed by another writer since; read it again before editing it.');
    policy.close();
  });
});

/** A harness on `fs` with the observation policy watching; `run` calls a tool as owner "B". */
async function agent(fs: FileSystem) {
  const policy = createObservationPolicy({ watch: true });
  const ctx = createHarness({ fs, plugins: [policy, fsTools()] });
  // The policy's subscription is live once a watch of the same provider is.
  const probe = fs.watch!();
  await probe.ready;
  await probe.return();
  const run = (tool: string, args: Record<string, unknown>) => ctx.tools.execute(tool, args, { owner: 'B' });
  return { run, policy };
}

/** Calls a harmless tool until its result carries the policy's note (or the timeout passes). */
async function untilNote(run: (tool: string, args: Record<string, unknown>) => Promise<{ text: string }>): Promise<string> {
  const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const { text } = await run('list', { path: '/' });
    if (text.includes('Note:')) return text;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no note arrived before the timeout');
}

const WHY_SKIPPED = SERVER === undefined ? ' (skipped: needs a real server; set DSH_FS_TEST_PG or run through scripts/ci-postgres.sh)' : '';

describe.runIf(SERVER !== undefined)(`postgres: the change feed between two processes${WHY_SKIPPED}`, () => {
  it('a pg Pool of one connection cannot watch (listening would leave the filesystem none): FS_UNSUPPORTED, not a hang', async () => {
    const single = new pg.Pool({ connectionString: SERVER, max: 1 });
    try {
      const watch = createPostgresFs({ client: single, workspace: newWorkspace('feed-single') }).watch!();
      await expect(watch.ready).rejects.toMatchObject({ code: 'FS_UNSUPPORTED' });
    } finally {
      await single.end();
    }
  });

  // Generous: the first test to need dist/ builds it.
  it("acceptance: the second process is told, in its next tool result, of the first's change to a file it read, before it edits it", { timeout: 300_000 }, async () => {
    await ensureBuilt();
    const workspace = newWorkspace('feed-processes');
    const fs = createPostgresFs({ client: sharedPool(), workspace });
    await fs.writeText(await fs.resolve('/src/a.ts'), 'one\n');
    const { run, policy } = await agent(fs);
    const read = await run('read', { file_path: '/src/a.ts' });
    expect(read.text).not.toContain('Note:');

    const written = await new Promise<{ version: string }>((resolve, reject) => {
      execFile(process.execPath, [WORKER, SERVER!, workspace, '/src/a.ts', 'changed by the first process\n'], (err, stdout, stderr) => {
        if (err) reject(new Error(`worker failed: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as { version: string });
      });
    });
    expect(written.version).toMatch(/.+/);

    const note = await untilNote(run);
    expect(note).toContain('Note: /src/a.ts, which you read, was changed by another writer since; read it again before editing it.');
    // Had it edited anyway, the edit would have been refused; told, it reads again and succeeds.
    const stale = await run('edit', { file_path: '/src/a.ts', old_string: 'one', new_string: '1' });
    expect(stale.isError).toBe(true);
    await run('read', { file_path: '/src/a.ts' });
    const edit = await run('edit', { file_path: '/src/a.ts', old_string: 'first', new_string: 'other' });
    expect(edit.isError).toBe(false);
    expect(edit.text).not.toContain('Note:');
    policy.close();
  });
});
