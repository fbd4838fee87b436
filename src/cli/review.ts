import type { OverlayChange, OverlayChangeKind, OverlayCommitProgress } from '../backends/overlay/index.js';
import { UsageError, type Parsed, EXIT_FAILURE, EXIT_OK, oneOf, optionalString } from './args.js';
import { commandLine, locationArgs } from './advice.js';
import { colorDiff, colorsFor, type ColorMode } from './color.js';
import type { Io } from './io.js';
import { checkpointArg, display, exclusive, hasState, locate, openExisting, sweepAfter, sweepIfDead, waiting } from './sandbox.js';
import { commitIgnored, commitJson, diffIgnored, ignoredJson, splitIgnored, statusIgnored } from './ignored.js';
import { ignoredGroups } from '../backends/overlay/index.js';
import { conflicted } from '../review/merge-markers.js';

const LETTER: Record<OverlayChangeKind, string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

/** One change as `--json` shows it, with root-relative paths. */
function changeJson(root: string, c: OverlayChange) {
  return {
    path: display(root, c.path),
    kind: c.kind,
    ...(c.from === undefined ? {} : { from: display(root, c.from) }),
    ...(c.type === undefined ? {} : { type: c.type }),
    ...(c.size === undefined ? {} : { size: c.size }),
    ...(c.linkText === undefined ? {} : { linkText: c.linkText }),
  };
}

export async function status(parsed: Parsed, io: Io): Promise<number> {
  const located = await locate('status', parsed, io);
  // Opening finishes a commit a killed process left (and removes its temp files) before any sweep.
  const overlay = await openExisting(located, io);
  const removedTempFiles = await sweepIfDead(located, io);
  const { listed: changes, groups } = splitIgnored(located.root, overlay ? await overlay.changes(located.paths, against(parsed)) : []);
  // Files a merge left with conflict markers (commit refuses them).
  const marked = new Set(overlay ? await conflicted(overlay, located.paths) : []);
  if (parsed.values.json === true) {
    const out = changes.map((c) => ({ ...changeJson(located.root, c), ...(marked.has(c.path) ? { conflicted: true } : {}) }));
    io.stdout.write(`${JSON.stringify({ changes: out, ignored: ignoredJson(groups), removedTempFiles }, null, 2)}\n`);
    return EXIT_OK;
  }
  if (changes.length === 0 && groups.length === 0) {
    io.stdout.write('No changes.\n');
    return EXIT_OK;
  }
  const c = colorsFor(io.stdout, 'auto', io.env);
  const paint = { added: c.green, modified: c.yellow, deleted: c.red, renamed: c.yellow } as const;
  for (const change of changes) {
    const from = change.from === undefined ? '' : `${display(located.root, change.from)} -> `;
    const dir = change.type === 'directory' ? '/' : '';
    // A link shows what it holds, as `ls -l` does.
    const text = change.linkText === undefined ? '' : ` -> ${change.linkText}`;
    const note = marked.has(change.path) ? ` ${c.red('(conflicted: holds merge markers)')}` : '';
    io.stdout.write(`${paint[change.kind](LETTER[change.kind])} ${from}${display(located.root, change.path)}${dir}${text}${note}\n`);
  }
  io.stdout.write(statusIgnored(groups));
  return EXIT_OK;
}

export async function diff(parsed: Parsed, io: Io): Promise<number> {
  const mode = oneOf<ColorMode>(optionalString(parsed, 'color'), ['auto', 'always', 'never'], 'color', 'diff') ?? 'auto';
  const located = await locate('diff', parsed, io);
  const overlay = await openExisting(located, io);
  const { listed: changes, groups } = splitIgnored(located.root, overlay ? await overlay.changes(located.paths, against(parsed)) : []);
  if (parsed.values.json === true) {
    const out: object[] = [];
    for (const c of changes) out.push({ ...changeJson(located.root, c), diff: await overlay!.diff([c.path], against(parsed)) });
    io.stdout.write(`${JSON.stringify([...out, ...ignoredJson(groups)], null, 2)}\n`);
    return EXIT_OK;
  }
  const text = overlay ? await overlay.diff(located.paths, against(parsed)) : '';
  io.stdout.write(diffIgnored(groups) + colorDiff(text, colorsFor(io.stdout, mode, io.env)));
  return EXIT_OK;
}

export async function commit(parsed: Parsed, io: Io): Promise<number> {
  if (parsed.values['against-parent'] === true) throw new UsageError('--against-parent goes with --hunk (a whole fork goes to its parent with "dsh-fs merge")', 'commit');
  const located = await locate('commit', parsed, io);
  const json = parsed.values.json === true;
  const includeIgnored = parsed.values['include-ignored'] === true;
  let leftOut: OverlayChange[] = [];
  const nothing = () =>
    io.stdout.write(
      json
        ? `${JSON.stringify({ committed: [], conflicts: [], failed: [], ignored: ignoredJson(ignoredGroups(located.root, leftOut)) }, null, 2)}\n`
        : `Nothing to commit.\n${commitIgnored(located.root, leftOut, [])}`,
    );
  if (!(await hasState(located))) {
    nothing();
    return EXIT_OK;
  }
  return exclusive(
    located,
    async ({ tookOverFrom }) => {
      // A commit killed mid-write left its temp files in the root: resuming sweeps them.
      const overlay = (await openExisting(located, io))!;
      if (tookOverFrom !== undefined) await sweepAfter(tookOverFrom, located, io);
      const todo = await overlay.changes(located.paths);
      leftOut = includeIgnored ? [] : todo.filter((c) => c.ignored !== undefined);
      if (todo.length === leftOut.length) {
        nothing();
        return EXIT_OK;
      }
      const kinds = new Map(todo.map((c) => [c.path, c] as const));
      const progress = progressLine(io, located.root);
      let result;
      try {
        result = await overlay.commit(located.paths, { onProgress: progress.update, force: parsed.values.force === true, includeIgnored });
      } finally {
        progress.done();
      }
      const status = result.conflicts.length + result.failed.length > 0 ? EXIT_FAILURE : EXIT_OK;
      if (json) {
        const entry = (path: string) => ({ path: display(located.root, path), kind: kinds.get(path)?.kind ?? 'modified' });
        io.stdout.write(`${JSON.stringify(commitJson(located.root, result, kinds, leftOut, entry), null, 2)}\n`);
        return status;
      }
      const c = colorsFor(io.stdout, 'auto', io.env);
      const line = (change: OverlayChange | undefined, path: string) =>
        `  ${change ? LETTER[change.kind] : '?'} ${display(located.root, path)}\n`;
      if (result.committed.length > 0) {
        const n = result.committed.length;
        io.stdout.write(`${c.green(`Committed ${n} change${n === 1 ? '' : 's'}`)} to ${located.label}:\n`);
        const overwritten = new Set(result.overwritten);
        for (const path of result.committed) {
          if (kinds.get(path)?.ignored !== undefined) continue;
          const note = overwritten.has(path) ? `      ${c.yellow('forced')}: replaced a change made in ${located.label} since the sandbox first saw it\n` : '';
          io.stdout.write(line(kinds.get(path), path) + note);
        }
      }
      const committedIgnored = result.committed.flatMap((path) => (kinds.get(path)?.ignored === undefined ? [] : [kinds.get(path)!]));
      io.stdout.write(commitIgnored(located.root, leftOut, committedIgnored));
      if (result.conflicts.length > 0) {
        const n = result.conflicts.length;
        io.stdout.write(
          `${c.red(`${n} conflict${n === 1 ? '' : 's'}`)}: changed in ${located.label} since the sandbox first saw ${n === 1 ? 'it' : 'them'}; ` +
            'left untouched there and kept in the sandbox:\n',
        );
        for (const p of result.conflicts) io.stdout.write(`${line(kinds.get(p.path), p.path)}      ${p.message}\n`);
        const where = locationArgs(parsed, located);
        const paths = result.conflicts.map((p) => p.path);
        io.stdout.write(
          `Review ${n === 1 ? 'it' : 'them'} with:\n  ${commandLine('diff', where, [], paths)}\n` +
            `then keep the sandbox's version with:\n  ${commandLine('commit', where, ['--force'], paths)}\n` +
            `or the directory's with:\n  ${commandLine('discard', where, [], paths)}\n`,
        );
      }
      if (result.failed.length > 0) {
        const n = result.failed.length;
        io.stdout.write(`${c.red(`${n} failed`)} (kept in the sandbox):\n`);
        for (const p of result.failed) io.stdout.write(`${line(kinds.get(p.path), p.path)}      ${p.code}: ${p.message}\n`);
      }
      return status;
    },
    { onWait: (pid) => waiting(io, pid) },
  );
}

export async function discard(parsed: Parsed, io: Io): Promise<number> {
  const located = await locate('discard', parsed, io);
  const json = parsed.values.json === true;
  const report = (changes: readonly OverlayChange[]) =>
    io.stdout.write(
      json
        ? `${JSON.stringify({ discarded: changes.map((c) => ({ path: display(located.root, c.path), kind: c.kind })) }, null, 2)}\n`
        : changes.length === 0
          ? 'Nothing to discard.\n'
          : `Discarded ${changes.length} change${changes.length === 1 ? '' : 's'}.\n`,
    );
  if (!(await hasState(located))) {
    report([]);
    return EXIT_OK;
  }
  return exclusive(
    located,
    async () => {
      const overlay = (await openExisting(located, io))!;
      const todo = await overlay.changes(located.paths);
      await overlay.discard(located.paths);
      report(todo);
      return EXIT_OK;
    },
    { onWait: (pid) => waiting(io, pid) },
  );
}

function against(parsed: Parsed) {
  const [from, to] = [optionalString(parsed, 'from'), optionalString(parsed, 'to')];
  if (from === undefined && to === undefined) return { against: parsed.values['against-parent'] === true ? ('parent' as const) : ('lower' as const) };
  if (from === undefined) throw new UsageError('--to needs --from', 'diff');
  if (parsed.values['against-parent'] === true) throw new UsageError('give either --against-parent or --from', 'diff');
  return { from: checkpointArg(from, 'from', 'diff'), ...(to === undefined ? {} : { to: checkpointArg(to, 'to', 'diff') }) };
}

/** On a terminal one line that updates in place; otherwise one line per file. Always on stderr. */
function progressLine(io: Io, root: string) {
  const tty = io.stderr.isTTY === true;
  let shown = false;
  return {
    update(p: OverlayCommitProgress) {
      const text = `[${p.index}/${p.total}] ${p.outcome} ${display(root, p.path)}`;
      if (tty) {
        io.stderr.write(`\r\x1b[2K${text}`);
        shown = true;
      } else {
        io.stderr.write(`${text}\n`);
      }
    },
    done() {
      if (shown) io.stderr.write('\r\x1b[2K');
    },
  };
}
