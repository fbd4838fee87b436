import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { openReview } from '../../src/review/index.js';
import type { FsJournalBegin, FsProvider } from '../../src/seam/index.js';

/**
 * Accepting hunks writes the folder as a commit does: journaled first (J1), so a process killed
 * part-way is rolled back on the next open, and the sandbox lets go of nothing before that.
 */

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('accepting hunks on a local folder', () => {
  it('records the files it publishes in the folder\'s journal before writing, and leaves no journal behind', async () => {
    dir = realpathSync(await mkdtemp(join(tmpdir(), 'dsh-accept-journal-')));
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    await writeFile(join(dir, 'a.txt'), `${lines.join('\n')}\n`);
    const lower = createLocalFs({ root: dir });
    const begun: FsJournalBegin[] = [];
    const journal = (lower as unknown as { provider: FsProvider }).provider.journal!;
    const begin = journal.begin.bind(journal);
    journal.begin = (record) => {
      begun.push(record);
      return begin(record);
    };
    const sandbox = await createOverlayFs({ lower });
    const edited = [...lines];
    edited[1] = 'line two';
    edited[27] = 'line twenty-eight';
    await sandbox.writeText(await sandbox.resolve(join(dir, 'a.txt')), `${edited.join('\n')}\n`);
    const review = openReview(sandbox);
    const [file] = await review.files();
    expect(file!.hunks).toHaveLength(2);
    const result = await review.accept([file!.hunks[0]!.id]);
    expect(result.accepted).toEqual([file!.hunks[0]!.id]);
    expect(begun.map((r) => [r.kind, [...r.keys]])).toEqual([['rebase', [join(dir, 'a.txt')]]]);
    expect((await readFile(join(dir, 'a.txt'), 'utf8')).split('\n')[1]).toBe('line two');
    expect((await readFile(join(dir, 'a.txt'), 'utf8')).split('\n')[27]).toBe('line 28');
    expect((await readdir(dir)).filter((name) => name.includes('dsh'))).toEqual([]);
  });
});
