import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { snippetsOf, typecheck, writeSnippets, type Snippet } from './snippets.js';

let dir: string | undefined;
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('documentation TypeScript examples', () => {
  it('compile under strict, with test/types/sdk-fit.ts', { timeout: 300_000 }, async () => {
    const snippets: Snippet[] = [...(await snippetsOf('README.md')), ...(await snippetsOf('docs/tools.md'))];
    // The examples this test is about: losing one (a renamed marker) should fail here, not pass quietly.
    expect(snippets.map((s) => s.name).filter((n) => n !== undefined)).toEqual(['responses-loop', 'agents-editor', 'anthropic-loop']);
    expect(snippets.some((s) => s.file === 'README.md' && s.code.includes('r.value.totalLines'))).toBe(true);
    const written = await writeSnippets(snippets);
    dir = written.dir;
    const { code, output } = await typecheck(dir);
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});
