import fc from 'fast-check';
import { textHunks, type TextHunk } from '../../src/review/hunks.js';
import type { MemoryFileSystem } from '../../src/backends/memory/index.js';
import type { OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { isFsError } from '../../src/seam/index.js';

// What the review model's tests share: reading and writing text, and random files with random edit scripts.

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { ignoreBOM: true });

export async function put(fs: MemoryFileSystem | OverlayFileSystem, path: string, text: string) {
  await fs.writeBytes(await fs.resolve(path), enc.encode(text));
}
export async function get(fs: MemoryFileSystem | OverlayFileSystem, path: string): Promise<string | undefined> {
  try {
    return dec.decode((await fs.readBytes(await fs.resolve(path), { maxBytes: 1 << 20 })).bytes);
  } catch (err) {
    if (isFsError(err, 'FS_NOT_FOUND')) return undefined;
    throw err;
  }
}
export const numbered = (n: number, change: Record<number, string> = {}) =>
  Array.from({ length: n }, (_, i) => `${change[i + 1] ?? `line ${i + 1}`}\n`).join('');

/** A base of short lines and an edit script over it (replace, insert, delete at random places). */
export const lineArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'x\r', '');
export const editArb = fc.record({ at: fc.nat(), del: fc.nat({ max: 3 }), ins: fc.array(lineArb, { maxLength: 3 }) });
export const caseArb = fc.record({
  base: fc.array(lineArb, { maxLength: 40 }),
  edits: fc.array(editArb, { minLength: 1, maxLength: 5 }),
  finalNewline: fc.tuple(fc.boolean(), fc.boolean()),
  picks: fc.array(fc.constantFrom('accept', 'reject', 'skip'), { minLength: 20, maxLength: 20 }),
});
export function edited(base: readonly string[], edits: readonly { at: number; del: number; ins: readonly string[] }[]): string[] {
  const out = [...base];
  for (const e of edits) {
    const at = out.length === 0 ? 0 : e.at % (out.length + 1);
    out.splice(at, e.del, ...e.ins.map((l) => `${l}!`));
  }
  return out;
}
export const text = (lines: readonly string[], newline: boolean) => (lines.length === 0 ? '' : lines.join('\n') + (newline ? '\n' : ''));

/** A case's two texts (a case without a change is skipped), their hunks, and the reviewer's split of them: `picks` cycled over the hunks. */
export function splitOf({ base, edits, finalNewline, picks }: typeof caseArb extends fc.Arbitrary<infer C> ? C : never) {
  const before = text(base, finalNewline[0]);
  const after = text(edited(base, edits), finalNewline[1]);
  fc.pre(before !== '' && after !== '' && before !== after);
  const hunks = textHunks('f.txt', before, after);
  const pick = (i: number) => picks[i % picks.length]!;
  const decisions = hunks.flatMap((h, i) => (pick(i) === 'skip' ? [] : [{ id: h.id, decision: pick(i) as 'accept' | 'reject' }]));
  const accepted = new Set<TextHunk>(hunks.filter((_, i) => pick(i) === 'accept'));
  const rejected = new Set<TextHunk>(hunks.filter((_, i) => pick(i) === 'reject'));
  return { before, after, hunks, decisions, accepted, rejected };
}
