import { FsError, type FsVersion } from '../../seam/index.js';
import { isHidden, lowerFile, lowerStat, pathTarget, type OverlayCore } from './core.js';
import { linkVersion, lowerOwn } from './links.js';
import { publishMode } from './modes.js';
import { fileDiff } from './file-diff.js';
import type { OverlayCommitProblem } from './problems.js';
import type { UpperEntry } from './state.js';

/** One side of a path as a diff shows it: its bytes (a link's are its text) and its mode. */
interface Side {
  readonly bytes: Uint8Array;
  readonly mode: boolean | 'link';
}

async function lowerSide(core: OverlayCore, key: string, signal: AbortSignal | undefined): Promise<Side | undefined> {
  if (isHidden(core.state, key)) return undefined;
  const own = await lowerOwn(core, key, signal);
  if (own.kind === 'link') return { bytes: Buffer.from(own.text), mode: 'link' };
  if (own.kind !== 'file') return undefined;
  const file = await lowerFile(core.lower, pathTarget(key), `cannot diff "${key}"`, signal);
  const info = await lowerStat(core.lower, pathTarget(key), signal);
  return file && { bytes: file.bytes, mode: info?.executable === true };
}

/**
 * A change where a link is made, replaced or removed, as git shows links: mode 120000 and the
 * text as the content. A link that replaces a file (or the reverse) is a removal and an addition.
 */
export async function linkDiff(core: OverlayCore, name: string, key: string, entry: UpperEntry, signal: AbortSignal | undefined): Promise<string> {
  const before = await lowerSide(core, key, signal);
  const after: Side | undefined =
    entry.kind === 'link' ? { bytes: Buffer.from(entry.text), mode: 'link' } : entry.kind === 'file' ? { bytes: entry.bytes, mode: entry.executable === true } : undefined;
  if (before !== undefined && after !== undefined && (before.mode === 'link') !== (after.mode === 'link')) {
    return fileDiff(name, before.bytes, undefined, { before: before.mode }) + fileDiff(name, undefined, after.bytes, { after: after.mode });
  }
  return fileDiff(name, before?.bytes, after?.bytes, { ...(before ? { before: before.mode } : {}), ...(after ? { after: after.mode } : {}) });
}

/** The lower's entry at a target itself as a version: a file's, a link's (from its text), `other`, or none. */
async function lowerNow(core: OverlayCore, key: string, signal: AbortSignal | undefined): Promise<{ version: FsVersion | undefined; kind: string }> {
  const own = await lowerOwn(core, key, signal);
  if (own.kind === 'link') return { version: linkVersion(own.text), kind: 'link' };
  if (own.kind === 'file') return { version: (await lowerStat(core.lower, pathTarget(key), signal))?.version, kind: 'file' };
  return { version: undefined, kind: own.kind };
}

/**
 * Commits a path where a link is involved (the overlay made one, or a lower link went or was
 * replaced): checked against the base as files are, then what the lower has there is removed and
 * the link (or file) is made. Runs under the path's lock.
 */
export async function commitLink(
  core: OverlayCore,
  key: string,
  entry: UpperEntry,
  what: string,
  signal: AbortSignal | undefined,
  force: boolean,
): Promise<'committed' | 'overwritten' | OverlayCommitProblem> {
  const { lower, state } = core;
  const target = await lower.resolve(key, { noFollow: true, signal });
  if (target.targetKey !== key) return { path: key, code: 'FS_CONFLICT', message: `${what}: the path now leads to "${target.targetKey}" in the lower layer` };
  const now = await lowerNow(core, key, signal);
  const changed = now.version !== entry.base || (now.version === undefined && now.kind !== 'missing');
  if (changed && !force) {
    const found = now.kind === 'missing' ? 'nothing' : now.version === undefined ? `a ${now.kind}` : `${now.kind} version ${now.version}`;
    const expected = entry.base === undefined ? 'nothing' : `version ${entry.base}`;
    return { path: key, code: 'FS_CONFLICT', message: `${what}: the lower changed since the overlay first saw it (expected ${expected}, found ${found}); the lower was not changed` };
  }
  if (now.kind === 'directory') throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the lower has a directory there`);
  if (now.kind === 'link') await lower.removeLink!(target, { signal });
  else if (now.kind === 'file') await lower.remove(target, force ? undefined : { kind: 'replaceIfVersion', version: now.version! }, { signal });
  if (entry.kind === 'link') {
    if (lower.symlink === undefined) throw new FsError('FS_UNSUPPORTED', `${what}: the lower has no symbolic links`);
    await lower.symlink(target, entry.text, { signal });
  } else if (entry.kind === 'file') {
    await lower.writeBytes(target, entry.bytes, { kind: 'createIfAbsent' }, { signal });
    await publishMode(lower, target, entry, signal);
  }
  await state.apply({ entries: [[key, undefined]] });
  return changed ? 'overwritten' : 'committed';
}
