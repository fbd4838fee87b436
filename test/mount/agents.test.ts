import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, ensureBuilt, project, removeTemps, runCli, serve, textOf, type Served } from '../cli/helpers.js';
import { forceUnmount, fuseUnavailable, isMounted, sh, startMount } from './helpers.js';

const why = await fuseUnavailable();
if (why !== undefined) console.warn(`mount tests skipped: ${why}`);

/** A program holding a file open for writing: opens it, then on "go" writes, closes and prints what close said. */
const WRITER = `
const fs = require('fs');
const lines = require('readline').createInterface({ input: process.stdin })[Symbol.asyncIterator]();
(async () => {
  const fd = fs.openSync(process.argv[1], 'w');
  console.log('opened');
  await lines.next();
  fs.writeSync(fd, 'program\\n');
  try { fs.closeSync(fd); console.log('closed ok'); } catch (e) { console.log('close failed ' + e.code); }
  process.exit(0);
})();
`;

function startWriter(path: string) {
  const child = spawn('node', ['-e', WRITER, path], { cwd: '/', stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return { next: async () => (await lines.next()).value as string | undefined, go: () => child.stdin.write('go\n'), kill: () => child.kill('SIGKILL') };
}

/**
 * An MCP server and a mount of one sandbox at once: two processes on one state directory, each
 * taking the state lock per call (the mount a burst of calls at a time).
 */
describe.skipIf(why !== undefined)('an agent (dsh-fs serve) and programs (dsh-fs mount) on one sandbox', () => {
  let p: Awaited<ReturnType<typeof project>>;
  let env: NodeJS.ProcessEnv;
  let where: string;
  let mount: ReturnType<typeof startMount>;
  let agent: Served;
  const files = { 'agent.txt': 'agent old\n', 'program.txt': 'program old\n', 'held.txt': 'held old\n', 'read.txt': 'read old\n' };

  beforeAll(async () => {
    await ensureBuilt();
    p = await project(files);
    env = { XDG_STATE_HOME: join(p.base, 'xdg') };
    where = join(p.base, 'mnt');
    await mkdir(where);
    mount = startMount(['--root', p.root, where], env);
    await mount.ready;
    agent = await serve(['--root', p.root], env);
  }, 300_000);
  afterAll(async () => {
    await agent?.close();
    mount?.child.kill('SIGTERM');
    await mount?.exited;
    await forceUnmount(where);
    await removeTemps();
  });

  it('an agent’s edit and a program’s write of other files both survive, each seen by the other', async () => {
    expect((await agent.call('read', { file_path: 'agent.txt' })).isError).toBeFalsy();
    const edit = await agent.call('edit', { file_path: 'agent.txt', old_string: 'old', new_string: 'new' });
    expect(edit.isError, textOf(edit)).toBeFalsy();
    const w = await sh(`cd "${where}" && echo 'program new' > program.txt && echo made > made.txt && cat agent.txt`);
    expect(w.stdout, w.stderr).toBe('agent new\n');
    expect(textOf(await agent.call('read', { file_path: 'program.txt' }))).toContain('program new');
    const status = await runCli(['status', '--root', p.root], { env });
    expect(status.stdout, status.stderr).toBe('M agent.txt\nA made.txt\nM program.txt\n');
  });

  it('same file, the program later: its close fails with EIO and the agent’s edit stays', async () => {
    const w = startWriter(join(where, 'held.txt'));
    try {
      expect(await w.next()).toBe('opened');
      expect((await agent.call('read', { file_path: 'held.txt' })).isError).toBeFalsy();
      const edit = await agent.call('edit', { file_path: 'held.txt', old_string: 'old', new_string: 'agent' });
      expect(edit.isError, textOf(edit)).toBeFalsy();
      w.go();
      expect(await w.next()).toBe('close failed EIO');
    } finally {
      w.kill();
    }
    expect((await sh(`cat "${where}/held.txt"`)).stdout).toBe('held agent\n');
    expect(textOf(await agent.call('read', { file_path: 'held.txt' }))).toContain('held agent');
  });

  it('same file, the agent later: its edit and its write are refused as stale and the program’s bytes stay', async () => {
    expect((await agent.call('read', { file_path: 'read.txt' })).isError).toBeFalsy();
    const w = await sh(`cd "${where}" && echo 'by the program' > read.txt`);
    expect(w.code, w.stderr).toBe(0);
    const edit = await agent.call('edit', { file_path: 'read.txt', old_string: 'old', new_string: 'agent' });
    expect(edit.isError).toBe(true);
    expect(codeOf(edit)).toBe('FS_STALE_VERSION');
    const write = await agent.call('write', { file_path: 'read.txt', content: 'agent\n' });
    expect(write.isError).toBe(true);
    expect(codeOf(write)).toBe('FS_STALE_VERSION');
    expect((await sh(`cat "${where}/read.txt"`)).stdout).toBe('by the program\n');
  });

  it('commit while both run: the directory gets every change, and both go on over it', async () => {
    const commit = await runCli(['commit', '--root', p.root], { env });
    expect(commit.code, commit.stderr).toBe(0);
    expect(await readFile(join(p.root, 'agent.txt'), 'utf8')).toBe('agent new\n');
    expect(await readFile(join(p.root, 'held.txt'), 'utf8')).toBe('held agent\n');
    expect(await readFile(join(p.root, 'read.txt'), 'utf8')).toBe('by the program\n');
    expect(await readFile(join(p.root, 'made.txt'), 'utf8')).toBe('made\n');
    expect((await runCli(['status', '--root', p.root], { env })).stdout).toBe('No changes.\n');
    expect((await sh(`cd "${where}" && echo after > after.txt && cat agent.txt`)).stdout).toBe('agent new\n');
    expect(textOf(await agent.call('read', { file_path: 'after.txt' }))).toContain('after');
    expect(await isMounted(where)).toBe(true);
  });
});
