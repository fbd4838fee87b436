import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { UsageError, parseCommand } from '../../src/cli/args.js';
import { quotaOptions } from '../../src/cli/quota.js';
import { openLower, openSandbox, openWorkspace } from '../../src/cli/workspace.js';
import { codeOf, ensureBuilt, project, removeTemps, serve, textOf, type Served } from './helpers.js';

const dirs: string[] = [];
const temp = (label: string) => {
  const d = mkdtempSync(join(tmpdir(), `dsh-fs-cli-quota-${label}-`));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('--max-bytes and --max-files', () => {
  it('take a number of bytes with an optional unit, and a number of files', () => {
    const q = (...argv: string[]) => quotaOptions(parseCommand('mount', [...argv, 'mnt']), 'mount');
    expect(q('--max-bytes', '1000000')).toEqual({ maxBytes: 1_000_000 });
    expect(q('--max-bytes', '500M')).toEqual({ maxBytes: 500_000_000 });
    expect(q('--max-bytes', '2GiB', '--max-files', '10')).toEqual({ maxBytes: 2 * 1024 ** 3, maxFiles: 10 });
    expect(q('--max-bytes', '4kB')).toEqual({ maxBytes: 4000 });
    expect(q()).toEqual({});
    for (const bad of ['-1', '1.5M', 'lots', '3TB']) expect(() => q('--max-bytes', bad)).toThrow(UsageError);
    expect(() => q('--max-files', '2k')).toThrow(UsageError);
    expect(() => parseCommand('status', ['--max-bytes', '1'])).toThrow(UsageError);
  });

  it('Q1: a sandbox opened with a quota refuses a 2 MB write, and its state keeps nothing of it', async () => {
    const root = temp('root');
    const state = temp('state');
    writeFileSync(join(root, 'kept.txt'), 'kept\n');
    const ws = await openWorkspace({ root, mode: 'sandbox', stateDir: state, quota: { maxBytes: 1_000_000 } });
    const err = await ws.use(async (fs) => fs.writeBytes(await fs.resolve(join(root, 'big.bin')), new Uint8Array(2_000_000))).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'FS_QUOTA_EXCEEDED' });
    // Reopened by another process (no quota): no change, and the folder untouched.
    const again = await openSandbox(openLower(root), state);
    expect(await again.changes()).toEqual([]);
    expect(readdirSync(root)).toEqual(['kept.txt']);
    // The limit is per process: without it the same write goes in.
    await again.writeBytes(await again.resolve(join(root, 'big.bin')), new Uint8Array(2_000_000));
  });

  it('Q1: in direct mode the quota counts the whole directory', async () => {
    const root = temp('direct');
    writeFileSync(join(root, 'old.bin'), new Uint8Array(900));
    const ws = await openWorkspace({ root, mode: 'direct', quota: { maxBytes: 1000 } });
    const write = (name: string, n: number) => ws.use(async (fs) => fs.writeBytes(await fs.resolve(join(root, name)), new Uint8Array(n)));
    await expect(write('new.bin', 200)).rejects.toMatchObject({ code: 'FS_QUOTA_EXCEEDED' });
    await write('new.bin', 100);
    expect(readdirSync(root).sort()).toEqual(['new.bin', 'old.bin']);
  });
});

describe('dsh-fs serve --max-bytes', () => {
  const open: Served[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });
  afterAll(removeTemps);

  it('Q1: a tool call past the sandbox quota is FS_QUOTA_EXCEEDED over MCP, and the sandbox keeps nothing', async () => {
    await ensureBuilt();
    const { root, state } = await project({ 'a.txt': 'a\n' });
    const s = await serve(['--root', root, '--state', state, '--max-bytes', '100', '--no-audit']);
    open.push(s);
    const big = await s.call('write', { file_path: 'big.txt', content: 'b'.repeat(200) });
    expect(big.isError).toBe(true);
    expect(codeOf(big)).toBe('FS_QUOTA_EXCEEDED');
    expect(textOf(big)).toContain('quota of 100 bytes');
    const small = await s.call('write', { file_path: 'small.txt', content: 's'.repeat(50) });
    expect(small.isError, textOf(small)).toBeFalsy();
    expect(s.stderr()).toContain('quota 100 bytes');
    const sandbox = await openSandbox(openLower(root), state);
    expect((await sandbox.changes()).map((c) => c.path)).toEqual([join(root, 'small.txt')]);
  }, 600_000);
});
