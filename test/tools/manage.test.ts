import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHarness, type ToolResult } from '../../src/index.js';
import { createMemoryFs, type MemoryEntry } from '../../src/backends/memory/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import {
  deleteOutputSchema,
  fsTools,
  moveDeleteTools,
  moveOutputSchema,
  type DeleteValue,
  type MoveValue,
} from '../../src/tools/index.js';

function harness(files: Record<string, MemoryEntry>, withPolicy = true) {
  const fs = createMemoryFs({ files, cwd: '/p' });
  const policy = createObservationPolicy();
  const ctx = createHarness({ fs, plugins: [...(withPolicy ? [policy] : []), fsTools(), moveDeleteTools()] });
  const owner = 's';
  const run = <V>(name: string, args: Record<string, unknown>, who: string = owner) => ctx.tools.execute(name, args, { owner: who }) as Promise<ToolResult<V>>;
  const content = async (path: string) => {
    try {
      return (await fs.readText(await fs.resolve(path))).text;
    } catch {
      return undefined;
    }
  };
  return {
    fs,
    policy,
    read: (p: string, who?: string) => run('read', { file_path: p }, who),
    write: (p: string, c: string, who?: string) => run('write', { file_path: p, content: c }, who),
    edit: (p: string, o: string, n: string, who?: string) => run('edit', { file_path: p, old_string: o, new_string: n }, who),
    move: (from_path: string, to_path: string, who?: string) => run<MoveValue>('move', { from_path, to_path }, who),
    del: (file_path: string, who?: string) => run<DeleteValue>('delete', { file_path }, who),
    content,
  };
}

const code = (r: ToolResult) => (r.isError ? r.error.code : 'ok');

describe('delete', () => {
  it('needs a read at the current version, then removes the file and records it absent', async () => {
    const h = harness({ '/p/a.txt': 'abc' });
    const unread = await h.del('a.txt');
    expect(code(unread)).toBe('FS_NOT_OBSERVED');
    expect(unread.text).toBe('Error: cannot delete "/p/a.txt": it has not been read in this session — read the file first, then retry');
    expect(await h.content('/p/a.txt')).toBe('abc');

    await h.read('a.txt');
    await h.fs.writeText(await h.fs.resolve('/p/a.txt'), 'changed');
    const stale = await h.del('a.txt');
    expect(code(stale)).toBe('FS_STALE_VERSION');
    expect(stale.text).toMatch(/— re-read the file, then retry$/);
    expect(await h.content('/p/a.txt')).toBe('changed');

    await h.read('a.txt');
    const r = await h.del('a.txt');
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toBe('Deleted "/p/a.txt" (7 bytes).');
    expect(deleteOutputSchema.safeParse(r.value).success).toBe(true);
    expect(await h.content('/p/a.txt')).toBeUndefined();
    expect(h.policy.observation('s', '/p/a.txt')).toEqual({ kind: 'absent' });
    // Recorded absent: a new file may be written without a read.
    expect(code(await h.write('a.txt', 'new'))).toBe('ok');
  });

  it('refuses directories and missing files with their own codes, before the policy', async () => {
    const h = harness({ '/p/d/x.txt': 'x' });
    const dir = await h.del('d');
    expect(code(dir)).toBe('FS_NOT_REGULAR_FILE');
    expect(dir.text).toContain('it is a directory');
    expect(code(await h.del('nope.txt'))).toBe('FS_NOT_FOUND');
  });

  it('lets a session delete a file it wrote or edited without re-reading, but not another session', async () => {
    const h = harness({});
    await h.write('n.txt', 'one');
    expect(code(await h.del('n.txt', 'other'))).toBe('FS_NOT_OBSERVED');
    expect(code(await h.del('n.txt'))).toBe('ok');
  });

  it('is unconditional without the policy', async () => {
    const h = harness({ '/p/a.txt': 'a' }, false);
    expect(code(await h.del('a.txt'))).toBe('ok');
  });
});

describe('move', () => {
  it('moves an unread file, observes it under the new name and the old name as absent', async () => {
    const h = harness({ '/p/a.txt': 'alpha' });
    const r = await h.move('a.txt', 'sub/b.txt');
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toBe('Moved "/p/a.txt" to "/p/sub/b.txt".');
    expect(moveOutputSchema.safeParse(r.value).success).toBe(true);
    expect(r.value).toMatchObject({ from: '/p/a.txt', to: '/p/sub/b.txt', type: 'file', replaced: false });
    expect(await h.content('/p/sub/b.txt')).toBe('alpha');
    expect(await h.content('/p/a.txt')).toBeUndefined();
    expect(h.policy.observation('s', '/p/sub/b.txt')).toEqual({ kind: 'present', version: r.value!.version });
    expect(h.policy.observation('s', '/p/a.txt')).toEqual({ kind: 'absent' });
    // The moved file can be edited without a read; the old name can be created again.
    expect(code(await h.edit('sub/b.txt', 'alpha', 'beta'))).toBe('ok');
    expect(code(await h.write('a.txt', 'again'))).toBe('ok');
  });

  it('refuses an existing destination that was not read with "read it first", and replaces it once read', async () => {
    const h = harness({ '/p/a.txt': 'A', '/p/b.txt': 'B' });
    const refused = await h.move('a.txt', 'b.txt');
    expect(code(refused)).toBe('FS_NOT_OBSERVED');
    expect(refused.text).toBe(
      'Error: cannot move "/p/a.txt" to "/p/b.txt": a file exists at the destination and has not been read in this session — read the file first, then retry',
    );
    expect(await h.content('/p/b.txt')).toBe('B');

    await h.read('b.txt');
    await h.fs.writeText(await h.fs.resolve('/p/b.txt'), 'B2');
    expect(code(await h.move('a.txt', 'b.txt'))).toBe('FS_STALE_VERSION');
    expect(await h.content('/p/a.txt')).toBe('A');

    await h.read('b.txt');
    const r = await h.move('a.txt', 'b.txt');
    expect(r.isError, r.text).toBe(false);
    expect(r.text).toBe('Moved "/p/a.txt" to "/p/b.txt", replacing the file that was there.');
    expect(await h.content('/p/b.txt')).toBe('A');
  });

  it('guards a source this session read: a change since is stale', async () => {
    const h = harness({ '/p/a.txt': 'A' });
    await h.read('a.txt');
    await h.fs.writeText(await h.fs.resolve('/p/a.txt'), 'A2');
    const r = await h.move('a.txt', 'c.txt');
    expect(code(r)).toBe('FS_STALE_VERSION');
    expect(await h.content('/p/a.txt')).toBe('A2');
  });

  it('refuses an existing directory destination with a remedy, and moves directories', async () => {
    const h = harness({ '/p/a.txt': 'A', '/p/d/x.txt': 'x', '/p/e': null });
    const r = await h.move('a.txt', 'e');
    expect(code(r)).toBe('FS_ALREADY_EXISTS');
    expect(r.text).toContain('give the full new path (e.g. "/p/e/a.txt")');
    const d = await h.move('d', 'f/g');
    expect(d.isError, d.text).toBe(false);
    expect(d.text).toBe('Moved directory "/p/d" to "/p/f/g".');
    expect(await h.content('/p/f/g/x.txt')).toBe('x');
    expect(code(await h.move('missing', 'z'))).toBe('FS_NOT_FOUND');
  });

  it('property: whatever the session saw, a move never loses a file it did not read at its current version', async () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('read' as const), p: fc.constantFrom('a', 'b') }),
      fc.record({ op: fc.constant('touch' as const), p: fc.constantFrom('a', 'b'), c: fc.constantFrom('1', '2', '3') }),
      fc.record({ op: fc.constant('move' as const), from: fc.constantFrom('a', 'b'), to: fc.constantFrom('a', 'b', 'c') }),
      fc.record({ op: fc.constant('delete' as const), p: fc.constantFrom('a', 'b', 'c') }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 12 }), async (steps) => {
        const h = harness({ '/p/a': '0', '/p/b': '9' });
        // What the session has seen of each name: its content, or undefined.
        const seen = new Map<string, string | undefined>();
        for (const s of steps) {
          if (s.op === 'read') {
            const r = await h.read(s.p);
            seen.set(s.p, r.isError ? undefined : await h.content(`/p/${s.p}`));
          } else if (s.op === 'touch') {
            // Another writer.
            await h.fs.writeText(await h.fs.resolve(`/p/${s.p}`), s.c);
          } else if (s.op === 'delete') {
            const before = await h.content(`/p/${s.p}`);
            const r = await h.del(s.p);
            if (!r.isError) {
              expect(seen.has(s.p) && seen.get(s.p) === before).toBe(true);
              seen.set(s.p, undefined);
            }
          } else {
            const before = await h.content(`/p/${s.to}`);
            const moved = await h.content(`/p/${s.from}`);
            const r = await h.move(s.from, s.to);
            if (!r.isError && s.from !== s.to) {
              // Content at the destination was replaced only if the session had seen exactly it.
              if (before !== undefined) expect(seen.get(s.to)).toBe(before);
              expect(await h.content(`/p/${s.to}`)).toBe(moved);
              seen.set(s.from, undefined);
            }
            // A moved file (even onto itself) counts as seen at the version that moved, by design.
            if (!r.isError) seen.set(s.to, moved);
            if (r.isError) expect(await h.content(`/p/${s.to}`)).toBe(before);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});
