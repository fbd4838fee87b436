import { FsError } from './errors.js';
import type { SwapDone } from './mutate.js';
import { safeJson } from './path.js';
import type { FsTextWriteOptions, FsVersion, FsWriteOptions } from './types.js';

// The checks of the write options that several operations share: a caller's bad option is an
// argument error, not a crash.

export function checkIntent(intent: unknown, allowCreate: boolean): void {
  if (intent === undefined) return;
  const i = intent as Partial<{ kind: string; version: unknown }> | null;
  if (typeof i === 'object' && i !== null) {
    if (i.kind === 'createIfAbsent' && allowCreate) return;
    if (i.kind === 'replaceIfVersion' && typeof i.version === 'string' && i.version.length > 0) return;
  }
  throw new FsError('FS_INVALID_ARGUMENT', `invalid write intent ${safeJson(intent)}`);
}

export function withBytes(opts: FsTextWriteOptions | undefined): boolean {
  const asked = opts?.withBytes;
  if (asked !== undefined && typeof asked !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `withBytes must be a boolean, got ${JSON.stringify(asked)}`);
  return asked === true;
}

export function durabilityOf(opts: FsWriteOptions | undefined): 'deferred' | undefined {
  const d = opts?.durability;
  if (d === undefined || d === 'immediate') return undefined;
  if (d !== 'deferred') throw new FsError('FS_INVALID_ARGUMENT', `durability must be 'immediate' or 'deferred', got ${JSON.stringify(d)}`);
  return d;
}

export function writtenVersion(result: SwapDone, what: string): FsVersion {
  if (typeof result.version !== 'string' || result.version.length === 0) {
    throw new FsError('FS_IO_ERROR', `${what}: the provider's swap returned no version`);
  }
  return result.version;
}
