// The other process of the change-feed tests: writes `text` to `path` in a workspace and prints
// the version it published (as JSON).
import pg from 'pg';
import { createPostgresFs } from '../../dist/backends/postgres/index.js';

const [connectionString, workspace, path, text] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString, max: 1 });
const fs = createPostgresFs({ client: pool, workspace });
const { version } = await fs.writeText(await fs.resolve(path), text);
await pool.end();
process.stdout.write(`${JSON.stringify({ version })}\n`);
