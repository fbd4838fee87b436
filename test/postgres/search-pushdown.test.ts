import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { FileSystem, FsSearchQuery } from '../../src/index.js';
import { createPostgresFs, type PgQueryable } from '../../src/backends/postgres/index.js';
import { CHUNK_BYTES } from '../../src/backends/postgres/schema.js';
import { grep, type GrepResult } from '../../src/search/index.js';
import { SERVER, closeShared, newWorkspace, sharedPglite, sharedPool } from './helpers.js';

/** The same filesystem without the hook: the generic search, reading every file. */
function generic(fs: FileSystem): FileSystem {
  const { searchCandidates: _hook, ...rest } = fs;
  return rest as FileSystem;
}

/** The same filesystem whose store is asked for contents within other bounds (none: `undefined`). */
function withContents(fs: FileSystem, contents: FsSearchQuery['contents']): FileSystem {
  return {
    ...fs,
    searchCandidates: (root, { contents: _asked, ...query }, opts) => fs.searchCandidates!(root, contents === undefined ? query : { ...query, contents }, opts),
  };
}

const outcome = (r: GrepResult) => ({
  matches: r.matches.map((m) => `${m.path}:${m.line}:${m.text}`),
  truncated: r.truncated,
  filesSearched: r.filesSearched,
  skippedCounts: r.skippedCounts,
  skipped: r.skipped.map((k) => `${k.path}:${k.reason}`),
});

const SUBJECTS: [string, () => Promise<PgQueryable> | PgQueryable][] = [
  ['PGlite', sharedPglite],
  ...(SERVER === undefined ? [] : ([['server', sharedPool]] as [string, () => PgQueryable][])),
];

afterAll(closeShared);

const word = fc.stringMatching(/^[abcé.\-]{1,4}$/);
const line = fc.array(fc.constantFrom('a', 'b', 'c', 'ab', 'abc', 'é', '.', '-', ' ', 'ba'), { maxLength: 6 }).map((parts) => parts.join(''));
const tree = fc.array(
  fc.record({
    path: fc.array(fc.constantFrom('d', 'e', '.h', 'f'), { minLength: 0, maxLength: 2 }).chain((dirs) => word.map((name) => [...dirs, `${name}.txt`].join('/'))),
    lines: fc.array(line, { maxLength: 4 }),
    crlf: fc.boolean(),
    tail: fc.constantFrom('', '', '', '\0', '\xff', 'abc'.repeat(12)),
  }),
  { maxLength: 10 },
);
const pattern = fc.oneof(
  word,
  word.map((w) => w.replace(/[.\-]/g, (c) => `\\${c}`)),
  fc.constantFrom('ab+c', 'a.c', 'b?c', '(ab|c)', '^ab', 'c$', 'a[bc]', 'é', '(?i)AB', 'a\\x62', 'ab*', 'a\\.b', 'x'),
);

describe.each(SUBJECTS)('grep narrowed by PostgreSQL over %s', (_label, getClient) => {
  it('gives the same matches, order, caps, skips and file counts as the generic search, with and without the contents of candidates (property)', async () => {
    const client = await getClient();
    const bounds = fc.option(fc.record({ maxFileBytes: fc.integer({ min: 0, max: 40 }), maxTotalBytes: fc.integer({ min: 0, max: 80 }) }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(tree, pattern, fc.integer({ min: 1, max: 6 }), fc.boolean(), bounds, fc.constantFrom(undefined, 12, 25), async (files, pat, maxMatches, hidden, asked, maxTextBytes) => {
        // A text limit under maxFileBytes: files between the two are streamed, never taken from the answer.
        const fs = createPostgresFs({ client, workspace: newWorkspace('pushdown'), ...(maxTextBytes === undefined ? {} : { maxTextBytes }) });
        const enc = new TextEncoder();
        for (const f of files) {
          const text = f.lines.join(f.crlf ? '\r\n' : '\n');
          // A NUL byte, a byte that is no UTF-8, or a file over maxFileBytes: skipped, and counted alike.
          const body = f.tail === '\xff' ? Buffer.concat([Buffer.from(text), Buffer.from([0xff])]) : Buffer.from(text + f.tail);
          const t = await fs.resolve(`/w/${f.path}`).catch(() => undefined);
          if (t !== undefined) await fs.writeBytes(t, body).catch(() => undefined);
        }
        await fs.writeBytes(await fs.resolve('/w/.gitignore'), enc.encode('e/\n'));
        const options = { cwd: '/w', maxMatches, hidden, maxFileBytes: 30 };
        const plain = outcome(await grep(generic(fs), pat, options));
        expect(outcome(await grep(fs, pat, options))).toEqual(plain);
        expect(outcome(await grep(withContents(fs, asked), pat, options))).toEqual(plain);
      }),
      { numRuns: 25 },
    );
  });

  it('asks once, reads only the candidates not returned with the answer, and finds a literal that spans two chunks', async () => {
    const client = await getClient();
    const fs = createPostgresFs({ client, workspace: newWorkspace('pushdown-chunks') });
    const filler = (n: number) => 'x'.repeat(n);
    // NEEDLE across the first chunk's end; another file with only its halves, apart.
    await fs.writeBytes(await fs.resolve('/s/across.txt'), Buffer.from(`${filler(CHUNK_BYTES - 3)}NEEDLE\nend\n`));
    await fs.writeBytes(await fs.resolve('/s/apart.txt'), Buffer.from(`${filler(CHUNK_BYTES - 3)}NEE\nDLE\n`));
    for (let i = 0; i < 20; i++) await fs.writeBytes(await fs.resolve(`/s/many/${i}.txt`), Buffer.from(i === 7 ? 'a NEEDLE here\n' : 'nothing\n'));
    let asked = 0;
    let read = 0;
    const spied: FileSystem = {
      ...fs,
      searchCandidates: (root, query, opts) => {
        asked++;
        return fs.searchCandidates!(root, query, opts);
      },
      streamText: (t, opts) => {
        read++;
        return fs.streamText(t, opts);
      },
    };
    const r = await grep(spied, 'NEEDLE', { cwd: '/s' });
    expect(r.matches.map((m) => `${m.path}:${m.line}`)).toEqual(['/s/across.txt:1', '/s/many/7.txt:1']);
    expect(r.filesSearched).toBe(22);
    expect(asked).toBe(1);
    // The small candidate came with the answer; the one over 64 KiB is read.
    expect(read).toBe(1);
    expect(outcome(r)).toEqual(outcome(await grep(generic(fs), 'NEEDLE', { cwd: '/s' })));
    read = 0;
    expect(outcome(await grep(withContents(spied, undefined), 'NEEDLE', { cwd: '/s' }))).toEqual(outcome(r));
    expect(read).toBe(2);
  });
});
