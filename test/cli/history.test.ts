import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { REPO, project, removeTemps } from './helpers.js';

afterAll(removeTemps);

async function run(argv: string[]) {
  let out = '';
  let err = '';
  const stream = (sink: (s: string) => void) => ({ isTTY: false, write: (s: string) => (sink(s), true) }) as unknown as Io['stdout'];
  const io: Io = { stdout: stream((s) => (out += s)), stderr: stream((s) => (err += s)), env: {}, cwd: REPO };
  const code = await main(argv, io);
  return { code, stdout: out, stderr: err };
}

const SAMPLE = { 'src/app.ts': 'v0\n', 'README.md': '# r\n' };

/** A sandbox with three edits (checkpoints 1 to 3), the second labelled. */
async function sandboxWithHistory() {
  const p = await project(SAMPLE);
  const overlay = await createOverlayFs({ lower: createLocalFs({ root: p.root }), stateDir: p.state });
  await overlay.writeText(await overlay.resolve('src/app.ts'), 'v1\n');
  await overlay.label({ owner: 'agent-1', source: 'write' }, async () => overlay.writeText(await overlay.resolve('src/new.ts'), 'n\n'));
  await overlay.writeText(await overlay.resolve('src/app.ts'), 'v3\n');
  return { ...p, args: ['--root', p.root, '--state', p.state] };
}

describe('checkpoints, rewind and diff --from', () => {
  it('checkpoints lists one line per change (or JSON); a root with no sandbox has none', async () => {
    const p = await sandboxWithHistory();
    const text = await run(['checkpoints', ...p.args]);
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^1 {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}src\/app\.ts$/);
    expect(lines[1]).toMatch(/^2 .* src\/new\.ts {2}\[owner: agent-1, source: write\]$/);
    const json = JSON.parse((await run(['checkpoints', ...p.args, '--json'])).stdout);
    expect(json.checkpoints.map((c: { id: number; paths: string[] }) => [c.id, c.paths])).toEqual([[1, ['src/app.ts']], [2, ['src/new.ts']], [3, ['src/app.ts']]]);
    const empty = await project(SAMPLE);
    expect(await run(['checkpoints', '--root', empty.root, '--state', empty.state])).toEqual({ code: 0, stdout: 'No checkpoints.\n', stderr: '' });
  });

  it('rewind --to ID brings the sandbox (or PATHs) back, records a checkpoint, and leaves the directory alone', async () => {
    const p = await sandboxWithHistory();
    expect(await run(['rewind', ...p.args, '--to', '2', 'src/app.ts'])).toEqual({
      code: 0,
      stdout: 'Rewound src/app.ts to checkpoint 2: 1 path changed (recorded as checkpoint 4).\n',
      stderr: '',
    });
    expect((await run(['diff', ...p.args, '--from', '3'])).stdout).toContain('-v3\n+v1\n');
    expect((await run(['diff', ...p.args, '--from', '1', '--to', '2'])).stdout).toContain('+++ b/src/new.ts');
    expect((await run(['status', ...p.args])).stdout).toBe('M src/app.ts\nA src/new.ts\n');
    const all = JSON.parse((await run(['rewind', ...p.args, '--to', '1', '--json'])).stdout);
    expect(all).toEqual({ rewoundTo: 1, checkpoint: 5, paths: ['src/new.ts'] });
    expect((await run(['rewind', ...p.args, '--to', '5'])).stdout).toBe('Nothing to rewind: the sandbox already is as it was at checkpoint 5.\n');
    expect(await readFile(join(p.root, 'src/app.ts'), 'utf8')).toBe('v0\n');
  });

  it('an unknown checkpoint fails with exit status 1; a malformed or missing one is a usage error', async () => {
    const p = await sandboxWithHistory();
    const unknown = await run(['rewind', ...p.args, '--to', '99']);
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toMatch(/there is no checkpoint 99 \(those kept are 1 to 3\) \(FS_NOT_FOUND\)/);
    expect((await run(['diff', ...p.args, '--from', '99'])).code).toBe(1);
    const usage: [string[], RegExp][] = [
      [['rewind', ...p.args], /^dsh-fs rewind: --to is required\n/],
      [['rewind', ...p.args, '--to', 'HEAD'], /^dsh-fs rewind: --to must be a checkpoint id/],
      [['diff', ...p.args, '--to', '2'], /^dsh-fs diff: --to needs --from\n/],
      [['diff', ...p.args, '--from', '1', '--against-parent'], /^dsh-fs diff: give either --against-parent or --from\n/],
      [['checkpoints', ...p.args, 'src'], /^dsh-fs checkpoints: unexpected argument "src"\n/],
    ];
    for (const [argv, message] of usage) {
      const r = await run(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr, argv.join(' ')).toMatch(message);
    }
  });

  it('serve --rewind-tool applies to a sandbox only (usage error in direct mode)', async () => {
    const p = await project(SAMPLE);
    const direct = await run(['serve', '--root', p.root, '--mode', 'direct', '--rewind-tool']);
    expect(direct.code).toBe(2);
    expect(direct.stderr).toContain('--rewind-tool applies to --mode sandbox only');
  });
});
