/**
 * `searchCandidates` and `searchReads` of the contract: the provider's answers, with only the
 * contents a read could have given (within the bounds asked and the text limit), so a search
 * that takes them finds what it would have read.
 */
import { FsError } from './errors.js';
import type { FsContext } from './fs-context.js';
import type { FileSystem, FsOpOptions, FsSearchCandidates, FsSearchQuery, FsSearchReadQuery, FsTarget, FsTargetKey } from './types.js';

export function createSearchCandidates(ctx: FsContext): FileSystem['searchCandidates'] {
  const { provider } = ctx;
  if (provider.searchCandidates === undefined) return undefined;
  return async (top: FsTarget, query: FsSearchQuery, opts: FsOpOptions = {}) => {
    ctx.checkTarget(top);
    const bounds = query.contents;
    if (bounds !== undefined && !(isCount(bounds.maxFileBytes) && isCount(bounds.maxTotalBytes))) {
      throw new FsError('FS_INVALID_ARGUMENT', `cannot search "${top.displayPath}": contents bounds must be non-negative integers`);
    }
    const found = await provider.searchCandidates!(top, query, opts);
    if (found === undefined || found.contents === undefined) return found;
    return Object.assign(new Set(found), { contents: bounds === undefined ? new Map() : kept(found, bounds.maxFileBytes, bounds.maxTotalBytes) });
  };

  function kept(found: FsSearchCandidates, maxFileBytes: number, maxTotalBytes: number): Map<FsTargetKey, Uint8Array> {
    const limit = Math.min(maxFileBytes, ctx.maxTextBytes);
    const out = new Map<FsTargetKey, Uint8Array>();
    let total = 0;
    for (const [key, bytes] of found.contents!) {
      // Left out, the file is read as without contents.
      if (!found.has(key) || !(bytes instanceof Uint8Array) || bytes.byteLength > limit || total + bytes.byteLength > maxTotalBytes) continue;
      total += bytes.byteLength;
      out.set(key, bytes);
    }
    return out;
  }
}

export function createSearchReads(ctx: FsContext): FileSystem['searchReads'] {
  const { provider } = ctx;
  if (provider.searchReads === undefined) return undefined;
  return async (targets: readonly FsTarget[], query: FsSearchReadQuery, opts: FsOpOptions = {}) => {
    ctx.checkTargets(targets);
    const { maxBytes, maxTotalBytes, contains } = query;
    if (!isCount(maxBytes) || !isCount(maxTotalBytes) || (contains !== undefined && (!(contains instanceof Uint8Array) || contains.byteLength === 0))) {
      throw new FsError(
        'FS_INVALID_ARGUMENT',
        'cannot read for a search: maxBytes and maxTotalBytes must be non-negative integers, and contains non-empty bytes',
      );
    }
    if (targets.length === 0) return [];
    const found = await provider.searchReads!(targets, query, opts);
    const limit = Math.min(maxBytes, ctx.maxTextBytes);
    let room = maxTotalBytes;
    // Anything but the answers asked for, within the total, is read the usual way.
    return targets.map((_, i) => {
      const one = found[i];
      if (one === null) return contains === undefined ? undefined : null;
      if (!(one instanceof Uint8Array) || one.byteLength > limit || one.byteLength > room) return undefined;
      room -= one.byteLength;
      return one;
    });
  };
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
