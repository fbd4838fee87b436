import { posix } from 'node:path';
import { createHash } from 'node:crypto';
import type { OverlayChange, OverlayFileSystem } from '../backends/overlay/index.js';
import { overlayCore } from '../backends/overlay/compose.js';
import { lowerFile, lowerStat, pathTarget } from '../backends/overlay/core.js';
import { isLinkVersion } from '../backends/overlay/links.js';
import type { UpperEntry } from '../backends/overlay/state.js';
import { FsError, isFsError, textProblem } from '../seam/index.js';
import { fileId, textHunks, type TextHunk } from './hunks.js';
import type { ReviewFile } from './types.js';

// The sandbox's changes as review files: what each is, its hunks, and what deciding it needs.

/** A review file with what deciding it needs. */
export interface Collected {
  readonly file: ReviewFile & { readonly hunks: readonly TextHunk[] };
  /** The sandbox's key of the change (for a rename's two halves: the new name). */
  readonly key: string;
  /** Set for a modified text file, decided hunk by hunk. */
  readonly text?: { readonly before: string; readonly after: string; readonly entry: UpperEntry; readonly modeChanged: boolean };
}

const keepBom = new TextDecoder('utf-8', { ignoreBOM: true });

export function coreOf(sandbox: OverlayFileSystem) {
  const core = overlayCore(sandbox);
  if (!core) throw new FsError('FS_INVALID_ARGUMENT', 'a review needs a sandbox made by createOverlayFs');
  return core;
}

/** Every change of the sandbox against the folder, as review files sorted by path. */
export async function collect(sandbox: OverlayFileSystem, signal?: AbortSignal): Promise<Collected[]> {
  const core = coreOf(sandbox);
  const out: Collected[] = [];
  const rel = (key: string) => relative(core.rootKey, key);
  const lowerBytes = async (key: string) => {
    try {
      return (await lowerFile(core.lower, pathTarget(key), `cannot review "${key}"`, signal))?.bytes;
    } catch (err) {
      if (isFsError(err, 'FS_NOT_REGULAR_FILE')) return undefined;
      throw err;
    }
  };
  const lowerExec = async (key: string) => (await lowerStat(core.lower, pathTarget(key), signal))?.executable === true;
  for (const change of await sandbox.changes(undefined, { signal })) {
    const entry = core.state.entries.get(change.path);
    if (change.type === 'directory') {
      const status = change.kind === 'renamed' ? 'added' : change.kind;
      out.push(whole(rel(change.path), change.path, status, 'directory', []));
      continue;
    }
    if (change.type === 'link' || entry?.kind === 'link' || isLinkVersion(entry?.base)) {
      const status = change.kind === 'renamed' ? 'added' : change.kind;
      out.push(whole(rel(change.path), change.path, status, 'symlink', [change.linkText ?? '', String(entry?.base ?? '')]));
      continue;
    }
    const after = entry?.kind === 'file' ? entry.bytes : undefined;
    if (change.kind === 'renamed') {
      // A move is a removal and an addition; deciding either half decides the move.
      const from = change.from!;
      out.push(contentFile(rel(from), change.path, 'deleted', await lowerBytes(from), undefined, false, false));
      out.push(contentFile(rel(change.path), change.path, 'added', undefined, after, false, change.executable === true));
      continue;
    }
    const before = change.kind === 'added' ? undefined : await lowerBytes(change.path);
    const execBefore = before !== undefined && (await lowerExec(change.path));
    const collected = contentFile(rel(change.path), change.path, statusOf(change), before, after, execBefore, change.executable === true);
    if (collected.file.kind === 'text' && collected.file.status === 'modified' && entry !== undefined) {
      out.push({ ...collected, text: { before: decode(before), after: decode(after), entry, modeChanged: execBefore !== (change.executable === true) } });
    } else out.push(collected);
  }
  return out.sort((a, b) => (a.file.path < b.file.path ? -1 : a.file.path > b.file.path ? 1 : 0));
}

function statusOf(change: OverlayChange): ReviewFile['status'] {
  return change.kind === 'renamed' ? 'added' : change.kind;
}

export function contentFile(
  path: string,
  key: string,
  status: ReviewFile['status'],
  before: Uint8Array | undefined,
  after: Uint8Array | undefined,
  execBefore: boolean,
  execAfter: boolean,
): Collected {
  const parts = [sha(before), sha(after), String(execBefore), String(execAfter)];
  const empty = new Uint8Array();
  if (textProblem(before ?? empty) !== undefined || textProblem(after ?? empty) !== undefined) return whole(path, key, status, 'binary', parts);
  const hunks = textHunks(path, decode(before), decode(after));
  const kind = hunks.length === 0 && status === 'modified' ? 'mode' : 'text';
  return { file: { path, status, kind, id: fileId(path, [status, kind, ...parts]), hunks }, key };
}

export function whole(path: string, key: string, status: ReviewFile['status'], kind: ReviewFile['kind'], parts: readonly string[]): Collected {
  return { file: { path, status, kind, id: fileId(path, [status, kind, ...parts]), hunks: [] }, key };
}

export function decode(bytes: Uint8Array | undefined): string {
  return bytes === undefined ? '' : keepBom.decode(bytes);
}

function sha(bytes: Uint8Array | undefined): string {
  return bytes === undefined ? '-' : createHash('sha256').update(bytes).digest('hex');
}

export function relative(rootKey: string, key: string): string {
  const rel = posix.relative(rootKey, key);
  return rel === '' || rel === '..' || rel.startsWith('../') ? key.replace(/^\/+/, '') : rel;
}
