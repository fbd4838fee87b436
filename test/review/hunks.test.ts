import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { changedLines, textHunks } from '../../src/review/hunks.js';

const dir = mkdtempSync(join(tmpdir(), 'dsh-review-hunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** git's hunks for the same two texts: headers parsed, lines as printed. */
function gitHunks(before: string, after: string) {
  writeFileSync(join(dir, 'a'), before);
  writeFileSync(join(dir, 'b'), after);
  let out = '';
  try {
    execFileSync('git', ['diff', '--no-index', '--no-color', '-U3', 'a', 'b'], { cwd: dir, encoding: 'utf8' });
  } catch (err) {
    out = (err as { stdout: string }).stdout;
  }
  const hunks: { oldStart: number; oldLines: number; newStart: number; newLines: number; lines: string[] }[] = [];
  for (const line of out.split('\n').slice(0, -1)) {
    const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (m) hunks.push({ oldStart: +m[1]!, oldLines: m[2] === undefined ? 1 : +m[2], newStart: +m[3]!, newLines: m[4] === undefined ? 1 : +m[4], lines: [] });
    else if (hunks.length > 0) hunks.at(-1)!.lines.push(line);
  }
  return hunks;
}
const lines = (n: number, change: Record<number, string> = {}, eol = '\n') => Array.from({ length: n }, (_, i) => `${change[i + 1] ?? `l${i + 1}`}${eol}`).join('');

const cases: Record<string, [string, string]> = {
  'one change': [lines(10), lines(10, { 5: 'X' })],
  'changes 7 lines apart split': [lines(20), lines(20, { 2: 'X', 10: 'Y' })],
  'changes 6 lines apart merge': [lines(20), lines(20, { 2: 'X', 9: 'Y' })],
  'CRLF lines': [lines(8, {}, '\r\n'), lines(8, { 4: 'X' }, '\r\n')],
  'CRLF to LF on one line': [lines(8, {}, '\r\n'), lines(8, {}, '\r\n').replace('l4\r\n', 'l4\n')],
  'no final newline, last line changed': [lines(5).slice(0, -1), lines(5, { 5: 'X' }).slice(0, -1)],
  'final newline added': [lines(5).slice(0, -1), lines(5)],
  'BOM added': [lines(5), `\uFEFF${lines(5)}`],
  'file emptied': [lines(3), ''],
  'file from empty': ['', lines(3)],
  'insertion at the start': [lines(10), `new\n${lines(10)}`],
};

describe('hunks as git makes them', () => {
  for (const [name, [before, after]] of Object.entries(cases)) {
    it(name, () => {
      const ours = textHunks('f', before, after).map(({ oldStart, oldLines, newStart, newLines, lines }) => ({ oldStart, oldLines, newStart, newLines, lines }));
      expect(ours).toEqual(gitHunks(before, after));
    });
  }

  it('names the lines of the agent file a hunk changed', () => {
    const [h] = textHunks('f', lines(10), lines(10, { 5: 'X', 6: 'Y' }));
    expect(changedLines(h!)).toBe('5-6');
    const [d] = textHunks('f', lines(10), lines(10).replace('l5\n', ''));
    expect(changedLines(d!)).toBe('5');
  });
});
