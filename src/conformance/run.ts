import { RuleContext, resolveSettings, type Rule, type Settings } from './harness.js';
import { ALL_RULES } from './rules/index.js';
import type { ConformanceFactory, ConformanceOptions, ConformanceSubject, RuleInfo, RuleResult } from './types.js';

/** The rules the suite checks, by id, in order. */
export const RULES: readonly RuleInfo[] = Object.freeze(ALL_RULES.map(({ id, title }) => Object.freeze({ id, title })));

export type RuleOutcome = { status: 'pass' } | { status: 'skip'; reason: string } | { status: 'fail'; error: unknown };

/** Runs one rule on a fresh subject and always releases it. */
export async function runRule(rule: Rule, factory: ConformanceFactory, settings: Settings): Promise<RuleOutcome> {
  let subject: ConformanceSubject;
  try {
    subject = await factory();
  } catch (error) {
    return { status: 'fail', error: new Error(`the conformance factory failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }) };
  }
  let outcome: RuleOutcome;
  try {
    const reason = rule.skipIf?.(subject);
    if (reason !== undefined) outcome = { status: 'skip', reason };
    else {
      await rule.run(new RuleContext(subject, settings, rule.id));
      outcome = { status: 'pass' };
    }
  } catch (error) {
    outcome = { status: 'fail', error };
  }
  try {
    await subject.cleanup?.();
  } catch (error) {
    // A rule's own failure says more than the cleanup's.
    if (outcome.status !== 'fail') {
      outcome = { status: 'fail', error: new Error(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }) };
    }
  }
  return outcome;
}

export function checkSkips(options: ConformanceOptions): void {
  const known = new Set(ALL_RULES.map((r) => r.id));
  for (const id of options.skip ?? []) {
    if (!known.has(id)) throw new RangeError(`unknown rule id in skip: ${JSON.stringify(id)} (known: ${[...known].join(', ')})`);
  }
}

/**
 * Runs every rule without a test runner, one after another, each on a fresh subject.
 * Never rejects because a rule failed: failures are reported in the results.
 */
export async function runConformance(factory: ConformanceFactory, options: ConformanceOptions = {}): Promise<RuleResult[]> {
  checkSkips(options);
  const settings = resolveSettings(options);
  const skip = new Set(options.skip ?? []);
  const results: RuleResult[] = [];
  for (const rule of ALL_RULES) {
    const info = { id: rule.id, title: rule.title };
    if (skip.has(rule.id)) {
      results.push({ ...info, status: 'skip', reason: 'skipped by options.skip' });
      continue;
    }
    const outcome = await runRule(rule, factory, settings);
    if (outcome.status === 'pass') results.push({ ...info, status: 'pass' });
    else if (outcome.status === 'skip') results.push({ ...info, status: 'skip', reason: outcome.reason });
    else results.push({ ...info, status: 'fail', error: formatError(outcome.error) });
  }
  return results;
}

function formatError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  let message = err.message;
  // Keep the innermost cause too when the message does not already carry it.
  let cause: unknown = err.cause;
  while (cause instanceof Error) {
    if (!message.includes(cause.message)) message += `\ncaused by: ${cause.message}`;
    cause = cause.cause;
  }
  return message;
}
