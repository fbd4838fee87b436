import { ignoredGroups, type OverlayChange, type OverlayCommitResult, type OverlayIgnoredGroup } from '../backends/overlay/index.js';

/*
 * Ignored outputs and git's own files in status, diff and commit: one counted line per top
 * directory, never file by file. In JSON each is `{ "path": "node_modules/", "ignored":
 * "gitignore" | "git", "count": 412 }`, the same shape in every command (docs/cli.md).
 */

export interface IgnoredJson {
  readonly path: string;
  readonly ignored: OverlayIgnoredGroup['reason'];
  readonly count: number;
}

/** The changes listed one by one, and the ignored ones as counted groups. */
export function splitIgnored(root: string, changes: readonly OverlayChange[]): { listed: OverlayChange[]; groups: OverlayIgnoredGroup[] } {
  return { listed: changes.filter((c) => c.ignored === undefined), groups: ignoredGroups(root, changes) };
}

export function ignoredJson(groups: readonly OverlayIgnoredGroup[]): IgnoredJson[] {
  return groups.map((g) => ({ path: g.path, ignored: g.reason, count: g.count }));
}

/** `node_modules/ (412 files, ignored)`, `.git/ (8 files, git's own)`. */
export function ignoredLine(g: OverlayIgnoredGroup): string {
  const what = `${g.count} ${g.count === 1 ? 'file' : 'files'}`;
  return `${g.path} (${what}, ${g.reason === 'git' ? "git's own" : 'ignored'})`;
}

/** status: the counted lines after the listed changes, with how to commit them. */
export function statusIgnored(groups: readonly OverlayIgnoredGroup[]): string {
  if (groups.length === 0) return '';
  return `${groups.map((g) => `! ${ignoredLine(g)}\n`).join('')}Ignored outputs and git's files are counted, not listed; "dsh-fs commit --include-ignored" commits them.\n`;
}

/** diff: a preamble (before the first `diff --git`, so patch tools pass over it) naming what is not shown. */
export function diffIgnored(groups: readonly OverlayIgnoredGroup[]): string {
  if (groups.length === 0) return '';
  return `${groups.map((g) => `# not shown: ${ignoredLine(g)}\n`).join('')}`;
}

/** commit --json: committed, conflicts and failed by path, ignored changes counted (committed, and left out under `ignored`). */
export function commitJson(
  root: string,
  result: OverlayCommitResult,
  kinds: ReadonlyMap<string, OverlayChange>,
  leftOut: readonly OverlayChange[],
  entry: (path: string) => { path: string; kind: string },
) {
  const overwritten = new Set(result.overwritten);
  const listed = result.committed.filter((path) => kinds.get(path)?.ignored === undefined);
  const counted = ignoredGroups(root, result.committed.flatMap((path) => (kinds.get(path)?.ignored === undefined ? [] : [kinds.get(path)!])));
  return {
    committed: [...listed.map((path) => ({ ...entry(path), ...(overwritten.has(path) ? { forced: true } : {}) })), ...ignoredJson(counted)],
    conflicts: result.conflicts.map((p) => ({ ...entry(p.path), code: p.code, message: p.message })),
    failed: result.failed.map((p) => ({ ...entry(p.path), code: p.code, message: p.message })),
    ignored: ignoredJson(ignoredGroups(root, leftOut)),
  };
}

/** commit: what was left out (without --include-ignored), or what of it was committed, counted. */
export function commitIgnored(root: string, leftOut: readonly OverlayChange[], committedIgnored: readonly OverlayChange[]): string {
  let out = '';
  const committed = ignoredGroups(root, committedIgnored);
  for (const g of committed) out += `  + ${ignoredLine(g)}\n`;
  const left = ignoredGroups(root, leftOut);
  if (left.length > 0) {
    out += 'Left out (commit them with --include-ignored):\n';
    for (const g of left) out += `  ${ignoredLine(g)}\n`;
  }
  return out;
}
