import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { createHarness, type FsChangeEvent, type FileSystem } from '../../src/index.js';
import { isFsError } from '../../src/seam/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools, moveDeleteTools } from '../../src/tools/index.js';

const NOTE_A = 'Note: /w/src/a.ts, which you read, was changed by another writer since; read it again before editing it.';

async function setup(fs: FileSystem = createMemoryFs({ cwd: '/w', files: { '/w/src/a.ts': 'one\n', '/w/src/b.ts': 'two\n' } })) {
  const policy = createObservationPolicy({ watch: true });
  const ctx = createHarness({ fs, plugins: [policy, fsTools(), moveDeleteTools()] });
  // The subscription is live before anything else happens.
  await new Promise((r) => setTimeout(r, 0));
  const run = (owner: string, tool: string, args: Record<string, unknown>) => ctx.tools.execute(tool, args, { owner });
  return { ctx, policy, run };
}

describe('observation policy: notes from the change feed', () => {
  it("an owner is told once, in its next result, that a file it read was changed by another; the writer is not; reading again clears it", async () => {
    const { policy, run } = await setup();
    await run('A', 'read', { file_path: 'src/a.ts' });
    await run('B', 'read', { file_path: 'src/a.ts' });
    const edit = await run('B', 'edit', { file_path: 'src/a.ts', old_string: 'one', new_string: 'ONE' });
    expect(edit.isError).toBe(false);
    expect(edit.text).not.toContain('Note:');
    const next = await run('A', 'list', { path: 'src' });
    expect(next.isError).toBe(false);
    expect(next.text.endsWith(`\n\n${NOTE_A}`)).toBe(true);
    // Once only, and nothing for the writer.
    expect((await run('A', 'list', { path: 'src' })).text).not.toContain('Note:');
    expect((await run('B', 'list', { path: 'src' })).text).not.toContain('Note:');
    // Told before editing: the edit would fail on the stale version; after a read it succeeds.
    await run('B', 'edit', { file_path: 'src/a.ts', old_string: 'ONE', new_string: 'Two' });
    const stale = await run('A', 'edit', { file_path: 'src/a.ts', old_string: 'one', new_string: '1' });
    expect(stale.isError && stale.error.code).toBe('FS_STALE_VERSION');
    expect(stale.text).toContain(NOTE_A);
    const again = await run('A', 'read', { file_path: 'src/a.ts' });
    expect(again.text).not.toContain('Note:');
    expect((await run('A', 'edit', { file_path: 'src/a.ts', old_string: 'Two', new_string: '2' })).text).not.toContain('Note:');
    policy.close();
  });

  it("an owner's own writes, moves and removals give it no note; another's removal and move name what happened", async () => {
    const { policy, run } = await setup();
    await run('A', 'read', { file_path: 'src/a.ts' });
    await run('A', 'read', { file_path: 'src/b.ts' });
    await run('A', 'edit', { file_path: 'src/a.ts', old_string: 'one', new_string: 'uno' });
    await run('A', 'write', { file_path: 'src/c.ts', content: 'c' });
    await run('A', 'move', { from_path: 'src/c.ts', to_path: 'src/d.ts' });
    expect((await run('A', 'list', { path: 'src' })).text).not.toContain('Note:');

    await run('B', 'read', { file_path: 'src/a.ts' });
    await run('B', 'read', { file_path: 'src/b.ts' });
    await run('B', 'delete', { file_path: 'src/a.ts' });
    await run('B', 'move', { from_path: 'src/b.ts', to_path: 'src/e.ts' });
    const told = await run('A', 'list', { path: 'src' });
    expect(told.text).toContain(
      'Note: files you read were changed by another writer since: /w/src/a.ts (removed), /w/src/b.ts (moved to /w/src/e.ts); read them again before editing them.',
    );
    policy.close();
  });

  it('overlay: a change labelled with another owner is noted; one labelled with its own id is not, though its ledger holds an older version', async () => {
    const lower = createMemoryFs({ cwd: '/w', files: { '/w/src/a.ts': 'one\n' } });
    const overlay = await createOverlayFs({ lower });
    const { policy, run } = await setup(overlay);
    await run('A', 'read', { file_path: 'src/a.ts' });
    await overlay.label({ owner: 'B' }, async () => overlay.writeText(await overlay.resolve('/w/src/a.ts'), 'x'));
    expect((await run('A', 'list', { path: 'src' })).text).toContain(NOTE_A);
    // Its own label: no note, though the version it saw is gone.
    await run('A', 'read', { file_path: 'src/a.ts' });
    await overlay.label({ owner: 'A' }, async () => overlay.writeText(await overlay.resolve('/w/src/a.ts'), 'y'));
    expect((await run('A', 'list', { path: 'src' })).text).not.toContain('Note:');
    policy.close();
  });

  it('a feed that overflows or fails: owners that observed anything are told changes may have been missed', async () => {
    const policy = createObservationPolicy();
    const fs = createMemoryFs({ cwd: '/w', files: { '/w/a': 'a' } });
    const ctx = createHarness({ fs, plugins: [policy, fsTools()] });
    let push!: (e: FsChangeEvent) => void;
    let fail!: (e: Error) => void;
    const feed: AsyncIterable<FsChangeEvent> = {
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<FsChangeEvent>>((resolve, reject) => {
          push = (value) => resolve({ done: false, value });
          fail = reject;
        }),
      }),
    };
    policy.subscribe(feed);
    await ctx.tools.execute('read', { file_path: 'a' }, { owner: 'A' });
    await new Promise((r) => setTimeout(r, 0));
    push({ kind: 'overflow', path: '/' });
    await new Promise((r) => setTimeout(r, 0));
    const told = await ctx.tools.execute('list', { path: '.' }, { owner: 'A' });
    expect(told.text).toContain('Note: changes made by other writers since your last call may have been missed');
    expect((await ctx.tools.execute('list', { path: '.' }, { owner: 'nobody' })).text).not.toContain('Note:');
    fail(new Error('lost'));
    await new Promise((r) => setTimeout(r, 0));
    expect((await ctx.tools.execute('list', { path: '.' }, { owner: 'A' })).text).toContain('may have been missed');
  });

  it('watch on a filesystem that cannot watch is FS_UNSUPPORTED when applied', () => {
    const { watch: _none, ...fs } = createMemoryFs();
    let error: unknown;
    try {
      createHarness({ fs: fs as FileSystem, plugins: [createObservationPolicy({ watch: true })] });
    } catch (err) {
      error = err;
    }
    expect(isFsError(error, 'FS_UNSUPPORTED')).toBe(true);
  });
});
