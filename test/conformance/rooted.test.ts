import { describe, expect, it } from 'vitest';
import { describeConformance, runConformance } from '../../src/conformance/index.js';
import { rootedSubject } from './rooted.js';

describeConformance('memory confined to a root', () => rootedSubject('always'));

describe('P2 catches roots that links can leave', () => {
  it('a root checked only lexically', async () => {
    const results = await runConformance(() => rootedSubject('lexical'), { numRuns: 5, shrink: false });
    const p2 = results.find((r) => r.id === 'P2')!;
    expect(p2.status).toBe('fail');
    expect(p2.error).toMatch(/\[symlinks that leave the root\].*FS_OUTSIDE_ROOT/);
  });

  it('links checked at resolve only, not when the operation runs', async () => {
    const results = await runConformance(() => rootedSubject('resolve'), { numRuns: 5, shrink: false });
    const p2 = results.find((r) => r.id === 'P2')!;
    expect(p2.status).toBe('fail');
    expect(p2.error).toMatch(/\[a file swapped for an escaping link after resolve\]/);
  });
});
