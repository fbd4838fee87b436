import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { FsError, FsTargetKey, FsVersion, createHarness, type FsObservation, type FsTarget } from '../../src/index.js';
import { createObservationPolicy, type ObservationState } from '../../src/policy/index.js';
import { fsTools } from '../../src/tools/index.js';

const t = (key: string): FsTarget => ({ targetKey: FsTargetKey(key), displayPath: `/w/${key}` });
const v = FsVersion;

type State = 'unseen' | 'absent' | 'present';
const prime = (state: State) => {
  const policy = createObservationPolicy();
  if (state === 'absent') policy.record(t('a'), { kind: 'absent' }, 'o');
  if (state === 'present') policy.record(t('a'), { kind: 'present', version: v('v1') }, 'o');
  return policy;
};
const decide = (fn: () => unknown) => {
  try {
    return fn();
  } catch (err) {
    return { refused: (err as FsError).code, message: (err as FsError).message };
  }
};

describe('observation policy decisions', () => {
  it.each([
    ['unseen', { kind: 'createIfAbsent' }, { refused: 'FS_NOT_OBSERVED', message: 'cannot edit "/w/a": it has not been read in this session' }],
    [
      'absent',
      { kind: 'createIfAbsent' },
      { refused: 'FS_NOT_FOUND', message: 'cannot edit "/w/a": not found when this session last read it; read it again, or create it with write' },
    ],
    ['present', { kind: 'replaceIfVersion', version: 'v1' }, { version: 'v1' }],
  ] as const)('%s: write → %j, edit → %j', (state, write, edit) => {
    const policy = prime(state);
    expect(policy.writeIntent(t('a'), 'o')).toEqual(write);
    expect(decide(() => policy.editIntent(t('a'), 'o'))).toEqual(edit);
    const refusal = decide(() => policy.editIntent(t('a'), 'o'));
    if (state !== 'present') expect(refusal).toHaveProperty('refused');
  });

  it('follows present → absent → present, keeping only the latest observation', () => {
    const policy = createObservationPolicy();
    policy.record(t('a'), { kind: 'present', version: v('v1') }, 'o');
    policy.record(t('a'), { kind: 'absent' }, 'o');
    expect(policy.writeIntent(t('a'), 'o')).toEqual({ kind: 'createIfAbsent' });
    policy.record(t('a'), { kind: 'present', version: v('v2') }, 'o');
    expect(policy.editIntent(t('a'), 'o')).toEqual({ version: 'v2' });
    expect(policy.observation('o', t('a'))).toEqual({ kind: 'present', version: 'v2' });
  });

  it('keeps owners and targets apart', () => {
    const policy = createObservationPolicy();
    const session = {};
    policy.record(t('a'), { kind: 'present', version: v('v1') }, session);
    expect(policy.observation(session, t('a'))).toEqual({ kind: 'present', version: 'v1' });
    expect(policy.observation({}, t('a'))).toBeUndefined();
    expect(policy.observation('o', 'a')).toBeUndefined();
    expect(policy.observation(session, t('b'))).toBeUndefined();
    expect(policy.writeIntent(t('a'), {})).toEqual({ kind: 'createIfAbsent' });
    expect(() => policy.editIntent(t('a'), 'other')).toThrow(expect.objectContaining({ code: 'FS_NOT_OBSERVED' }));
  });

  it('fails closed without an owner', () => {
    const policy = createObservationPolicy();
    policy.record(t('a'), { kind: 'present', version: v('v1') }, undefined);
    expect(policy.writeIntent(t('a'), undefined)).toEqual({ kind: 'createIfAbsent' });
    expect(() => policy.editIntent(t('a'), undefined)).toThrow(expect.objectContaining({ code: 'FS_NOT_OBSERVED' }));
  });

  it('forgets one target or everything of an owner', () => {
    const policy = createObservationPolicy();
    policy.record(t('a'), { kind: 'present', version: v('v1') }, 'o');
    policy.record(t('b'), { kind: 'absent' }, 'o');
    policy.forget('o', t('a'));
    expect(policy.observation('o', 'a')).toBeUndefined();
    expect(policy.observation('o', 'b')).toEqual({ kind: 'absent' });
    policy.forget('o');
    expect(policy.observation('o', 'b')).toBeUndefined();
  });

  it('matches a reference model for any sequence of observations', () => {
    const owners = ['o1', 'o2'];
    const keys = ['a', 'b'];
    const recordArb = fc.record({
      owner: fc.constantFrom(...owners),
      key: fc.constantFrom(...keys),
      observation: fc.oneof(
        fc.constant<FsObservation>({ kind: 'absent' }),
        fc.constantFrom('v1', 'v2', 'v3').map((x): FsObservation => ({ kind: 'present', version: v(x) })),
      ),
    });
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 20 }), (records) => {
        const policy = createObservationPolicy();
        const model = new Map<string, FsObservation>();
        for (const r of records) {
          policy.record(t(r.key), r.observation, r.owner);
          model.set(`${r.owner}|${r.key}`, r.observation);
        }
        for (const owner of owners) {
          for (const key of keys) {
            const seen = model.get(`${owner}|${key}`);
            const write = policy.writeIntent(t(key), owner);
            const edit = decide(() => policy.editIntent(t(key), owner));
            if (seen?.kind === 'present') {
              expect(write).toEqual({ kind: 'replaceIfVersion', version: seen.version });
              expect(edit).toEqual({ version: seen.version });
            } else {
              expect(write).toEqual({ kind: 'createIfAbsent' });
              expect(edit).toMatchObject({ refused: seen === undefined ? 'FS_NOT_OBSERVED' : 'FS_NOT_FOUND' });
            }
          }
        }
      }),
    );
  });
});

describe('exportState and restore', () => {
  it('round-trips through JSON, for string owners and owners with an id', () => {
    const policy = createObservationPolicy({ ownerId: (o) => (o as { id?: string }).id });
    const session = { id: 'session-1' };
    policy.record(t('b'), { kind: 'present', version: v('v2') }, session);
    policy.record(t('a'), { kind: 'absent' }, session);
    policy.record(t('a'), { kind: 'present', version: v('v1') }, 'mcp-7');
    policy.record(t('a'), { kind: 'present', version: v('v9') }, {}); // no id: kept, never exported
    const state = policy.exportState();
    expect(state).toEqual({
      format: 'dsh-fs/observations',
      version: 1,
      owners: {
        'mcp-7': { a: { kind: 'present', version: 'v1' } },
        'session-1': { a: { kind: 'absent' }, b: { kind: 'present', version: 'v2' } },
      },
    });

    const resumed = createObservationPolicy({ ownerId: (o) => (o as { id?: string }).id });
    resumed.restore(JSON.parse(JSON.stringify(state)));
    expect(resumed.exportState()).toEqual(state);
    // A new session object with the same id carries on.
    expect(resumed.editIntent(t('b'), { id: 'session-1' })).toEqual({ version: 'v2' });
    expect(resumed.writeIntent(t('a'), 'mcp-7')).toEqual({ kind: 'replaceIfVersion', version: 'v1' });
  });

  it('exports one owner on request', () => {
    const policy = createObservationPolicy();
    policy.record(t('a'), { kind: 'absent' }, 'x');
    policy.record(t('a'), { kind: 'absent' }, 'y');
    expect(Object.keys(policy.exportState('x').owners)).toEqual(['x']);
    expect(policy.exportState('nobody').owners).toEqual({});
    expect(() => policy.exportState({})).toThrow(/no string id/);
  });

  it('replaces only the owners in the state, and validates it before changing anything', () => {
    const policy = createObservationPolicy();
    policy.record(t('a'), { kind: 'present', version: v('old') }, 'x');
    policy.record(t('b'), { kind: 'present', version: v('kept') }, 'x');
    policy.record(t('a'), { kind: 'present', version: v('other') }, 'y');
    policy.restore({ format: 'dsh-fs/observations', version: 1, owners: { x: { a: { kind: 'present', version: 'new' } } } });
    expect(policy.observation('x', 'a')).toEqual({ kind: 'present', version: 'new' });
    expect(policy.observation('x', 'b')).toBeUndefined();
    expect(policy.observation('y', 'a')).toEqual({ kind: 'present', version: 'other' });

    const before = policy.exportState();
    const invalid: unknown[] = [
      null,
      {},
      { format: 'dsh-fs/observations', version: 2, owners: {} },
      { format: 'dsh-fs/observations', version: 1, owners: [] },
      { format: 'dsh-fs/observations', version: 1, owners: { z: { a: { kind: 'absent' } }, x: { a: { kind: 'present' } } } },
      { format: 'dsh-fs/observations', version: 1, owners: { x: { a: { kind: 'seen' } } } },
      { format: 'dsh-fs/observations', version: 1, owners: { '': {} } },
    ];
    for (const state of invalid) {
      expect(() => policy.restore(state), JSON.stringify(state)).toThrow(expect.objectContaining({ code: 'FS_INVALID_ARGUMENT' }));
    }
    expect(policy.exportState()).toEqual(before);
  });

  it('lets a resumed session edit without re-reading, unless the file changed meanwhile', async () => {
    const fs = createMemoryFs({ cwd: '/w', files: { 'a.txt': 'one\n', 'b.txt': 'two\n' } });
    const first = createObservationPolicy();
    const h1 = createHarness({ fs, plugins: [first, fsTools()] });
    await h1.tools.execute('read', { file_path: 'a.txt' }, { owner: 'session-1' });
    await h1.tools.execute('read', { file_path: 'b.txt' }, { owner: 'session-1' });
    const saved: ObservationState = JSON.parse(JSON.stringify(first.exportState()));

    fs.provider.volume.writeFileSync('/w/b.txt', 'TWO\n');
    const second = createObservationPolicy();
    second.restore(saved);
    const h2 = createHarness({ fs, plugins: [second, fsTools()] });
    const ok = await h2.tools.execute('edit', { file_path: 'a.txt', old_string: 'one', new_string: '1' }, { owner: 'session-1' });
    expect(ok.isError).toBe(false);
    const stale = await h2.tools.execute('edit', { file_path: 'b.txt', old_string: 'TWO', new_string: '2' }, { owner: 'session-1' });
    expect(stale.error?.code).toBe('FS_STALE_VERSION');
    // Without the restored state the same session would have to read first.
    const fresh = createHarness({ fs, plugins: [createObservationPolicy(), fsTools()] });
    const unseen = await fresh.tools.execute('edit', { file_path: 'a.txt', old_string: '1', new_string: 'one' }, { owner: 'session-1' });
    expect(unseen.error?.code).toBe('FS_NOT_OBSERVED');
  });
});
