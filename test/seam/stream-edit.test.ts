import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editBytes, isFsError, type FsLineRange } from '../../src/seam/index.js';
import { streamEdit, type StreamEditResult } from '../../src/seam/stream-edit.js';

async function* chunked(bytes: Uint8Array, cuts: readonly number[]): AsyncGenerator<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let at = 0;
  for (const p of points) {
    yield bytes.subarray(at, p);
    at = p;
  }
  yield bytes.subarray(at);
}

interface Run {
  error?: unknown;
  bytes?: Buffer;
  replacements?: number;
  lines?: FsLineRange[];
}

async function run(bytes: Uint8Array, edit: { oldString: string; newString: string; replaceAll: boolean }, cuts: number[], windowBytes: number): Promise<Run> {
  const result: StreamEditResult = { replacements: 0, lines: [] };
  const out: Uint8Array[] = [];
  try {
    for await (const b of streamEdit(chunked(bytes, cuts), edit, 'cannot edit "f"', result, windowBytes)) out.push(b);
  } catch (err) {
    return { error: err };
  }
  return { bytes: Buffer.concat(out), ...result };
}

const unit = fc.constantFrom('a', 'b', 'ab', 'é', '😀', '\n', '\r\n', '\r', ' ');
const text = fc.array(unit, { maxLength: 40 }).map((a) => a.join(''));
const needle = fc.array(unit, { minLength: 1, maxLength: 5 }).map((a) => a.join(''));

/** The streamed edit of `bytes` cut at `cuts` gives what the whole-file edit gives: bytes, count and lines, or the same error code. */
async function expectAsWhole(bytes: Buffer, edit: { oldString: string; newString: string; replaceAll: boolean }, cuts: number[], windowBytes: number): Promise<void> {
  let expected;
  try {
    expected = editBytes(bytes, edit, 'cannot edit "f"');
  } catch (err) {
    const got = await run(bytes, edit, cuts, windowBytes);
    expect(isFsError(got.error) && got.error.code).toBe(isFsError(err) && err.code);
    return;
  }
  const got = await run(bytes, edit, cuts, windowBytes);
  expect(got.error).toBeUndefined();
  expect(Buffer.from(got.bytes!).toString('hex')).toBe(Buffer.from(expected.bytes).toString('hex'));
  expect(got.replacements).toBe(expected.replacements);
  expect(got.lines).toEqual(expected.lines);
}

describe('streamEdit (V7): the edit of a streamed file is the whole-file edit', () => {
  it('same bytes, replacements and line ranges, or the same error, for any chunking and window', async () => {
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.boolean(),
        needle,
        fc.array(unit, { maxLength: 4 }).map((a) => a.join('')),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.integer({ min: 1, max: 24 }),
        async (body, bom, oldString, newString, replaceAll, cuts, windowBytes) => {
          fc.pre(oldString.replaceAll('\r\n', '\n') !== newString.replaceAll('\r\n', '\n'));
          const bytes = Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(body)]);
          const edit = { oldString, newString, replaceAll };
          await expectAsWhole(bytes, edit, cuts, windowBytes);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('the same when chunks hold many lines and old_string spans several (a chunk searched where it lies)', async () => {
    const lineUnit = fc.constantFrom('a', 'b', 'é', '\n', '\n', '\r\n');
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineUnit, { maxLength: 160 }).map((a) => a.join('')),
        fc.array(lineUnit, { minLength: 2, maxLength: 6 }).map((a) => a.join('')),
        fc.array(lineUnit, { maxLength: 4 }).map((a) => a.join('')),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 3 }),
        fc.integer({ min: 1, max: 6 }),
        async (body, oldString, newString, replaceAll, cuts, windowBytes) => {
          fc.pre(oldString.replaceAll('\r\n', '\n') !== newString.replaceAll('\r\n', '\n'));
          const bytes = Buffer.from(body);
          const edit = { oldString, newString, replaceAll };
          await expectAsWhole(bytes, edit, cuts, windowBytes);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
