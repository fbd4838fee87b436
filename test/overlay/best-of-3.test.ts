import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as memory from '../../src/backends/memory/index.js';
import * as overlay from '../../src/backends/overlay/index.js';

/** The fenced block tagged `best-of-3` in docs/overlay.md, its imports taken from the modules here. */
function docExample(): string {
  const doc = readFileSync(new URL('../../docs/overlay.md', import.meta.url), 'utf8');
  const block = /```js best-of-3\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/overlay.md has no best-of-3 example');
  return block.replace(/^import \{ ([^}]+) \} from '(dsh-fs\/[a-z]+)';$/gm, (_, names: string, from: string) => {
    return `const { ${names} } = modules[${JSON.stringify(from)}];`;
  });
}

describe('docs/overlay.md: best of three', () => {
  it('runs as written: three forks, three edits, a diff of each against the parent, adopt, commit', async () => {
    const printed: unknown[] = [];
    const modules = { 'dsh-fs/memory': memory, 'dsh-fs/overlay': overlay };
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<unknown>;
    const source = `${docExample()}\nreturn { lower, sandbox, attempts, result };`;
    const run = new AsyncFunction('modules', 'console', source);
    const { lower, sandbox, attempts, result } = (await run(modules, { log: (v: unknown) => printed.push(v) })) as {
      lower: memory.MemoryFileSystem;
      sandbox: overlay.OverlayFileSystem;
      attempts: overlay.OverlayFileSystem[];
      result: overlay.OverlayCommitResult;
    };
    expect(printed).toHaveLength(4);
    expect(printed[0]).toContain('-export const sum = (a, b) => a - b;\n+export const sum = (a, b) => a + b;\n');
    expect(printed[1]).toContain('+export const sum = (a, b) => b + a;\n');
    expect(printed[1]).toContain('+++ b/src/sum.test.ts');
    expect(printed[2]).toContain('+export const sum = (a, b) => a * b;\n');
    // The comment in the doc shows what is printed last.
    expect(printed[3]).toEqual(['/src/sum.test.ts', '/src/sum.ts']);
    expect(result).toMatchObject({ conflicts: [], failed: [] });
    expect((await lower.readText(await lower.resolve('/src/sum.ts'))).text).toBe('export const sum = (a, b) => b + a;\n');
    expect(await sandbox.changes()).toEqual([]);
    // The losing attempts still hold their own changes, and never touched the lower.
    expect((await attempts[0]!.readText(await attempts[0]!.resolve('/src/sum.ts'))).text).toContain('a + b');
  });
});
