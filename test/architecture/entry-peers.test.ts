import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PEERS } from '../../src/peers.js';
import { importGraph } from './import-graph.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** The files `entry` loads at run time (static imports that survive compilation), itself included. */
function loaded(entry: string): string[] {
  const graph = importGraph(SRC);
  const seen = new Set<string>([entry]);
  for (const file of seen) for (const next of graph.get(file) ?? []) if (graph.has(next)) seen.add(next);
  return [...seen].sort();
}

/** The packages a file imports statically, type-only imports left out. */
function packagesOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\s+from\s+)?['"]([^.'"][^'"]*)['"]/gm)].map((m) => m[1]!);
}

describe('the main entry', () => {
  it('loads no optional peer: createSandbox and the rest work without any installed', () => {
    const files = loaded('index.ts');
    expect(files).toContain('sandbox/index.ts');
    const peers = Object.keys(PEERS);
    const offending = files.flatMap((f) => packagesOf(f).filter((p) => peers.some((peer) => p === peer || p.startsWith(`${peer}/`))).map((p) => `${f}: ${p}`));
    expect(offending).toEqual([]);
  });

  it('the check sees a static import of a peer, and not a type-only one', () => {
    expect(packagesOf('conformance/arbitraries.ts')).toContain('fast-check');
    expect(packagesOf('cli/stdio-transport.ts')).toContain('@modelcontextprotocol/sdk/types.js');
    expect(packagesOf('mcp/raw-args.ts')).toEqual([]);
  });
});
