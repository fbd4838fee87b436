import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isFsError } from '../../src/seam/errors.js';
import { parseOperationBody, parsePatch, formatPatch, type PatchOperation } from '../../src/tools/patch/parse.js';

const codeOf = (f: () => unknown) => {
  try {
    f();
    return 'ok';
  } catch (err) {
    return isFsError(err) ? `${err.code}: ${err.message}` : String(err);
  }
};

// Text of one line: no line break, and (so it reads back as the same operation) no marker shape.
const lineText = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\t', '*', '@', '-', '+', 'é', '“', '\r') }).filter((s) => !s.endsWith('\r'));
const path = fc.stringMatching(/^[a-z][a-z0-9_/.-]{0,12}$/).filter((p) => !p.endsWith(' '));
const header = fc.stringMatching(/^[a-z(][a-z0-9 (){}:]{0,15}$/).map((s) => s.trim()).filter((s) => s !== '');
const hunk = fc.record({
  headers: fc.array(header, { maxLength: 2 }),
  lines: fc.array(fc.record({ op: fc.constantFrom(' ' as const, '-' as const, '+' as const), text: lineText }), { minLength: 1, maxLength: 6 }),
  endOfFile: fc.boolean(),
});
const operation: fc.Arbitrary<PatchOperation> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), path, lines: fc.array(lineText, { maxLength: 5 }) }),
  fc.record({ kind: fc.constant('delete' as const), path }),
  fc.record({ kind: fc.constant('update' as const), path, moveTo: fc.option(path, { nil: undefined }), hunks: fc.array(hunk, { minLength: 1, maxLength: 3 }) }),
).map((op) => ({ ...op, line: 0 }) as PatchOperation);

/** Operations without the parser's bookkeeping (line numbers; an absent moveTo). */
const shape = (ops: readonly PatchOperation[]) =>
  JSON.parse(JSON.stringify(ops, (k, v) => (k === 'line' ? undefined : v)));

describe('V4A parser', () => {
  it('reads back any rendered patch as the same operations (LF or CRLF)', () => {
    fc.assert(
      fc.property(fc.array(operation, { minLength: 1, maxLength: 4 }), fc.boolean(), (ops, crlf) => {
        const text = formatPatch(ops);
        expect(shape(parsePatch(crlf ? text.replaceAll('\n', '\r\n') : text))).toEqual(shape(ops));
      }),
    );
  });

  it('gives each operation and hunk its line in the patch', () => {
    const ops = parsePatch('*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b\n@@ f\n-y\n+z\n@@\n q\n*** End Patch');
    expect(ops.map((o) => o.line)).toEqual([2, 4]);
    expect(ops[1]!.kind === 'update' && ops[1]!.hunks.map((h) => h.line)).toEqual([5, 8]);
  });

  it('tolerates padded markers, blank lines around the envelope, a heredoc wrapper and a first hunk without @@', () => {
    const ops = parsePatch("\n<<'EOF'\n *** Begin Patch \n  *** Update File: f.txt\n-old\n+new\n\n*** End Patch  \nEOF\n");
    expect(shape(ops)).toEqual([{ kind: 'update', path: 'f.txt', hunks: [{ headers: [], lines: [{ op: '-', text: 'old' }, { op: '+', text: 'new' }, { op: ' ', text: '' }], endOfFile: false }] }]);
  });

  it('refuses malformed patches with FS_INVALID_ARGUMENT and the line number', () => {
    const cases: [string, RegExp][] = [
      ['*** Update File: a\n-x\n*** End Patch', /line 1: the first line must be "\*\*\* Begin Patch"/],
      ['*** Begin Patch\n*** Delete File: a', /line 2: the last line must be "\*\*\* End Patch"/],
      ['*** Begin Patch\n*** End Patch', /line 1: the patch changes no file/],
      ['*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch', /line 2: expected "\*\*\* Add File:"/],
      ['*** Begin Patch\n*** Update File: foo\n*** End Patch', /line 2: the update of "foo" has no hunks/],
      ['*** Begin Patch\n*** Update File: foo\n@@\n*** End Patch', /line 3: a hunk of the update at line 2 has no lines/],
      ['*** Begin Patch\n*** Update File: foo\n-a\nxyz\n*** End Patch', /line 4: a hunk line must start with/],
      ['*** Begin Patch\n*** Update File: foo\n@@ x\n*** End of File\n*** End Patch', /line 4: "\*\*\* End of File" must follow/],
      ['*** Begin Patch\n*** Add File:   \n*** End Patch', /line 2: "\*\*\* Add File:" needs a path/],
    ];
    for (const [patch, message] of cases) expect(codeOf(() => parsePatch(patch))).toMatch(new RegExp(`^FS_INVALID_ARGUMENT: invalid patch: ${message.source}`));
  });

  it('parses a Responses API operation body without the envelope', () => {
    expect(shape([parseOperationBody('add', 'n.txt', '+a\n+b\n')])).toEqual([{ kind: 'add', path: 'n.txt', lines: ['a', 'b'] }]);
    expect(codeOf(() => parseOperationBody('add', 'n.txt', '+a\nb'))).toMatch(/^FS_INVALID_ARGUMENT: invalid patch: line 2: a line of a new file must start with "\+"/);
    const u = parseOperationBody('update', 'u.txt', '@@ def f\n-a\n+b\n');
    expect(u.kind === 'update' && u.hunks[0]!.headers).toEqual(['def f']);
    expect(codeOf(() => parseOperationBody('update', 'u.txt', ''))).toMatch(/has no hunks/);
  });
});
