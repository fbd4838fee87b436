import { structuredPatch } from 'diff';
import {
  DEFAULT_MAX_TEXT_BYTES,
  FsError,
  applyEdit,
  crlfToLf,
  decodeText,
  encodeKeepingBom,
  type FsLineRange,
  type FsVersion,
} from '../seam/index.js';
import type { ToolCall } from '../harness/index.js';
import { diffFields, type DiffFields } from './diff.js';

// `edit` with `edits: [...]`: the seam's edit engine applied in order to one buffer, then one
// guarded write, so the file changes once (one version, one diff) or not at all.

export interface OneEdit {
  readonly old_string: string;
  readonly new_string: string;
  readonly replace_all?: boolean | null | undefined;
}

export interface MultiEditOutcome extends DiffFields {
  readonly path: string;
  readonly version: FsVersion;
  readonly replacements: number;
  readonly lines: FsLineRange[];
}

export async function applyEdits(call: ToolCall, filePath: string, edits: readonly OneEdit[]): Promise<MultiEditOutcome> {
  edits.forEach((e, i) => {
    if (crlfToLf(e.old_string) === crlfToLf(e.new_string)) {
      throw new FsError('FS_INVALID_ARGUMENT', `edits[${i}]: old_string and new_string are identical; there is nothing to change`);
    }
  });
  const opts = call.signal ? { signal: call.signal } : {};
  const target = await call.fs.resolve(filePath, { cwd: call.cwd, ...opts });
  const guard = await call.events.editIntent(target, call.owner);
  const what = `cannot edit "${target.displayPath}"`;
  const read = await call.fs.readBytes(target, { maxBytes: DEFAULT_MAX_TEXT_BYTES, ...opts });
  if (guard !== undefined && read.version !== guard.version) throw new FsError('FS_STALE_VERSION', `${what}: the file changed since it was read`);
  const { text, bom } = decodeText(read.bytes, what);
  let next = text;
  let replacements = 0;
  edits.forEach((e, i) => {
    const r = applyEdit(next, e.old_string, e.new_string, e.replace_all === true);
    if (!r.ok) throw new FsError(r.error.code, `${what}: edits[${i}]: ${r.error.message}; no edit was applied`);
    next = r.text;
    replacements += r.replacements;
  });
  const bytes = encodeKeepingBom(next, bom);
  // Guarded by the version read, policy or not: the edits were computed from exactly those bytes.
  const outcome = await call.fs.writeBytes(target, bytes, { kind: 'replaceIfVersion', version: read.version }, opts);
  call.events.observed(target, { kind: 'present', version: outcome.version }, call.owner);
  return {
    path: target.displayPath,
    version: outcome.version,
    replacements,
    lines: changedLines(text, next),
    ...diffFields(target.displayPath, read.bytes, bytes),
  };
}

/** The lines of the new text that differ from the old (a deletion marks the line after it). */
function changedLines(before: string, after: string): FsLineRange[] {
  const patch = structuredPatch('a', 'b', crlfToLf(before), crlfToLf(after), undefined, undefined, { context: 0 });
  return patch.hunks.map((h) => {
    const start = Math.max(1, h.newLines === 0 ? h.newStart + 1 : h.newStart);
    return { start, end: Math.max(start, h.newStart + h.newLines - 1) };
  });
}
