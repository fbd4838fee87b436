import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vitest/config';

// BENCH_PROF=<dir> writes a V8 CPU profile of the run there (open it in Chrome DevTools).
const profile = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(repo, 'src');
const dist = join(repo, 'dist');
const fromSource = process.env.BENCH_FROM_SOURCE === '1';

/** Source files newer than their build (or without one): the bench would measure old code. */
function staleBuild(): string[] {
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) {
        const built = join(dist, relative(src, path)).replace(/\.ts$/, '.js');
        if (!existsSync(built) || statSync(built).mtimeMs < statSync(path).mtimeMs) stale.push(relative(repo, path));
      }
    }
  };
  walk(src);
  return stale;
}

/**
 * The bench measures the package as it ships: imports of `src/**.ts` load `dist/**.js`, run by
 * Node itself. Through vitest's module runner every call between modules goes through an
 * accessor, which added 2–5 µs to each tool call here.
 */
function builtPackage(): Plugin {
  return {
    name: 'dsh-fs-bench-built-package',
    enforce: 'pre',
    resolveId(id, importer) {
      if (importer === undefined || !id.startsWith('.')) return null;
      const target = resolve(dirname(importer), id);
      if (!target.startsWith(`${src}/`)) return null;
      return join(dist, relative(src, target)).replace(/\.ts$/, '.js');
    },
  };
}

if (!fromSource) {
  const stale = staleBuild();
  if (stale.length > 0) {
    throw new Error(
      `the bench measures dist/, which is older than ${stale.length} source file(s) (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', …' : ''}): run \`npm run build\` (npm run bench does), or set BENCH_FROM_SOURCE=1 to measure the source through vitest`,
    );
  }
}

export default defineConfig({
  resolve: { conditions: fromSource ? ['dsh-fs-source'] : [] },
  plugins: fromSource ? [] : [builtPackage()],
  test: {
    include: ['bench/run.ts'],
    pool: 'forks',
    maxWorkers: 1,
    // Heap-per-file figures need full collections on demand.
    execArgv: ['--expose-gc', ...profile],
    // Progress and the table go straight to the terminal.
    disableConsoleIntercept: true,
    testTimeout: 0,
    reporters: ['dot'],
    // The built package runs as Node loads it, outside the module runner.
    server: { deps: { external: fromSource ? [] : [/\/dist\//] } },
  },
});
