import { expect, it } from 'vitest';
import { bestOfN } from './best-of-n.js';

it('examples/best-of-n.ts merges the two compatible attempts and reports the third one\'s conflict', async () => {
  const lines: string[] = [];
  const { merged, conflicts, diff } = await bestOfN((line) => lines.push(line));
  expect(merged).toEqual(['fix-sum', 'fix-mean']);
  expect(conflicts).toBe(1);
  expect(lines).toContain('rewrite-sum conflicts on /src/math.js (content): 1 overlapping edit');
  expect(lines).toContain('  base (line 2): return a - b;\n  ours (line 2): return a + b;\n  theirs (line 2): return [a, b].reduce((x, y) => x + y);');
  expect(diff).toContain('-  return a - b;\n+  return a + b;\n');
  expect(diff).toContain('-  return sum(...xs) / xs.length;\n+  return xs.reduce(sum, 0) / xs.length;\n');
  expect(diff).toContain('+++ b/src/math.test.js');
});
