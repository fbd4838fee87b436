import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, importGraph, loaded, packagesOf } from './import-graph.js';

// What each CLI invocation loads before it does anything: every command's modules are imported by
// main.ts when that command runs, so --version and a run on overlayfs stay cheap to start
// (docs/run.md, "Figures"). Static imports that survive compilation are what Node loads up front.

const graph = importGraph(SRC);
const packages = (files: readonly string[]) => [...new Set(files.flatMap(packagesOf))].filter((p) => !p.startsWith('node:')).sort();
/** A file's folder: its first directory, two under backends/. */
const folder = (file: string) => file.split('/').slice(0, file.startsWith('backends/') ? 2 : 1).join('/');
const folders = (files: readonly string[]) => [...new Set(files.map(folder))].sort();

/** The command modules main.ts imports on demand. */
function commandModules(): string[] {
  const main = readFileSync(join(SRC, 'cli/main.ts'), 'utf8');
  return [...new Set([...main.matchAll(/import\('\.\/([\w-]+)\.js'\)/g)].map((m) => `cli/${m[1]}.ts`))].sort();
}

/** Packages that take long to load and that no command but serve and demo needs at start. */
const HEAVY = ['zod', '@modelcontextprotocol/sdk', 'memfs'];
const HEAVY_FOLDERS = ['tools', 'mcp', 'harness/tools.ts', 'backends/memory', 'adapters'];

describe('the CLI at start', () => {
  it('--version, --help and argument errors load main, the argument parser and nothing else', () => {
    const files = loaded('cli/main.ts', graph);
    expect(folders(files)).toEqual(['cli', 'peers.ts', 'seam']);
    expect(files.filter((f) => folder(f) === 'seam')).toEqual(['seam/errors.ts']);
    expect(packages(files)).toEqual([]);
    expect(files.length).toBeLessThanOrEqual(8);
  });

  it('main imports every command module on demand: no command module is loaded up front', () => {
    const upFront = loaded('cli/main.ts', graph);
    expect(commandModules()).toEqual(expect.arrayContaining(['cli/review.ts', 'cli/run.ts', 'cli/serve-command.ts', 'cli/help.ts']));
    expect(commandModules().filter((m) => upFront.includes(m))).toEqual([]);
  });

  it('run on overlayfs loads no FUSE, database, tool, MCP, review or search code, and no package', () => {
    const files = loaded('cli/run.ts', graph);
    expect(folders(files)).toEqual(['backends/local', 'backends/overlay', 'cli', 'lazy.ts', 'run', 'sandbox', 'seam']);
    expect(packages(files)).toEqual([]);
    // The overlay's review (and the ignore rules and diff package behind it) is loaded by the first review call.
    expect(files.filter((f) => /overlay\/(review-(status|diff|commit|discard|ignored)|file-diff)\.ts$/.test(f))).toEqual([]);
    // So are the reads and writes of both backends, by the first read or write.
    expect(files.filter((f) => /overlay\/provider-(read|write|dirs|rename)\.ts$|local\/(read|swap|stream|rename|links|modes)\.ts$/.test(f))).toEqual([]);
  });

  it('no command but serve and demo loads the tools, zod, the MCP SDK or the memory backend at start', () => {
    for (const module of commandModules().filter((m) => m !== 'cli/serve-command.ts' && m !== 'cli/demo.ts')) {
      const files = loaded(module, graph);
      const heavy = [...packages(files).filter((p) => HEAVY.some((h) => p === h || p.startsWith(`${h}/`))), ...files.filter((f) => HEAVY_FOLDERS.some((h) => f === h || f.startsWith(`${h}/`)))];
      expect({ module, heavy }).toEqual({ module, heavy: [] });
    }
  });

  it('status, diff and the history commands load none of the ignore rules (picomatch, braces) before a sandbox has changes to show', () => {
    for (const module of ['cli/review.ts', 'cli/history.ts']) {
      const rules = packages(loaded(module, graph)).filter((p) => ['ignore', 'picomatch', 'braces', 'diff'].includes(p));
      expect({ module, rules }).toEqual({ module, rules: [] });
    }
  });

  it('commands over a directory load no PostgreSQL or SQLite backend until a command reaches one', () => {
    for (const module of ['cli/review.ts', 'cli/review-hunks.ts', 'cli/history.ts', 'cli/sandbox.ts', 'cli/run.ts', 'cli/mount.ts', 'cli/audit.ts']) {
      const databases = folders(loaded(module, graph)).filter((f) => f === 'backends/postgres' || f === 'backends/sqlite');
      expect({ module, databases }).toEqual({ module, databases: [] });
    }
  });

  it('the checks see what serve loads', () => {
    const files = loaded('cli/serve-command.ts', graph);
    expect(packages(files)).toEqual(expect.arrayContaining(['zod']));
    expect(folders(files)).toEqual(expect.arrayContaining(['tools', 'mcp', 'harness']));
  });
});
