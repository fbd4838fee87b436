import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/**
 * The static imports between the files of a source tree that survive compilation: `import type`
 * and `export type` are erased and left out; `import { type X }` stays (verbatimModuleSyntax
 * keeps it as an import for its side effects). Dynamic `import()` is lazy and not an edge.
 */
export function importGraph(root: string, withTypes = false): Map<string, string[]> {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(ts|cts|mts)$/.test(f) && !f.endsWith('.d.ts'));
  const graph = new Map<string, string[]>();
  const statement = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]/gm;
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const edges: string[] = [];
    for (const [, , typeOnly, specifier] of text.matchAll(statement)) {
      if (typeOnly && !withTypes) continue;
      const target = relative(root, resolve(dirname(join(root, file)), specifier!)).replace(/\.(c|m)?js$/, '.$1ts');
      edges.push(target.replace(/\\/g, '/'));
    }
    graph.set(file.replace(/\\/g, '/'), edges);
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the files in import order, first repeated last. */
export function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}

/** The same graph between folders: a file's folder is its first directory (two under backends/). */
export function folderGraph(files: Map<string, string[]>): Map<string, string[]> {
  const folder = (file: string) => file.split('/').slice(0, file.startsWith('backends/') ? 2 : 1).join('/');
  const graph = new Map<string, string[]>();
  for (const [file, edges] of files) {
    const from = folder(file);
    const targets = new Set([...(graph.get(from) ?? []), ...edges.map(folder).filter((to) => to !== from)]);
    graph.set(from, [...targets].sort());
  }
  return graph;
}

/** The files `entry` loads at run time (static imports that survive compilation), itself included. */
export function loaded(entry: string, graph = importGraph(SRC)): string[] {
  const seen = new Set<string>([entry]);
  for (const file of seen) for (const next of graph.get(file) ?? []) if (graph.has(next)) seen.add(next);
  return [...seen].sort();
}

/** The packages a file imports statically, type-only imports left out. */
export function packagesOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\s+from\s+)?['"]([^.'"][^'"]*)['"]/gm)].map((m) => m[1]!);
}
