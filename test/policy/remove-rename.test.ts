import { describe, expect, it } from 'vitest';
import { FsError, FsTargetKey, FsVersion, createEventGate, createHarness, type FsTarget } from '../../src/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';

const t = (key: string): FsTarget => ({ targetKey: FsTargetKey(key), displayPath: `/w/${key}` });
const v = FsVersion;
const outcome = (fn: () => unknown) => {
  try {
    return fn();
  } catch (err) {
    return { refused: (err as FsError).code };
  }
};

describe('policy: delete and move decisions', () => {
  it.each([
    ['unseen', { refused: 'FS_NOT_OBSERVED' }],
    ['absent', { refused: 'FS_NOT_FOUND' }],
    ['present', { kind: 'replaceIfVersion', version: 'v1' }],
  ] as const)('delete of a file %s', (state, expected) => {
    const policy = createObservationPolicy();
    if (state === 'absent') policy.record(t('a'), { kind: 'absent' }, 'o');
    if (state === 'present') policy.record(t('a'), { kind: 'present', version: v('v1') }, 'o');
    expect(outcome(() => policy.removeIntent(t('a'), 'o'))).toEqual(expected);
    // Another owner never inherits the observation.
    expect(outcome(() => policy.removeIntent(t('a'), 'other'))).toEqual({ refused: 'FS_NOT_OBSERVED' });
  });

  it('move: the source guarded only when read; the destination replaceable only at the version read', () => {
    const policy = createObservationPolicy();
    expect(policy.renameIntent(t('a'), t('b'), 'o')).toEqual({ replace: false });
    policy.record(t('a'), { kind: 'present', version: v('va') }, 'o');
    policy.record(t('b'), { kind: 'absent' }, 'o');
    expect(policy.renameIntent(t('a'), t('b'), 'o')).toEqual({ expect: 'va', replace: false });
    policy.record(t('b'), { kind: 'present', version: v('vb') }, 'o');
    expect(policy.renameIntent(t('a'), t('b'), 'o')).toEqual({ expect: 'va', replace: 'vb' });
    expect(policy.renameIntent(t('a'), t('b'), undefined)).toEqual({ replace: false });
  });

  it('installs all four deciders, or none when one is taken', () => {
    const ctx = createHarness({ fs: createMemoryFs() });
    ctx.events.decide('fs/rename-intent', () => undefined);
    expect(() => ctx.use(createObservationPolicy())).toThrow(/fs\/rename-intent already has a decider/);
    expect(ctx.events.hasDecider('fs/write-intent')).toBe(false);
    expect(ctx.events.hasDecider('fs/remove-intent')).toBe(false);
    const fresh = createHarness({ fs: createMemoryFs(), plugins: [createObservationPolicy()] });
    for (const e of ['fs/write-intent', 'fs/edit-intent', 'fs/remove-intent', 'fs/rename-intent'] as const) expect(fresh.events.hasDecider(e)).toBe(true);
  });
});

describe('gate: remove and rename intents', () => {
  it('are single-slot, validate answers, and wrap decider failures', async () => {
    const gate = createEventGate();
    expect(await gate.removeIntent(t('a'), 'o')).toBeUndefined();
    expect(await gate.renameIntent(t('a'), t('b'), 'o')).toBeUndefined();
    gate.decide('fs/remove-intent', () => ({ kind: 'createIfAbsent' }));
    expect(() => gate.decide('fs/remove-intent', () => undefined)).toThrow(/already has a decider/);
    await expect(gate.removeIntent(t('a'), 'o')).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    gate.decide('fs/rename-intent', (from, to, owner) => (owner === 'bad' ? ({ replace: 3 } as never) : { expect: v(`${from.targetKey}>${to.targetKey}`), replace: true }));
    expect(await gate.renameIntent(t('a'), t('b'), 'o')).toEqual({ expect: 'a>b', replace: true });
    await expect(gate.renameIntent(t('a'), t('b'), 'bad')).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
    const failing = createEventGate();
    failing.decide('fs/remove-intent', () => {
      throw new Error('boom');
    });
    await expect(failing.removeIntent(t('a'), 'o')).rejects.toMatchObject({ code: 'FS_IO_ERROR', message: expect.stringContaining('cannot delete "/w/a"') });
  });
});
