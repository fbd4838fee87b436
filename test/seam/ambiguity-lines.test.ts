import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyEdit, type FsError } from '../../src/seam/index.js';
import { streamEdit, type StreamEditResult } from '../../src/seam/stream-edit.js';

/** The line numbers an ambiguity message lists. */
const listed = (message: string) => /\(at lines? ([\d, ]+)(, …)?\)/.exec(message)![1]!.split(', ').map(Number);

async function streamed(text: string, oldString: string): Promise<FsError> {
  const result: StreamEditResult = { replacements: 0, lines: [] };
  async function* source() {
    yield Buffer.from(text);
  }
  try {
    for await (const chunk of streamEdit(source(), { oldString, newString: 'Z', replaceAll: false }, 'cannot edit "f"', result, 64)) void chunk;
  } catch (err) {
    return err as FsError;
  }
  throw new Error('the streamed edit did not refuse');
}

describe('an ambiguous edit names each line once', () => {
  it('two matches on one line: "at line 1", not "at lines 1, 1"', async () => {
    const r = applyEdit('aa\nb\n', 'a', 'c');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.message).toMatch(/^old_string matches 2 times \(at line 1\); /);
    expect((await streamed('xaa\n', 'a')).message).toMatch(/matches at least 2 times \(at line 1\); /);
    const spread = applyEdit('a\nb\na a\n', 'a', 'c');
    expect(!spread.ok && spread.error.message).toMatch(/^old_string matches 3 times \(at lines 1, 3\); /);
  });

  it('the lines listed are distinct and increasing, whatever the text', () => {
    const unit = fc.constantFrom('a', 'b', ' ', '\n', '\r\n');
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 60 }).map((u) => u.join('')), fc.constantFrom('a', 'a ', 'b', 'ab'), (text, needle) => {
        const r = applyEdit(text, needle, 'Z');
        if (r.ok || r.error.code !== 'FS_AMBIGUOUS_EDIT') return;
        const lines = listed(r.error.message);
        for (let i = 1; i < lines.length; i++) expect(lines[i]).toBeGreaterThan(lines[i - 1]!);
      }),
    );
  });
});
