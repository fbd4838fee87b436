/**
 * `dsh-fs sync`: three-way merges what changed in the directory (or the database's workspace)
 * since the sandbox first read each path it changed, so a later commit conflicts only where the
 * edits overlap. Exit 0 when synced, 1 with conflicts.
 */
import { sync } from '../review/index.js';
import { UsageError, EXIT_FAILURE, EXIT_OK, type Parsed } from './args.js';
import type { Io } from './io.js';
import { printResult } from './merge.js';
import { exclusive, hasState, locate, openExisting, waiting } from './sandbox.js';

export async function syncCommand(parsed: Parsed, io: Io): Promise<number> {
  const located = await locate('sync', parsed, io);
  if (!(await hasState(located))) throw new UsageError(`there is no sandbox in ${located.stateDir}`, 'sync');
  const options = { markers: parsed.values.markers === true, dryRun: parsed.values['dry-run'] === true };
  const result = await exclusive(located, async () => sync((await openExisting(located, io))!, options), { onWait: (pid) => waiting(io, pid) });
  printResult(result, located.root, parsed.values.json === true, options.dryRun, io, 'sandbox', 'folder');
  return result.conflicts.length > 0 ? EXIT_FAILURE : EXIT_OK;
}
