/**
 * `dsh-fs merge`: three-way merge of a fork (a state directory, or a sandbox of the same SQLite
 * file) into the sandbox it was forked from. Exit 0 when merged, 1 with conflicts.
 */
import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { merge } from '../review/index.js';
import type { MergeResult } from '../review/merge.js';
import { UsageError, EXIT_FAILURE, EXIT_OK, requireString, type Parsed } from './args.js';
import type { Io } from './io.js';
import { withStateLock } from '../sandbox/lock.js';
import { display, exclusive, hasState, locate, waiting } from './sandbox.js';
import { sqliteSandbox, sqliteTarget } from './sqlite.js';
import { hasSandboxState, openLower, openSandbox, resolveStateDir } from './workspace.js';

export async function mergeCommand(parsed: Parsed, io: Io): Promise<number> {
  if (parsed.values.postgres !== undefined) throw new UsageError('a sandbox in PostgreSQL has no forks to merge', 'merge');
  const from = requireString(parsed, 'from', 'merge');
  const located = await locate('merge', parsed, io);
  if (!(await hasState(located))) throw new UsageError(`there is no sandbox in ${located.stateDir}`, 'merge');
  const options = { markers: parsed.values.markers === true, dryRun: parsed.values['dry-run'] === true };
  const onWait = (pid: number | undefined) => waiting(io, pid);
  const target = sqliteTarget(parsed, 'merge');
  let result: MergeResult;
  if (target !== undefined) {
    if (from === target.sandbox) throw new UsageError('--from must name another sandbox (the fork), not the one merged into', 'merge');
    const fork = sqliteSandbox({ ...target, sandbox: from });
    if (!(await fork.exists())) throw new UsageError(`there is no sandbox "${from}" in ${target.file}`, 'merge');
    result = await exclusive(located, async () => fork.exclusive(async () => merge((await located.pg!.open()) as OverlayFileSystem, await fork.open(), options), { onWait }), { onWait });
  } else {
    const forkDir = await resolveStateDir(located.root, from, io.env);
    if (forkDir === located.stateDir) throw new UsageError('--from must be the fork\'s state directory, not the sandbox\'s own', 'merge');
    if (!(await hasSandboxState(forkDir))) throw new UsageError(`--from "${forkDir}" holds no sandbox`, 'merge');
    result = await exclusive(
      located,
      () =>
        withStateLock(
          forkDir,
          async () => merge(await openSandbox(openLower(located.root), located.stateDir), await openSandbox(openLower(located.root), forkDir), options),
          { onWait },
        ),
      { onWait },
    );
  }
  printResult(result, located.root, parsed.values.json === true, options.dryRun, io);
  return result.conflicts.length > 0 ? EXIT_FAILURE : EXIT_OK;
}

/** The report of a merge or a sync: `--json` as documented, else one line per path and the conflicting regions. */
export function printResult(result: MergeResult, root: string, json: boolean, dryRun: boolean, io: Io, ours = 'ours', theirs = 'theirs'): void {
  const rel = (p: string) => display(root, p);
  if (json) {
    const conflicts = result.conflicts.map((c) => ({ path: rel(c.path), kind: c.kind, regions: c.regions }));
    io.stdout.write(`${JSON.stringify({ merged: result.merged.map(rel), conflicts }, null, 2)}\n`);
    return;
  }
  const n = result.merged.length;
  const verb = dryRun || !result.applied ? 'Would merge' : 'Merged';
  if (n > 0) io.stdout.write(`${verb} ${n} path${n === 1 ? '' : 's'}:\n${result.merged.map((p) => `  ${rel(p)}\n`).join('')}`);
  else if (result.conflicts.length === 0) io.stdout.write('Nothing to merge.\n');
  if (result.conflicts.length === 0) return;
  const marked = new Set(result.marked);
  const k = result.conflicts.length;
  const outcome = marked.size > 0 ? 'the text conflicts were written with markers' : 'nothing was changed';
  io.stdout.write(`${k} conflict${k === 1 ? '' : 's'} (${outcome}):\n`);
  for (const c of result.conflicts) {
    io.stdout.write(`  ${c.kind} ${rel(c.path)}: ${c.message}${marked.has(c.path) ? ' (markers written)' : ''}\n`);
    for (const r of c.regions) {
      io.stdout.write(`    base at line ${r.baseStart}:\n${indent(r.base)}    ${ours} at line ${r.oursStart}:\n${indent(r.ours)}    ${theirs} at line ${r.theirsStart}:\n${indent(r.theirs)}`);
    }
  }
}

function indent(text: string): string {
  if (text === '') return '      (nothing)\n';
  return text.replace(/\r?\n$/, '').split('\n').map((l) => `      ${l}\n`).join('');
}
