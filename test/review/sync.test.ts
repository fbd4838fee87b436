import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { sync } from '../../src/review/index.js';
import { REPO, project, removeTemps } from '../cli/helpers.js';

afterAll(removeTemps);

const A = Array.from({ length: 80 }, (_, i) => `line ${i + 1}\n`).join('');
const edit = (text: string, line: number, to: string) => text.split('\n').map((l, i) => (i === line - 1 ? to : l)).join('\n');
const read = async (fs: OverlayFileSystem, p: string) => (await fs.readText(await fs.resolve(p))).text;

async function run(argv: string[]) {
  let stdout = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const io: Io = { stdout: stream((s) => (stdout += s)), stderr: stream(() => {}), env: {}, cwd: REPO };
  return { code: await main(argv, io), stdout };
}

describe('sync: the folder moved under the sandbox', () => {
  it('merges a folder edit that does not overlap, so the commit has no conflict; without sync the commit conflicts', async () => {
    for (const synced of [true, false]) {
      const lower = createMemoryFs({ files: { '/a.txt': A } });
      const sandbox = await createOverlayFs({ lower });
      await sandbox.writeText(await sandbox.resolve('/a.txt'), edit(A, 2, 'line 2 in the sandbox'));
      await lower.writeText(await lower.resolve('/a.txt'), edit(A, 60, 'line 60 in the folder'));
      if (synced) expect(await sync(sandbox)).toEqual({ merged: ['/a.txt'], conflicts: [], marked: [], applied: true });
      const r = await sandbox.commit();
      expect(r.conflicts.length).toBe(synced ? 0 : 1);
      if (synced) expect((await lower.readText(await lower.resolve('/a.txt'))).text).toBe(edit(edit(A, 2, 'line 2 in the sandbox'), 60, 'line 60 in the folder'));
    }
  });

  it('reports overlapping edits, a removal against a change, and changes nothing; markers name sandbox and folder', async () => {
    const lower = createMemoryFs({ files: { '/a.txt': A, '/b.txt': 'b\n' } });
    const sandbox = await createOverlayFs({ lower });
    await sandbox.writeText(await sandbox.resolve('/a.txt'), edit(A, 2, 'sandbox'));
    await sandbox.remove(await sandbox.resolve('/b.txt'));
    await lower.writeText(await lower.resolve('/a.txt'), edit(A, 2, 'folder'));
    await lower.writeText(await lower.resolve('/b.txt'), 'b2\n');
    const r = await sync(sandbox);
    expect(r.applied).toBe(false);
    expect(r.conflicts.map((c) => [c.path, c.kind])).toEqual([['/a.txt', 'content'], ['/b.txt', 'delete-modify']]);
    expect(r.conflicts[0]!.regions).toEqual([{ base: 'line 2\n', ours: 'sandbox\n', theirs: 'folder\n', baseStart: 2, oursStart: 2, theirsStart: 2 }]);
    expect(await read(sandbox, '/a.txt')).toBe(edit(A, 2, 'sandbox'));
    const marked = await sync(sandbox, { markers: true });
    expect(marked.marked).toEqual(['/a.txt']);
    expect(await read(sandbox, '/a.txt')).toContain('<<<<<<< sandbox\nsandbox\n||||||| base\nline 2\n=======\nfolder\n>>>>>>> folder\n');
    const commit = await sandbox.commit(['/a.txt']);
    expect(commit.conflicts.map((c) => c.message)).toEqual([expect.stringContaining('conflict markers')]);
  });

  it('keeps a copied-up file\'s first content for text up to 256 KiB only', async () => {
    const big = 'x'.repeat(256 * 1024 + 1);
    const lower = createMemoryFs({ files: { '/big.txt': big, '/bin': new Uint8Array([0, 1, 2]) } });
    const sandbox = await createOverlayFs({ lower });
    await sandbox.writeText(await sandbox.resolve('/big.txt'), `${big}y`);
    await sandbox.writeBytes(await sandbox.resolve('/bin'), new Uint8Array([0, 1, 3]));
    await lower.writeText(await lower.resolve('/big.txt'), `z${big}`);
    await lower.writeBytes(await lower.resolve('/bin'), new Uint8Array([9, 1, 2]));
    const r = await sync(sandbox);
    expect(r.conflicts.map((c) => [c.path, c.message])).toEqual([
      ['/big.txt', expect.stringContaining('first content was not kept')],
      ['/bin', expect.stringContaining('first content was not kept')],
    ]);
  });

  it('dsh-fs sync: after an edit of line 60 in the folder, merges it into the sandbox (state reopened), then commit succeeds', async () => {
    const p = await project({ 'a.txt': A });
    const sandbox = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state });
    await sandbox.writeText(await sandbox.resolve('a.txt'), edit(A, 2, 'line 2 in the sandbox'));
    writeFileSync(join(p.root, 'a.txt'), edit(A, 60, 'line 60 in the folder'));
    const dry = await run(['sync', '--root', p.root, '--state', p.state, '--dry-run', '--json']);
    expect(dry).toEqual({ code: 0, stdout: `${JSON.stringify({ merged: ['a.txt'], conflicts: [] }, null, 2)}\n` });
    expect(await run(['sync', '--root', p.root, '--state', p.state])).toEqual({ code: 0, stdout: 'Merged 1 path:\n  a.txt\n' });
    expect((await run(['commit', '--root', p.root, '--state', p.state])).code).toBe(0);
    expect(readFileSync(join(p.root, 'a.txt'), 'utf8')).toBe(edit(edit(A, 2, 'line 2 in the sandbox'), 60, 'line 60 in the folder'));
  });
});
