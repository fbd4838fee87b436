// The other process of the change-feed bench: for each line "go <i>" on stdin, replaces the
// file's content with "change <i>" by plain SQL (a new blob of one chunk, the row pointed at it) (the trigger announces it like any change),
// then prints when it started (ms, on the clock both processes share) and how long it took.
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import pg from 'pg';

const [connectionString, workspace, path] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString, max: 1 });
// The system's monotonic clock (CLOCK_MONOTONIC), the same in the bench's process.
const now = () => Number(process.hrtime.bigint()) / 1e6;
for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, i] = line.split(' ');
  if (cmd !== 'go') break;
  const bytes = Buffer.from(`change ${i}\n`);
  const version = `sha256:${createHash('sha256').update(bytes).digest('base64url')}`;
  const started = now();
  await pool.query(
    `WITH b AS (SELECT nextval('dsh_fs_blob_ids') AS blob),
          c AS (INSERT INTO dsh_fs_chunks (blob, pos, bytes) SELECT blob, 0, $3 FROM b)
     UPDATE dsh_fs_entries SET blob = (SELECT blob FROM b), version = $4, size = $5 WHERE workspace = $1 AND path = $2`,
    [workspace, path, bytes, version, bytes.byteLength],
  );
  process.stdout.write(`${JSON.stringify({ i: Number(i), version, started, writeMs: now() - started })}\n`);
}
await pool.end();
