import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Vite does not resolve a package's imports of itself ('dsh-fs', 'dsh-fs/conformance', ...), which
// examples use as a third party would: map each export of package.json to its source file.
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  name: string;
  exports: Record<string, string | { 'dsh-fs-source': string }>;
};
const selfReferences = Object.entries(pkg.exports).flatMap(([subpath, target]) => (typeof target === 'string' ? [] : [{
  find: new RegExp(`^${(pkg.name + subpath.slice(1)).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`),
  replacement: fileURLToPath(new URL(target['dsh-fs-source'], import.meta.url)),
}]));

export default defineConfig({
  resolve: { conditions: ['dsh-fs-source'], alias: selfReferences },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
