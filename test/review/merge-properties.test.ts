import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createOverlayFs, type OverlayFileSystem } from '../../src/backends/overlay/index.js';
import { merge, resolveMarkers } from '../../src/review/index.js';
import { mergeText } from '../../src/review/merge-lines.js';

const RUNS = Number(process.env.DSH_FS_MERGE_RUNS ?? 100);
const enc = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const dec = (b: Uint8Array) => Buffer.from(b).toString('utf8');

/** Lines from a small alphabet (so edits collide often), each with its break; the last maybe without. */
const lineArb = fc.constantFrom('a', 'b', 'c', 'x y', '', 'a\r');
const textArb = (finalBreak: fc.Arbitrary<boolean>) =>
  fc.tuple(fc.array(fc.tuple(lineArb, fc.constantFrom('\n', '\r\n')), { maxLength: 12 }), finalBreak).map(([lines, closed]) => {
    const text = lines.map(([l, eol]) => l + eol).join('');
    return closed || text === '' ? text : text.replace(/\r?\n$/, '');
  });

/** An edit of `base`: some lines replaced, removed or added. */
function editedArb(base: string): fc.Arbitrary<string> {
  const lines = base === '' ? [] : base.split(/(?<=\n)/);
  return fc
    .array(fc.tuple(fc.nat({ max: lines.length }), fc.constantFrom('replace', 'remove', 'insert'), lineArb), { maxLength: 3 })
    .map((edits) => {
      const out = [...lines];
      for (const [at, how, line] of edits) {
        const i = Math.min(at, out.length);
        if (how === 'insert' || i === out.length) out.splice(i, 0, `${line}\n`);
        else if (how === 'remove') out.splice(i, 1);
        else out[i] = `${line}\n`;
      }
      return out.join('');
    });
}

const threeArb = (finalBreak: fc.Arbitrary<boolean>) =>
  textArb(finalBreak).chain((base) => fc.tuple(fc.constant(base), editedArb(base), editedArb(base)));

describe('three-way merge of text (properties)', () => {
  it('a side with no changes merges to the other side, whatever it is', () => {
    fc.assert(
      fc.property(threeArb(fc.boolean()), ([base, ours]) => {
        const one = mergeText(enc(base), enc(ours), enc(base));
        const two = mergeText(enc(base), enc(base), enc(ours));
        expect(one.ok && dec(one.bytes)).toBe(ours);
        expect(two.ok && dec(two.bytes)).toBe(ours);
      }),
      { numRuns: RUNS },
    );
  });

  it('edits separated by an unchanged line merge cleanly and equal applying both', () => {
    // Distinct lines in each part: with repeated lines the alignment itself is ambiguous.
    const arb = fc.record({
      head: fc.uniqueArray(fc.constantFrom('h1', 'h2', 'h3'), { minLength: 1, maxLength: 3 }),
      gap: fc.uniqueArray(fc.constantFrom('g1', 'g2'), { minLength: 1, maxLength: 2 }),
      tail: fc.uniqueArray(fc.constantFrom('t1', 't2', 't3'), { minLength: 1, maxLength: 3 }),
      ours: fc.array(fc.constantFrom('OURS', 'o'), { maxLength: 3 }),
      theirs: fc.array(fc.constantFrom('THEIRS', 't'), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(arb, ({ head, gap, tail, ours, theirs }) => {
        const text = (...parts: string[][]) => parts.flat().map((l) => `${l}\n`).join('');
        // Ours rewrites the head, theirs the tail; the gap between them is left alone by both.
        const [o, a, b] = [text(head, gap, tail), text(ours, gap, tail), text(head, gap, theirs)];
        const merged = mergeText(enc(o), enc(a), enc(b));
        expect(merged.ok && dec(merged.bytes)).toBe(text(ours, gap, theirs));
      }),
      { numRuns: RUNS },
    );
  });

  it('merge(a, b) and merge(b, a) give the same bytes when clean, and conflict together', () => {
    fc.assert(
      fc.property(threeArb(fc.boolean()), ([base, a, b]) => {
        const ab = mergeText(enc(base), enc(a), enc(b));
        const ba = mergeText(enc(base), enc(b), enc(a));
        expect(ab.ok).toBe(ba.ok);
        if (ab.ok && ba.ok) expect(dec(ab.bytes)).toBe(dec(ba.bytes));
      }),
      { numRuns: RUNS },
    );
  });

  it('a conflict region holds both sides\' lines in full, at the line numbers it gives', () => {
    fc.assert(
      fc.property(threeArb(fc.boolean()), ([base, a, b]) => {
        const r = mergeText(enc(base), enc(a), enc(b));
        if (r.ok) return;
        const lines = (t: string) => t.split(/(?<=\n)/);
        const at = (t: string, start: number, region: string) => lines(t).slice(start - 1).join('').startsWith(region);
        for (const region of r.regions) {
          expect(at(a, region.oursStart, region.ours)).toBe(true);
          expect(at(b, region.theirsStart, region.theirs)).toBe(true);
          expect(at(base, region.baseStart, region.base)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('after markers, taking ours gives ours and taking theirs gives theirs (one edit a side, files ending with a line break)', () => {
    // With one edit a side, all of each side's change is in the conflict: git's rule leaves the
    // other side's clean changes merged outside the markers, so with more edits taking a side
    // gives that side plus the other's clean changes.
    const oneEdit = (base: string) =>
      fc.tuple(fc.nat({ max: 20 }), fc.nat({ max: 2 }), fc.array(fc.constantFrom('o', 'p', 'a'), { maxLength: 2 })).map(([at, drop, add]) => {
        const lines = base === '' ? [] : base.split(/(?<=\n)/);
        const i = Math.min(at, lines.length);
        lines.splice(i, drop, ...add.map((l) => `${l}\n`));
        return lines.join('');
      });
    // Distinct base lines: with repeated ones, an edit's alignment (which copy it touched) is ambiguous.
    const baseArb = fc.uniqueArray(fc.tuple(fc.constantFrom('l1', 'l2', 'l3', 'l4', 'l5', 'l6'), fc.constantFrom('\n', '\r\n')), { selector: ([l]) => l, maxLength: 6 });
    const arb = baseArb.map((ls) => ls.map(([l, eol]) => l + eol).join('')).chain((base) => fc.tuple(fc.constant(base), oneEdit(base), oneEdit(base)));
    fc.assert(
      fc.property(arb, ([base, a, b]) => {
        const r = mergeText(enc(base), enc(a), enc(b));
        if (r.ok) return;
        const text = dec(r.withMarkers);
        expect(resolveMarkers(text, 'ours')).toBe(a);
        expect(resolveMarkers(text, 'theirs')).toBe(b);
      }),
      { numRuns: RUNS },
    );
  });

});

const FILES = ['/f0', '/f1', '/d/f2', '/d/f3', '/f4'];

async function viewOf(fs: OverlayFileSystem): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const path of [...FILES, '/new0', '/new1', '/d/new2']) {
    const target = await fs.resolve(path);
    if ((await fs.stat(target))?.type === 'file') out[path] = dec((await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes);
  }
  return out;
}

/** A change of one path: new content, or its removal. */
const changeArb = fc.tuple(fc.constantFrom(...FILES, '/new0', '/new1', '/d/new2'), fc.option(fc.constantFrom('p\n', 'q\n', 'r\r\n'), { nil: undefined }));

async function apply(fs: OverlayFileSystem, changes: readonly (readonly [string, string | undefined])[]) {
  for (const [path, text] of changes) {
    const target = await fs.resolve(path);
    if (text !== undefined) await fs.writeBytes(target, enc(text));
    else if ((await fs.stat(target)) !== undefined) await fs.remove(target);
  }
}

describe('merge of forks (properties)', () => {
  it('merging a fork with no changes is the identity', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(changeArb, { maxLength: 5 }), async (parentChanges) => {
        const lower = createMemoryFs({ files: Object.fromEntries(FILES.map((p) => [p, `${p}\n`])) });
        const parent = await createOverlayFs({ lower });
        await apply(parent, [['/f0', 'before the fork\n']]);
        const fork = await parent.fork();
        await apply(parent, parentChanges);
        const before = await viewOf(parent);
        const checkpoints = parent.checkpoints().length;
        expect(await merge(parent, fork)).toEqual({ merged: [], conflicts: [], marked: [], applied: false });
        expect(await viewOf(parent)).toEqual(before);
        expect(parent.checkpoints().length).toBe(checkpoints);
      }),
      { numRuns: Math.ceil(RUNS / 4) },
    );
  });

  it('changes to different files merge cleanly and equal applying both', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(changeArb, { selector: ([p]) => p, maxLength: 8 }), fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), async (changes, toFork) => {
        const lower = createMemoryFs({ files: Object.fromEntries(FILES.map((p) => [p, `${p}\n`])) });
        const parent = await createOverlayFs({ lower });
        const fork = await parent.fork();
        const mine = changes.filter((_, i) => !toFork[i]);
        const theirs = changes.filter((_, i) => toFork[i]);
        await apply(parent, mine);
        await apply(fork, theirs);
        const expected = await createOverlayFs({ lower });
        await apply(expected, changes);
        const r = await merge(parent, fork);
        expect(r.conflicts).toEqual([]);
        expect(await viewOf(parent)).toEqual(await viewOf(expected));
      }),
      { numRuns: Math.ceil(RUNS / 4) },
    );
  });
});
