import { afterEach, describe, expect, it, vi } from 'vitest';
import { RULES, runConformance } from '../../src/conformance/index.js';
import { resolveSettings } from '../../src/conformance/harness.js';
import { memorySubject } from './memory-subject.js';
import { mutants } from './mutants.js';

const allBut = (id: string) => RULES.map((r) => r.id).filter((r) => r !== id);
const bomDrop = mutants.find((m) => m.rule === 'L4')!;

describe('runConformance', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('reports a property failure with the seed and path that replay it', async () => {
    const first = await runConformance(bomDrop.subject, { numRuns: 20, skip: allBut('E7') });
    const e7 = first.find((r) => r.id === 'E7')!;
    expect(e7.status).toBe('fail');
    const found = /\{ seed: (-?\d+), path: "([\d:]+)"/.exec(e7.error ?? '');
    expect(found, e7.error).not.toBeNull();
    const counterexample = /Counterexample: (.*)/.exec(e7.error!)?.[1];
    expect(counterexample).toBeDefined();

    const replay = await runConformance(bomDrop.subject, { seed: Number(found![1]), path: found![2], skip: allBut('E7') });
    const again = replay.find((r) => r.id === 'E7')!;
    expect(again.status).toBe('fail');
    expect(/Counterexample: (.*)/.exec(again.error!)?.[1]).toBe(counterexample);
  });

  it('lists every rule in order, skipping on request and on missing capabilities', async () => {
    const results = await runConformance(memorySubject, { numRuns: 1, skip: allBut('V4').filter((id) => id !== 'P2') });
    expect(results.map((r) => r.id)).toEqual(RULES.map((r) => r.id));
    expect(results.find((r) => r.id === 'V1')).toMatchObject({ status: 'skip', reason: 'skipped by options.skip' });
    expect(results.find((r) => r.id === 'V4')).toMatchObject({ status: 'pass' });
    expect(results.find((r) => r.id === 'P2')).toMatchObject({ status: 'skip', reason: 'the filesystem has no root' });
  });

  it('rejects unknown rule ids and reports a failing factory as a failed rule', async () => {
    await expect(runConformance(memorySubject, { skip: ['V9'] })).rejects.toThrow(/unknown rule id/);
    const results = await runConformance(
      () => {
        throw new Error('no store');
      },
      { skip: allBut('V1') },
    );
    expect(results.find((r) => r.id === 'V1')).toMatchObject({ status: 'fail', error: expect.stringMatching(/factory failed: no store/) });
  });

  it('takes defaults from the environment, and options over the environment', () => {
    vi.stubEnv('DSH_FS_CONFORMANCE_RUNS', '7');
    vi.stubEnv('DSH_FS_CONFORMANCE_SEED', '-42');
    vi.stubEnv('DSH_FS_CONFORMANCE_SHRINK', '0');
    expect(resolveSettings({})).toEqual({ numRuns: 7, seed: -42, shrink: false });
    expect(resolveSettings({ numRuns: 3, seed: 5, shrink: true })).toEqual({ numRuns: 3, seed: 5, shrink: true });
    vi.stubEnv('DSH_FS_CONFORMANCE_RUNS', 'many');
    expect(() => resolveSettings({})).toThrow(/DSH_FS_CONFORMANCE_RUNS/);
  });
});
