import { FsError } from '../seam/index.js';
import { VCS_DIRECTORIES, relativeTo, type SkipCounts } from '../search/index.js';

/** `path` relative to `cwd` when inside it, else absolute. */
export function displayPath(path: string, cwd: string): string {
  const rel = relativeTo(cwd, path);
  return rel === undefined ? path : rel;
}

/** The walks skip version-control directories they meet; one named as the start is refused the same way. */
export function refuseVcsStart(tool: string, given: string | null | undefined, path: string, root: string | undefined): void {
  const below = relativeTo(root ?? '/', path) ?? path;
  const vcs = below.split('/').find((segment) => VCS_DIRECTORIES.includes(segment));
  if (vcs !== undefined) {
    throw new FsError('FS_INVALID_ARGUMENT', `path "${given}" is inside a version-control directory (${vcs}), which ${tool} skips; search a directory outside it`);
  }
}

export function skipNotes(counts: SkipCounts, grep: boolean, maxFileBytes?: number): string[] {
  const parts: string[] = [];
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  if (grep && counts.binary > 0) parts.push(`${plural(counts.binary, 'binary file', 'binary files')} skipped`);
  if (grep && counts.tooLarge > 0) {
    const limit = maxFileBytes === undefined ? '' : ` over ${formatSize(maxFileBytes)}`;
    parts.push(`${plural(counts.tooLarge, 'file', 'files')}${limit} skipped`);
  }
  if (counts.unreadable > 0) parts.push(`${plural(counts.unreadable, 'entry', 'entries')} could not be read`);
  if (counts.loops > 0) parts.push(`${plural(counts.loops, 'symlinked directory', 'symlinked directories')} skipped as a loop`);
  return parts.length === 0 ? [] : [`${capitalise(parts.join('; '))}.`];
}

function formatSize(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function appendNotes(text: string, notes: readonly string[]): string {
  return notes.length === 0 ? text : `${text}\n\n${notes.map((n) => `(${n})`).join('\n')}`;
}
