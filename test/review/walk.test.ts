import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { walk } from '../../src/cli/review-walk.js';
import { dirFeedback } from '../../src/review/index.js';
import type { ReviewFile } from '../../src/review/index.js';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const file: ReviewFile = {
  path: 'a.txt',
  status: 'modified',
  kind: 'text',
  id: 'f1',
  hunks: [
    { id: 'h1', oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ['-old', '+new'] },
    { id: 'h2', oldStart: 9, oldLines: 1, newStart: 9, newLines: 1, lines: ['-x', '+y'] },
  ],
};
const bin: ReviewFile = { path: 'b.bin', status: 'added', kind: 'binary', id: 'f2', hunks: [] };

function io(answers: string, tty: boolean) {
  let out = '';
  const stdout = Object.assign(new Writable({ write: (c: Buffer, _e, done) => ((out += c.toString()), done()) }), { isTTY: tty });
  return { io: { stdout, stderr: stdout, env: {}, cwd: '/', stdin: Readable.from([answers]) }, out: () => out };
}

describe('the terminal walk', () => {
  it('asks per hunk and per file without lines; y, n, r with a reason, s', async () => {
    const t = io('y\nr\ntoo big\ns\n', false);
    expect(await walk([file, bin], t.io)).toEqual([
      { id: 'h1', decision: 'accept' },
      { id: 'h2', decision: 'reject', reason: 'too big' },
    ]);
    expect(t.out()).toContain('(3/3) Decide this change');
    expect(t.out()).toContain('(binary added: b.bin)');
    expect(t.out()).not.toContain('\x1b[');
  });

  it('colours a terminal, and the end of input quits with what was decided', async () => {
    const t = io('n\n', true);
    expect(await walk([file], t.io)).toEqual([{ id: 'h1', decision: 'reject' }]);
    expect(t.out()).toContain('\x1b[32m+new\x1b[39m');
    expect(t.out()).toContain('\x1b[31m-old\x1b[39m');
  });
});

describe('feedback kept in a state directory', () => {
  it('is handed over once and leaves no file behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-feedback-'));
    try {
      const store = dirFeedback(dir);
      store.add([{ path: 'a', lines: '1', reason: 'r', id: 'h' }]);
      expect(dirFeedback(dir).pending()).toHaveLength(1);
      expect(dirFeedback(dir).take()).toEqual([{ path: 'a', lines: '1', reason: 'r', id: 'h' }]);
      expect(store.take()).toEqual([]);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
