import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness } from '../../src/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { fsTools, searchTools } from '../../src/tools/index.js';
import { REPO } from './snippets.js';

const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const pages = ['README.md', ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The public names of each entry point, as api/report.md lists them (a test keeps it equal to the code). */
function publicNames(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  let entry: Set<string> | undefined;
  for (const line of read('api/report.md').split('\n')) {
    const section = /^## (\S+) \(/.exec(line);
    if (section) out.set(section[1]!, (entry = new Set()));
    const name = /^### (\S+) \(/.exec(line);
    if (name && entry) entry.add(name[1]!);
  }
  return out;
}

describe('names the docs show are exported', () => {
  const names = publicNames();

  it('every name a doc imports from an entry point is one of its public names', () => {
    const missing: string[] = [];
    for (const page of pages) {
      for (const [, list, entry] of read(page).matchAll(/import \{([^}]*)\} from '(dsh-fs[^']*)'/g)) {
        for (const spec of list!.split(',').map((s) => s.trim().replace(/^type\s+/, '')).filter(Boolean)) {
          const name = spec.split(/\s+as\s+/)[0]!;
          if (!names.get(entry!)?.has(name)) missing.push(`${page}: ${name} from ${entry}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('every schema, tool plugin, definitions helper or renderer a paragraph says is exported is one', () => {
    const all = new Set([...names.values()].flatMap((s) => [...s]));
    const missing: string[] = [];
    for (const page of pages) {
      for (const paragraph of read(page).split(/\n\s*\n/)) {
        if (!/\bexport(ed|s)?\b/.test(paragraph)) continue;
        for (const [, name] of paragraph.matchAll(/`([a-z]\w*)(?:\([^`]*\))?`/g)) {
          if (/(Schema|Tools?|Definitions)$|^render[A-Z]/.test(name!) && !all.has(name!)) missing.push(`${page}: ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
    // The paragraph this check was written for names the search schemas.
    expect(read('docs/search.md')).toMatch(/`globSchema` and `grepSchema`/);
  });

  it("the helpers docs/providers.md lets a provider import are exported by the main entry", () => {
    const table = /<!-- provider-helpers -->\n([^]*?)<!-- \/provider-helpers -->/.exec(read('docs/providers.md'))![1]!;
    const listed = [...table.matchAll(/`(\w+)`/g)].map((m) => m[1]!).filter((n) => !n.startsWith('FS_'));
    expect(listed).toEqual(expect.arrayContaining(['throwIfAborted', 'isWithin', 'DEFAULT_MAX_TEXT_BYTES', 'isFsError']));
    expect(listed.filter((n) => !names.get('dsh-fs')!.has(n))).toEqual([]);
  });

  it("docs/search.md's tool list is what the harness lists", async () => {
    const shown = /ctx\.tools\.list\(\)\.map\(\(t\) => t\.name\); \/\/ (\[.*\])/.exec(read('docs/search.md'))![1]!;
    const ctx = createHarness({ fs: createMemoryFs(), plugins: [fsTools(), searchTools()] });
    expect(JSON.parse(shown.replaceAll("'", '"'))).toEqual(ctx.tools.list().map((t) => t.name));
  });
});
