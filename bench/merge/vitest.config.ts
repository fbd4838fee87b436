import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Only the merge measurement (run by hand, see merge-vs-commit.measure.ts).
export default defineConfig({
  test: { root: fileURLToPath(new URL('../..', import.meta.url)), include: ['bench/merge/*.measure.ts'], testTimeout: 1_800_000 },
});
