import { resolveSettings } from './harness.js';
import { ALL_RULES } from './rules/index.js';
import { checkSkips, runRule } from './run.js';
import type { ConformanceFactory, ConformanceOptions } from './types.js';

// vitest is an optional peer: without it, runConformance still works and describeConformance explains.
const vitest = await import('vitest').catch(() => undefined);

export const DEFAULT_RULE_TIMEOUT = 120_000;

/**
 * Registers the suite with vitest: `describe(name)` with one test per rule, named by rule id,
 * each on a fresh subject from `factory` (cleaned up afterwards).
 */
export function describeConformance(name: string, factory: ConformanceFactory, options: ConformanceOptions = {}): void {
  if (vitest === undefined) throw new Error('describeConformance needs vitest; use runConformance with other test runners');
  const { describe, it } = vitest;
  checkSkips(options);
  const skip = new Set(options.skip ?? []);
  const timeout = options.timeout ?? DEFAULT_RULE_TIMEOUT;
  describe(name, () => {
    for (const rule of ALL_RULES) {
      const title = `${rule.id} ${rule.title}`;
      if (skip.has(rule.id)) {
        it.skip(title, () => {});
        continue;
      }
      it(
        title,
        async (context) => {
          // Settings are read per test, so the environment can change between files.
          const outcome = await runRule(rule, factory, resolveSettings(options));
          if (outcome.status === 'fail') throw outcome.error;
          if (outcome.status === 'skip') context.skip(outcome.reason);
        },
        timeout,
      );
    }
  });
}
