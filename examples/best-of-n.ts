// Best of N, merged: fork a sandbox three times, let three scripted agents change their forks (two
// compatible attempts, one that collides with the first), merge the compatible two into the
// sandbox, report the third one's conflict, and print the result's diff.
import { createMemoryFs } from 'dsh-fs/memory';
import { createOverlayFs, type OverlayFileSystem } from 'dsh-fs/overlay';
import { merge } from 'dsh-fs/review';

const SOURCE = ['export function sum(a, b) {', '  return a - b;', '}', '', 'export function mean(xs) {', '  return sum(...xs) / xs.length;', '}', ''].join('\n');

/** A scripted agent: one literal edit (or a new file) in its own fork. */
type Agent = (fs: OverlayFileSystem) => Promise<void>;

const agents: Record<string, Agent> = {
  'fix-sum': async (fs) => void (await fs.editText(await fs.resolve('/src/math.js'), { oldString: 'a - b', newString: 'a + b' })),
  'fix-mean': async (fs) => {
    await fs.editText(await fs.resolve('/src/math.js'), { oldString: 'sum(...xs) / xs.length', newString: 'xs.reduce(sum, 0) / xs.length' });
    await fs.writeText(await fs.resolve('/src/math.test.js'), 'expect(mean([1, 2, 3])).toBe(2);\n');
  },
  'rewrite-sum': async (fs) => void (await fs.editText(await fs.resolve('/src/math.js'), { oldString: 'return a - b;', newString: 'return [a, b].reduce((x, y) => x + y);' })),
};

export async function bestOfN(log: (line: string) => void = console.log): Promise<{ merged: string[]; conflicts: number; diff: string }> {
  const lower = createMemoryFs({ files: { '/src/math.js': SOURCE } });
  const sandbox = await createOverlayFs({ lower });
  // One fork per agent, each from the same starting point (constant time each).
  const forks = new Map<string, OverlayFileSystem>();
  for (const [name, agent] of Object.entries(agents)) {
    const fork = await sandbox.fork();
    await agent(fork);
    forks.set(name, fork);
  }
  const merged: string[] = [];
  let conflicts = 0;
  for (const [name, fork] of forks) {
    const result = await merge(sandbox, fork);
    if (result.applied) {
      merged.push(name);
      log(`merged ${name}: ${result.merged.join(', ')}`);
      continue;
    }
    conflicts += result.conflicts.length;
    for (const c of result.conflicts) {
      log(`${name} conflicts on ${c.path} (${c.kind}): ${c.message}`);
      for (const r of c.regions) log(`  base (line ${r.baseStart}): ${r.base.trim()}\n  ours (line ${r.oursStart}): ${r.ours.trim()}\n  theirs (line ${r.theirsStart}): ${r.theirs.trim()}`);
    }
  }
  const diff = await sandbox.diff();
  log(diff);
  return { merged, conflicts, diff };
}

if (import.meta.url === `file://${process.argv[1]}`) await bestOfN();
