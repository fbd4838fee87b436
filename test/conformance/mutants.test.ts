import { describe, expect, it } from 'vitest';
import { RULES, runConformance, type RuleResult } from '../../src/conformance/index.js';
import { memorySubject } from './memory-subject.js';
import { control, mutants, unordered } from './mutants.js';

// Small runs without shrinking: every mutant is also caught by a fixed example, and only
// pass/fail matters here.
const options = { numRuns: 10, shrink: false };

const failing = (results: RuleResult[]) => results.filter((r) => r.status === 'fail').map((r) => r.id);

describe('the conformance suite catches broken providers', () => {
  it('passes the memory provider on every rule (P2, O1 and S3 skipped: it has no root, no lower and no searchReads)', async () => {
    const results = await runConformance(memorySubject, options);
    expect(results.map((r) => r.id)).toEqual(RULES.map((r) => r.id));
    expect(failing(results), JSON.stringify(results.filter((r) => r.status === 'fail'), null, 2)).toEqual([]);
    expect(results.filter((r) => r.status === 'skip').map((r) => r.id)).toEqual(['P2', 'O1', 'S3']);
  });

  it('passes the wrapper the mutants are built on, with a correct native edit', async () => {
    const results = await runConformance(control.subject, options);
    expect(failing(results), JSON.stringify(results.filter((r) => r.status === 'fail'), null, 2)).toEqual([]);
  });

  it('passes a provider whose listings come in any order: the seam orders them', async () => {
    const results = await runConformance(unordered.subject, options);
    expect(failing(results), JSON.stringify(results.filter((r) => r.status === 'fail'), null, 2)).toEqual([]);
  });

  it.each(mutants.map((m) => [m.rule, m.name, m] as const))('%s catches: %s', async (rule, _name, mutant) => {
    const results = await runConformance(mutant.subject, options);
    const named = results.find((r) => r.id === rule)!;
    expect(named.status, `rules that failed: ${failing(results).join(', ') || 'none'}`).toBe('fail');
    // Caught by one of the rule's own checks (errors carry its label), not by a crash or a timeout.
    expect(named.error).toMatch(/^\[[^\]]+\] /);
    expect(named.error).not.toMatch(/non-FsError|factory failed|cleanup failed|timed out/);
    if (mutant.only) expect(failing(results), 'only the named rule fails').toEqual([rule]);
    // Everything else the mutant trips over is printed, so a report shows the blast radius of one bug.
    console.info(`${mutant.name}: caught by ${failing(results).join(', ')}`);
  });
});
