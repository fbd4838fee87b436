import { promises as fsp } from 'node:fs';
import { join, posix } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { glob, grep, type FileSystem } from '../../src/index.js';
import { makeArea, type Area } from './helpers.js';

// Listing, glob and grep must never fail on a tree holding dangling, looping or outside links:
// such a link is listed as `other` and never followed.

const DIRS = ['d', 'd/e', 'out', 'x/y'];
const FILES = ['f.txt', 'd/g.txt', 'd/e/h.txt', 'x/y/i.txt'];
const LINK_PLACES = ['build', 'd/l1', 'd/e/l2', 'x/l3', 'x/y/l4', 'l5'];

/** Link texts: missing targets (also below missing directories), loops, and ways out of the root. */
const linkTarget = fc.constantFrom(
  'out/build',
  'missing/deep/er',
  'missing',
  'd/e/nothing/x',
  '../nope',
  '../../..',
  '../outside',
  '../outside/missing/x',
  '/',
  '/nonexistent/dir/x',
  'l5',
  'build',
  'd/l1',
  '.',
  '..',
  'f.txt/x',
  'd',
  'f.txt',
);

const treeArb = fc.record({
  dirs: fc.subarray(DIRS),
  files: fc.subarray(FILES),
  links: fc.uniqueArray(fc.tuple(fc.constantFrom(...LINK_PLACES), linkTarget), { selector: ([p]) => p, minLength: 1, maxLength: 6 }),
});

type Tree = typeof treeArb extends fc.Arbitrary<infer T> ? T : never;

/** The link text as written inside `place`'s directory, so that relative targets mean the same from anywhere. */
function linkText(place: string, target: string, outside: string): string {
  if (target.startsWith('/')) return target;
  if (target === '../outside' || target.startsWith('../outside/')) return posix.join(outside, target.slice('../outside'.length));
  const depth = place.split('/').length - 1;
  return depth === 0 ? target : `${'../'.repeat(depth)}${target}`;
}

async function exercise(fs: FileSystem, base: string): Promise<void> {
  // Every directory once, by target key (a link to an ancestor would otherwise recurse forever).
  const seen = new Set<string>();
  const queue = [base];
  while (queue.length > 0) {
    const target = await fs.resolve(queue.pop()!);
    if (seen.has(target.targetKey)) continue;
    seen.add(target.targetKey);
    for (const e of await fs.listDir(target)) if (e.type === 'directory') queue.push(e.target.targetKey);
  }
  await glob(fs, '**/*', { cwd: base });
  await glob(fs, '**', { cwd: base, onlyFiles: false });
  await grep(fs, 'x', { path: base, hidden: true, gitignore: false });
}

describe('links that dangle, loop or lead outside', () => {
  let area: Area;
  beforeEach(async () => {
    area = await makeArea('links');
  });
  afterEach(async () => {
    await area.cleanup();
  });

  test('a dangling link to a missing directory is listed as other (local)', async () => {
    await fsp.symlink('out/build', join(area.root, 'build'));
    await fsp.writeFile(join(area.root, 'a.txt'), 'x\n');
    const fs = createLocalFs({ root: area.root });
    const entries = await fs.listDir(await fs.resolve('.'));
    expect(entries.map((e) => [e.name, e.type])).toEqual([
      ['a.txt', 'file'],
      ['build', 'other'],
    ]);
    expect((await glob(fs, '**/*', { cwd: area.root })).matches.map((m) => m.path)).toEqual([join(area.root, 'a.txt')]);
    expect((await grep(fs, 'x', { path: area.root })).matches.map((m) => m.line)).toEqual([1]);
  });

  test('local: listing, glob and grep never fail', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(treeArb, async (tree: Tree) => {
        const root = join(area.area, `r${run++}`);
        await fsp.mkdir(root);
        for (const d of tree.dirs) await fsp.mkdir(join(root, d), { recursive: true });
        for (const f of tree.files) {
          await fsp.mkdir(join(root, posix.dirname(f)), { recursive: true });
          await fsp.writeFile(join(root, f), 'x\n');
        }
        for (const [place, target] of tree.links) {
          await fsp.mkdir(join(root, posix.dirname(place)), { recursive: true });
          await fsp.symlink(linkText(place, target, area.outside), join(root, place));
        }
        await exercise(createLocalFs({ root }), root);
        await fsp.rm(root, { recursive: true, force: true });
      }),
      { numRuns: 60 },
    );
  });

  test('memory: listing, glob and grep never fail', async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, async (tree: Tree) => {
        const files: Record<string, string | null | { symlink: string }> = { '/w': null, '/outside': null };
        for (const d of tree.dirs) files[`/w/${d}`] = null;
        for (const f of tree.files) files[`/w/${f}`] = 'x\n';
        for (const [place, target] of tree.links) files[`/w/${place}`] = { symlink: linkText(place, target, '/outside') };
        const fs = createMemoryFs({ files, cwd: '/w' });
        await exercise(fs, '/w');
      }),
      { numRuns: 100 },
    );
  });
});
