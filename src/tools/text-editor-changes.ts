import {
  FsError,
  applyEdit,
  decodeText,
  dominantEol,
  encodeKeepingBom,
  lineBreaks,
  textForWrite,
  withEol,
  type FsTarget,
  type FsVersion,
} from '../seam/index.js';
import type { Owner, ToolCall } from '../harness/index.js';
import { readCurrent, type Current } from './patch/plan.js';

// The changing commands of the text editor tool (create, str_replace, insert, undo_edit). Each
// reads the file, checks the policy's guard against what it read, computes the new bytes with
// the seam's text rules and publishes them guarded by the version read, so the bytes it keeps
// for undo_edit are exactly the ones it replaced.

/** One change this tool made: the bytes before (null: the file did not exist) and the version after. */
interface Change {
  readonly before: Uint8Array | null;
  readonly after: FsVersion;
}

const MAX_UNDO = 10;

/** Per owner and file, the changes this tool made, newest last. */
export class EditHistory {
  private readonly byObject = new WeakMap<object, Map<string, Change[]>>();
  private readonly byString = new Map<string, Map<string, Change[]>>();

  private files(owner: Owner): Map<string, Change[]> {
    const existing = typeof owner === 'string' ? this.byString.get(owner) : this.byObject.get(owner);
    if (existing !== undefined) return existing;
    const created = new Map<string, Change[]>();
    if (typeof owner === 'string') this.byString.set(owner, created);
    else this.byObject.set(owner, created);
    return created;
  }

  push(owner: Owner, target: FsTarget, change: Change): void {
    const list = this.files(owner).get(target.targetKey) ?? [];
    list.push(change);
    if (list.length > MAX_UNDO) list.shift();
    this.files(owner).set(target.targetKey, list);
  }

  last(owner: Owner, target: FsTarget): Change | undefined {
    return this.files(owner).get(target.targetKey)?.at(-1);
  }

  pop(owner: Owner, target: FsTarget): void {
    this.files(owner).get(target.targetKey)?.pop();
  }
}

export interface ChangeResult {
  readonly version: FsVersion;
  /** 1-based lines of the new text around which to show a snippet. */
  readonly from: number;
  readonly to: number;
  readonly text: string;
  readonly created?: boolean;
}

const opts = (call: ToolCall) => (call.signal ? { signal: call.signal } : {});

/** Reads the file an edit needs, checked against the version the owner observed. */
async function readForEdit(call: ToolCall, target: FsTarget): Promise<Current & { text: string; bom: boolean }> {
  const guard = await call.events.editIntent(target, call.owner);
  const current = await readCurrent(call, target);
  const what = `cannot edit "${target.displayPath}"`;
  if (current === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
  if (guard !== undefined && guard.version !== current.version) throw new FsError('FS_STALE_VERSION', `${what}: the file changed since it was read`);
  return { ...current, ...decodeText(current.bytes, what) };
}

async function publish(call: ToolCall, history: EditHistory, target: FsTarget, current: Current | undefined, bytes: Uint8Array): Promise<FsVersion> {
  const intent = current === undefined ? ({ kind: 'createIfAbsent' } as const) : ({ kind: 'replaceIfVersion', version: current.version } as const);
  const outcome = await call.fs.writeBytes(target, bytes, intent, opts(call));
  call.events.observed(target, { kind: 'present', version: outcome.version }, call.owner);
  history.push(call.owner, target, { before: current?.bytes ?? null, after: outcome.version });
  return outcome.version;
}

export async function createFile(call: ToolCall, history: EditHistory, target: FsTarget, fileText: string): Promise<ChangeResult> {
  const intent = await call.events.writeIntent(target, call.owner);
  const current = await readCurrent(call, target);
  if (current !== undefined && intent?.kind === 'createIfAbsent') {
    throw new FsError('FS_NOT_OBSERVED', `cannot create "${target.displayPath}": the file exists and has not been viewed in this session`);
  }
  if (intent?.kind === 'replaceIfVersion' && intent.version !== current?.version) {
    throw new FsError('FS_STALE_VERSION', `cannot create "${target.displayPath}": the file changed since it was read`);
  }
  const bytes = textForWrite(fileText, current?.bytes);
  const version = await publish(call, history, target, current, bytes);
  return { version, from: 1, to: 1, text: fileText, created: current === undefined };
}

export async function strReplace(call: ToolCall, history: EditHistory, target: FsTarget, oldStr: string, newStr: string): Promise<ChangeResult> {
  const file = await readForEdit(call, target);
  const r = applyEdit(file.text, oldStr, newStr, false);
  if (!r.ok) {
    // The seam's message, in this tool's terms (it has no replace_all).
    const message = r.error.message.replaceAll('old_string', 'old_str').replaceAll('new_string', 'new_str').replace(', or set replace_all to true', '');
    throw new FsError(r.error.code, `No replacement was made in "${target.displayPath}": ${message}`);
  }
  const version = await publish(call, history, target, file, encodeKeepingBom(r.text, file.bom));
  return { version, from: r.lines[0]!.start, to: r.lines[0]!.end, text: r.text };
}

export async function insertText(call: ToolCall, history: EditHistory, target: FsTarget, line: number, inserted: string): Promise<ChangeResult> {
  const file = await readForEdit(call, target);
  const { lines, breaks } = lineBreaks(file.text);
  if (line > lines.length) {
    throw new FsError('FS_INVALID_ARGUMENT', `insert_line ${line} is past the end of "${target.displayPath}", which has ${lines.length} line${lines.length === 1 ? '' : 's'} (0 inserts before the first line)`);
  }
  const eol = dominantEol(file.text);
  let block = withEol(inserted, eol);
  let offset = 0;
  for (let i = 0; i < line; i++) offset += lines[i]!.length + breaks[i]!.length;
  if (line === lines.length && lines.length > 0 && breaks.at(-1) === '') {
    // After a last line without a break: break it, and keep the file without a final break.
    block = eol + (block.endsWith(eol) ? block.slice(0, -eol.length) : block);
  } else if (!block.endsWith(eol)) block += eol;
  const text = file.text.slice(0, offset) + block + file.text.slice(offset);
  const version = await publish(call, history, target, file, encodeKeepingBom(text, file.bom));
  const added = Math.max(1, withEol(inserted, '\n').split('\n').length - (inserted.endsWith('\n') ? 1 : 0));
  return { version, from: line + 1, to: line + added, text };
}

export async function undoEdit(call: ToolCall, history: EditHistory, target: FsTarget): Promise<{ version?: FsVersion; removed: boolean }> {
  const change = history.last(call.owner, target);
  if (change === undefined) throw new FsError('FS_INVALID_ARGUMENT', `no edit of "${target.displayPath}" by this session to undo`);
  const info = await call.fs.stat(target, opts(call));
  if (info?.type !== 'file' || info.version !== change.after) {
    throw new FsError('FS_STALE_VERSION', `cannot undo the last edit of "${target.displayPath}": the file changed since that edit`);
  }
  const guard = { kind: 'replaceIfVersion', version: change.after } as const;
  if (change.before === null) {
    await call.fs.remove(target, guard, opts(call));
    history.pop(call.owner, target);
    call.events.observed(target, { kind: 'absent' }, call.owner);
    return { removed: true };
  }
  const outcome = await call.fs.writeBytes(target, change.before, guard, opts(call));
  history.pop(call.owner, target);
  call.events.observed(target, { kind: 'present', version: outcome.version }, call.owner);
  return { version: outcome.version, removed: false };
}
