import type { FileSystem, FsTarget, FsWalkEntry } from '../../seam/index.js';
import { deepEqual, fail, ok } from '../harness.js';

/**
 * D4's check of the `narrow` hint: a walk given it hands over the full walk (`expected`) with
 * at most some files left out, each a file whose name ends with none of `endings`, in the same
 * order; `leftOut` adds up to how many, each left-out file reported no later than the first
 * entry that follows it. A provider that ignores the hint passes (it leaves nothing out).
 */
export async function checkNarrowedWalk(fs: FileSystem, top: FsTarget, expected: readonly FsWalkEntry[], endings: readonly string[]): Promise<void> {
  const label = `walk of ${top.displayPath} narrowed to names ending ${JSON.stringify(endings)}`;
  let reported = 0;
  const given: { entry: FsWalkEntry; reportedBefore: number }[] = [];
  for await (const entry of fs.walk(top, { narrow: { fileNameEndsWith: endings, leftOut: (n) => void (reported += n) } })) {
    given.push({ entry, reportedBefore: reported });
    if (given.length > expected.length) fail(`${label} gave more entries than the walk without it`);
  }
  let j = 0;
  let missing = 0;
  for (const { entry, reportedBefore } of given) {
    // Skip what the provider left out before this entry.
    while (j < expected.length && expected[j]!.path !== entry.path) {
      const gone = expected[j]!;
      ok(gone.type === 'file' && !endings.some((e) => gone.name.endsWith(e)), `${label} left out "${gone.path}" (${gone.type}), which it may not`);
      missing++;
      j++;
    }
    ok(j < expected.length, `${label} gave "${entry.path}" out of order or not at all in the walk without it`);
    deepEqual(bare(entry), bare(expected[j]!), `${label}: the entry "${entry.path}"`);
    ok(reportedBefore >= missing, `${label} handed over "${entry.path}" before reporting the ${missing} entries left out before it (reported ${reportedBefore})`);
    j++;
  }
  for (; j < expected.length; j++) {
    const gone = expected[j]!;
    ok(gone.type === 'file' && !endings.some((e) => gone.name.endsWith(e)), `${label} left out "${gone.path}" (${gone.type}), which it may not`);
    missing++;
  }
  ok(reported === missing, `${label} reported ${reported} entries left out, but left out ${missing}`);
}

const bare = (e: FsWalkEntry) => ({ path: e.path, name: e.name, type: e.type, targetKey: e.target.targetKey });
