import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Vite does not resolve a package's imports of itself ('dsh-fs', 'dsh-fs/conformance', ...), which
// examples use as a third party would: map each export of package.json to its source file.
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  name: string;
  exports: Record<string, string | { 'dsh-fs-source'?: string; source?: string }>;
};
// The condition is 'dsh-fs-source', not 'source': dependencies (eventsource-parser, under ai) publish
// their own 'source' entries, which tsc and vite would then compile. A plain 'source' key is still read here.
const sourceOf = (target: string | { 'dsh-fs-source'?: string; source?: string }) =>
  typeof target === 'string' ? undefined : (target['dsh-fs-source'] ?? target.source);
const selfReferences = Object.entries(pkg.exports).flatMap(([subpath, target]) => (sourceOf(target) === undefined ? [] : [{
  find: new RegExp(`^${(pkg.name + subpath.slice(1)).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`),
  replacement: fileURLToPath(new URL(sourceOf(target)!, import.meta.url)),
}]));

// The slowest end-to-end files (real programs through `dsh-fs run`, the kit through a mount, an MCP
// server and a mount on one sandbox, writers killed mid-write, files of several MiB-sized chunks in
// PGlite) run at full scale only:
// `npm run test:full`, which CI runs after `npm test`, and `npm run test:stress`.
// Any DSH_FS_SCALE (quick, full, heavy) runs them all: `DSH_FS_SCALE=quick npx vitest run test/reliability`.
const fullScale = process.env.DSH_FS_SCALE !== undefined || process.env.DSH_FS_HEAVY === '1';
// The reliability suite runs there at full size only, and so do the command-line MCP server,
// audit-log and output files (each spawns servers; test/mcp covers the server in-process) and the
// sandbox kept in PostgreSQL (CI runs test:full against a server too).
const fullScaleOnly = [
  'test/mount/cli.test.ts',
  'test/run/cli.test.ts',
  'test/run/git.test.ts',
  'test/review/cli.test.ts',
  'test/review/web-cli.test.ts',
  'test/mount/conformance.test.ts',
  'test/mount/agents.test.ts',
  'test/overlay/commit-crash.test.ts',
  'test/local/crash.test.ts',
  'test/postgres/chunks.test.ts',
  'test/reliability/**',
  'test/cli/mcp.test.ts',
  'test/cli/audit.test.ts',
  'test/cli/output.test.ts',
  'test/postgres/overlay.test.ts',
  'test/postgres/upper.test.ts',
];

export default defineConfig({
  resolve: { conditions: ['dsh-fs-source'], alias: selfReferences },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/.git/**', '**/dist/**', ...(fullScale ? [] : fullScaleOnly)],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Most files wait on I/O and child processes: vitest's default (cores - 1) leaves one of two cores idle.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
