import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findCycles, folderGraph, importGraph } from './import-graph.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

describe('imports in src', () => {
  it('form no cycle between files, type-only imports included', () => {
    expect(findCycles(importGraph(SRC, true)).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('form no cycle between folders (each backend is a folder of its own)', () => {
    expect(findCycles(folderGraph(importGraph(SRC, true))).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('a cycle is found, with or without type-only edges, in files and in folders', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-fs-cycles-'));
    try {
      mkdirSync(join(dir, 'a'));
      mkdirSync(join(dir, 'b'));
      writeFileSync(join(dir, 'a/one.ts'), "import { two } from '../b/two.js';\nexport const one = two;\n");
      writeFileSync(join(dir, 'b/two.ts'), "import type { Three } from './three.js';\nexport const two: Three = 2;\n");
      writeFileSync(join(dir, 'b/three.ts'), "import { one } from '../a/one.js';\nexport type Three = typeof one;\n");
      expect(findCycles(importGraph(dir, true))).toEqual([['a/one.ts', 'b/two.ts', 'b/three.ts', 'a/one.ts']]);
      expect(findCycles(importGraph(dir, false))).toEqual([]);
      expect(findCycles(folderGraph(importGraph(dir, true)))).toEqual([['a', 'b', 'a']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
