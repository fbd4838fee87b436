import { defineConfig } from 'vitest/config';

// BENCH_PROF=<dir> writes a V8 CPU profile of the run there (open it in Chrome DevTools).
const profile = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [];

export default defineConfig({
  resolve: { conditions: ['dsh-fs-source'] },
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
  },
});
