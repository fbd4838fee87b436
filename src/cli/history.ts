import { FsError } from '../seam/index.js';
import { EXIT_OK, requireString, type Parsed } from './args.js';
import type { Io } from './io.js';
import { checkpointArg, display, exclusive, hasState, locate, openExisting, waiting } from './sandbox.js';

/** checkpoints: the sandbox's checkpoints, oldest first (one line each, or --json). */
export async function checkpoints(parsed: Parsed, io: Io): Promise<number> {
  const located = await locate('checkpoints', parsed, io);
  const overlay = await openExisting(located, io);
  const list = (overlay?.checkpoints() ?? []).map((c) => ({ ...c, paths: c.paths.map((p) => display(located.root, p)) }));
  if (parsed.values.json === true) {
    io.stdout.write(`${JSON.stringify({ checkpoints: list }, null, 2)}\n`);
    return EXIT_OK;
  }
  if (list.length === 0) {
    io.stdout.write('No checkpoints.\n');
    return EXIT_OK;
  }
  const width = String(list.at(-1)!.id).length;
  for (const c of list) {
    const label = [c.owner === undefined ? '' : `owner: ${c.owner}`, c.source === undefined ? '' : `source: ${c.source}`].filter(Boolean).join(', ');
    const shown = c.paths.length > 4 ? `${c.paths.slice(0, 4).join(' ')} (+${c.paths.length - 4} more)` : c.paths.join(' ');
    io.stdout.write(`${String(c.id).padStart(width)}  ${new Date(c.time).toISOString()}  ${shown}${label ? `  [${label}]` : ''}\n`);
  }
  return EXIT_OK;
}

/** rewind --to ID [PATH...]: the sandbox (or those paths) as it was at checkpoint ID, as a new checkpoint. */
export async function rewind(parsed: Parsed, io: Io): Promise<number> {
  const id = checkpointArg(requireString(parsed, 'to', 'rewind'), 'to', 'rewind');
  const located = await locate('rewind', parsed, io);
  if (!(await hasState(located))) throw new FsError('FS_NOT_FOUND', `cannot rewind to checkpoint ${id}: the sandbox in ${located.stateDir} has no changes`);
  return exclusive(
    located,
    async () => {
      const overlay = (await openExisting(located, io))!;
      const before = overlay.checkpoints().at(-1)?.id;
      await overlay.rewind(id, { paths: located.paths });
      const made = overlay.checkpoints().at(-1);
      const recorded = made !== undefined && made.id !== before ? made : undefined;
      if (parsed.values.json === true) {
        const paths = recorded?.paths.map((p) => display(located.root, p)) ?? [];
        io.stdout.write(`${JSON.stringify({ rewoundTo: id, checkpoint: recorded?.id ?? null, paths }, null, 2)}\n`);
      } else if (recorded === undefined) {
        io.stdout.write(`Nothing to rewind: the sandbox already is as it was at checkpoint ${id}.\n`);
      } else {
        const n = recorded.paths.length;
        const what = located.paths === undefined ? 'the sandbox' : located.paths.join(', ');
        io.stdout.write(`Rewound ${what} to checkpoint ${id}: ${n} path${n === 1 ? '' : 's'} changed (recorded as checkpoint ${recorded.id}).\n`);
      }
      return EXIT_OK;
    },
    { onWait: (pid) => waiting(io, pid) },
  );
}
