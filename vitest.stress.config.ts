import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:stress`: the whole suite at full scale (DSH_FS_SCALE=full) with every fast-check
// property run FC_FACTOR (10) times as often from fresh seeds, to shake out rare counterexamples
// before a seed finds them in CI.
export default mergeConfig(
  base,
  defineConfig({
    resolve: { alias: [{ find: /^fast-check$/, replacement: fileURLToPath(new URL('./test/stress/fast-check.ts', import.meta.url)) }] },
    test: { testTimeout: 1_200_000, env: { DSH_FS_SCALE: 'full' } },
  }),
);
