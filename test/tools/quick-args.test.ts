import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEditSchema, createReadSchema, quickEditArgs, quickReadArgs } from '../../src/tools/schemas.js';

// The tools' shortcut past zod must parse exactly as the schema does, or leave the call to it.
const value = fc.oneof(
  fc.constantFrom('', ' ', '\t', 'a', 'a.txt', '/w/src/f.ts', ' x ', 'MARK_A', '\n'),
  fc.string({ maxLength: 6 }),
  fc.constantFrom(0, 1, 2, -1, 1.5, 2 ** 53, Number.NaN, Infinity, 2000),
  fc.constantFrom(null, undefined, true, false),
  fc.constant([]),
  fc.constant({}),
);
// Well-formed values per key, so every run also draws calls the shortcut takes (not left to luck).
const wellFormed: Record<string, fc.Arbitrary<unknown>> = {
  file_path: fc.constantFrom('a.txt', '/w/src/f.ts', 'dir/x y.md'),
  old_string: fc.string({ minLength: 1, maxLength: 6 }),
  new_string: fc.string({ maxLength: 6 }),
  replace_all: fc.boolean(),
  offset: fc.constantFrom(1, 2, 2000),
  limit: fc.constantFrom(1, 2, 2000),
};
const argsOf = (keys: readonly string[]) =>
  fc.oneof(
    fc.dictionary(fc.constantFrom(...keys, 'edits', 'extra', 'path'), value, { maxKeys: 5 }),
    fc.record(Object.fromEntries(keys.map((k) => [k, value])), { requiredKeys: [] }),
    fc.record(Object.fromEntries(keys.map((k) => [k, fc.oneof(wellFormed[k]!, value)])), {
      requiredKeys: keys.filter((k) => k !== 'replace_all' && k !== 'offset' && k !== 'limit'),
    }),
    fc.constantFrom(null, 'a.txt', [], 3),
  );

/** The shortcut agrees with the schema on every call it takes, and takes some. */
function agreesWithSchema(keys: readonly string[], quick: (args: unknown) => unknown, schema: { parse(args: unknown): unknown }): void {
  let taken = 0;
  fc.assert(
    fc.property(argsOf(keys), (args) => {
      const got = quick(args);
      if (got === undefined) return;
      taken++;
      expect(got).toStrictEqual(schema.parse(args));
    }),
    { numRuns: 3000 },
  );
  expect(taken).toBeGreaterThan(0);
}

describe('quick argument parsing', () => {
  it('property: read arguments parse as createReadSchema parses them, or are left to it', () => {
    agreesWithSchema(['file_path', 'offset', 'limit'], quickReadArgs, createReadSchema());
  });

  it('property: edit arguments parse as createEditSchema parses them, or are left to it', () => {
    agreesWithSchema(['file_path', 'old_string', 'new_string', 'replace_all'], quickEditArgs, createEditSchema());
  });

  it('takes the plain cases', () => {
    expect(quickReadArgs({ file_path: 'a.txt' })).toStrictEqual({ file_path: 'a.txt' });
    expect(quickReadArgs({ file_path: 'a.txt', offset: 3, limit: 10 })).toStrictEqual({ file_path: 'a.txt', offset: 3, limit: 10 });
    expect(quickEditArgs({ file_path: 'a', old_string: 'x', new_string: '' })).toStrictEqual({ file_path: 'a', old_string: 'x', new_string: '', replace_all: false });
    // Left to zod, which words the error or treats null as left out.
    expect(quickReadArgs({ file_path: ' ' })).toBeUndefined();
    expect(quickReadArgs({ file_path: 'a', offset: null })).toBeUndefined();
    expect(quickEditArgs({ file_path: 'a', edits: [] })).toBeUndefined();
  });
});
