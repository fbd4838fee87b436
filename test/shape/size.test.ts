import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe as suite, expect, it } from 'vitest';
import { describe, lineCount, offences, type Offence } from './size.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.isFile() && entry.name.endsWith('.ts') ? [path] : [];
  });
}

function offencesIn(file: string): Offence[] {
  return offences(relative(repo, file).split('\\').join('/'), readFileSync(file, 'utf8'));
}

/** `n` lines of text, each `line`. */
const lines = (n: number, line: string) => Array.from({ length: n }, () => line).join('\n') + '\n';
/** A function declaration of exactly `n` lines. */
const fn = (n: number) => `function f() {\n${lines(n - 2, '  void 0;')}}\n`;

suite('the size check', () => {
  it('counts lines as wc -l does', () => {
    expect(lineCount('')).toBe(0);
    expect(lineCount('a\n')).toBe(1);
    expect(lineCount('a\nb')).toBe(2);
  });

  it('fails a 151-line function and passes one of 150', () => {
    expect(offences('f.ts', fn(150))).toEqual([]);
    const found = offences('f.ts', `// a comment\n${fn(151)}`);
    expect(found).toEqual([{ file: 'f.ts', line: 2, lines: 151, kind: 'function', name: 'f' }]);
    expect(describe(found[0]!)).toBe('f.ts:2 f: 151 lines (over 150)');
  });

  it('measures arrows, function expressions, methods, accessors and constructors', () => {
    const body = lines(150, '    void 0;');
    const source = [
      `const arrow = () => {\n${body}};`,
      `const expr = function () {\n${body}};`,
      `class C {\n  constructor() {\n${body}  }\n  method() {\n${body}  }\n  get value() {\n${body}  }\n  set value(v: number) {\n${body}  }\n}`,
    ].join('\n');
    const names = offences('c.ts', source, { file: 10_000, fn: 150 }).map((o) => o.name);
    expect(names).toEqual(['arrow', 'expr', 'constructor', 'method', 'value', 'value']);
  });

  it('fails a 401-line file and passes one of 400', () => {
    expect(offences('a.ts', lines(400, 'void 0;'))).toEqual([]);
    const found = offences('a.ts', lines(401, 'void 0;'));
    expect(found).toEqual([{ file: 'a.ts', line: 1, lines: 401, kind: 'file', name: 'a.ts' }]);
    expect(describe(found[0]!)).toBe('a.ts: 401 lines (over 400)');
  });
});

suite('src', () => {
  const files = sourceFiles(join(repo, 'src'));

  it(`has no file over 400 lines and no function over 150`, () => {
    // No exceptions: split a file by concern before it grows past the limit.
    expect(files.flatMap(offencesIn).map(describe)).toEqual([]);
  });
});
