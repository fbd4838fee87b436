// What an audit record keeps of a call's arguments and owner, and which paths a call names.
import { createHash } from 'node:crypto';
import type { Owner } from './events.js';

/**
 * Argument names whose string values are file contents (write's `content`, edit's `old_string`
 * and `new_string`, also inside `edits`, apply_patch's `input`, the text editor's `file_text`,
 * `old_str`, `new_str` and `insert_text`): replaced by their size and digest wherever they occur.
 */
export const CONTENT_ARGS: readonly string[] = ['content', 'old_string', 'new_string', 'input', 'file_text', 'old_str', 'new_str', 'insert_text'];

/** Any other string argument longer than this many UTF-8 bytes is replaced too (a tool we do not know may carry contents). */
export const MAX_KEPT_ARG_BYTES = 1024;

/** Argument names whose string values are paths the call touches. */
export const PATH_ARGS: readonly string[] = ['file_path', 'path', 'from_path', 'to_path'];

/** The tool whose `input` is a patch naming the files it changes. */
const PATCH_TOOL = 'apply_patch';
const PATCH_FILE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/;

export interface ContentDigest {
  readonly bytes: number;
  readonly sha256: string;
}

export function digestOf(text: string): ContentDigest {
  const bytes = Buffer.from(text, 'utf8');
  return { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** The arguments with every content (see CONTENT_ARGS, MAX_KEPT_ARG_BYTES) replaced by `{ bytes, sha256 }`. */
export function redactArgs(args: unknown): unknown {
  return redact(args, undefined, 0);
}

function redact(value: unknown, key: string | undefined, depth: number): unknown {
  if (typeof value === 'string') {
    const content = key !== undefined && CONTENT_ARGS.includes(key);
    return content || Buffer.byteLength(value, 'utf8') > MAX_KEPT_ARG_BYTES ? digestOf(value) : value;
  }
  // Deeper than any tool's arguments go: kept out rather than walked.
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 8) return '(nested too deep)';
  if (Array.isArray(value)) return value.map((v) => redact(v, key, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redact(v, k, depth + 1);
  return out;
}

/** A string owner as is; an object owner's own `id` when it is a non-empty string; else undefined. */
export function ownerId(owner: Owner | undefined): string | undefined {
  if (typeof owner === 'string') return owner === '' ? undefined : owner;
  if ((typeof owner !== 'object' && typeof owner !== 'function') || owner === null) return undefined;
  const id = (owner as { id?: unknown }).id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * The paths a call names, as given: the string values of PATH_ARGS at the top level, and for
 * apply_patch the files its patch adds, updates, deletes or moves to. In order, each once.
 */
export function pathsNamed(tool: string, args: unknown): string[] {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return [];
  const a = args as Record<string, unknown>;
  const out: string[] = [];
  for (const key of PATH_ARGS) {
    const v = a[key];
    if (typeof v === 'string' && v.trim() !== '') out.push(v);
  }
  if (tool === PATCH_TOOL && typeof a.input === 'string') {
    for (const line of a.input.split(/\r?\n/)) {
      const m = PATCH_FILE.exec(line);
      if (m !== null && m[1]!.trim() !== '') out.push(m[1]!.trim());
    }
  }
  return [...new Set(out)];
}
