import { isUtf8 } from 'node:buffer';
import { availableParallelism } from 'node:os';
import { posix } from 'node:path';
import { FsError, throwIfAborted } from '../../seam/errors.js';
import { isWithin } from '../../seam/path.js';
import type { FsSearchReadQuery } from '../../seam/provider.js';
import { isTextBytes } from '../../seam/text.js';
import type { FsOpOptions, FsTarget } from '../../seam/types.js';
import type { LocalContext } from './context.js';
import { PINNED_IO, SYNC_READ_BYTES } from './leaf.js';
import { openedRead, pinnedRead, readDirFiles, type PinnedIo } from './pinned.js';
import { canSpawnNode, readPool, type Answer, type Group, type HelperKind } from './search-pool.js';

/**
 * `searchReads` of the local provider: a search's small reads, spread over a few helpers (child
 * processes, or worker threads) so that every core works. Each helper runs the same pinned reads
 * as the calling thread (the source of pinned.ts), with the same checks: the directory held and
 * its real path read back before each file, the inode pinned with O_PATH and its type checked
 * before it is opened (or, by default, the file opened non-blocking and refused by its descriptor's
 * type before any byte is read: `pinSearchReads`). What a helper does not read plainly is left to
 * the usual read.
 */

/** Below this many files a request is read on the calling thread: a round trip to a worker costs more. */
const MIN_WORKER_FILES = 64;
/**
 * A request is cut among workers only above this many files each: a search keeps several requests
 * out (one per worker), and each message to a worker costs a wake-up of a thread on a busy core.
 */
const MIN_PER_WORKER = 1024;

/** The default of LocalProviderOptions.searchThreads: two where there are two cores or more. */
export function defaultSearchThreads(): number {
  return availableParallelism() >= 2 ? 2 : 0;
}

/** How many helpers of which kind a provider's searches use, and how they open each file. */
export interface SearchHelpers {
  readonly kind: HelperKind;
  readonly count: number;
  /** LocalProviderOptions.pinSearchReads. */
  readonly pin: boolean;
}

/** LocalProviderOptions.searchThreads, searchHelpers and pinSearchReads, checked, with their defaults. */
export function checkSearchHelpers(n: unknown, kind: unknown, pin: unknown = false): SearchHelpers {
  if (typeof pin !== 'boolean') throw new FsError('FS_INVALID_ARGUMENT', `pinSearchReads must be true or false, got ${String(pin)}`);
  if (kind !== undefined && kind !== 'processes' && kind !== 'threads') {
    throw new FsError('FS_INVALID_ARGUMENT', `searchHelpers must be "processes" or "threads", got ${String(kind)}`);
  }
  // Processes only where this is node itself (not an embedding that would start an app).
  const chosen: HelperKind = kind ?? (canSpawnNode() ? 'processes' : 'threads');
  if (n === undefined) return { kind: chosen, count: defaultSearchThreads(), pin };
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0 || n > 64) {
    throw new FsError('FS_INVALID_ARGUMENT', `searchThreads must be an integer from 0 to 64, got ${String(n)}`);
  }
  return { kind: chosen, count: n, pin };
}

export async function searchReads(
  ctx: LocalContext,
  helpers: SearchHelpers,
  targets: readonly FsTarget[],
  query: FsSearchReadQuery,
  { signal }: FsOpOptions,
): Promise<Answer[]> {
  throwIfAborted(signal, 'cannot read for a search');
  const out: Answer[] = new Array<Answer>(targets.length).fill(undefined);
  if (!ctx.syncWalk || PINNED_IO === undefined) return out;
  const groups: Group[] = [];
  let last: Group | undefined;
  for (let i = 0; i < targets.length; i++) {
    const key: string = targets[i]!.targetKey;
    // Next to the one before, in the same directory (tested without searching the key from its end).
    if (last !== undefined && last[2] + last[1].length === i) {
      const at = last[0].length;
      if (key.length > at + 1 && key.charCodeAt(at) === 47 && key.startsWith(last[0]) && key.indexOf('/', at + 1) === -1) {
        last[1].push(key.slice(at + 1));
        continue;
      }
    }
    const cut = key.lastIndexOf('/');
    const name = key.slice(cut + 1);
    last = undefined;
    const dir = key.slice(0, cut);
    // The root itself, or a key that is not a path below it, is read the usual way (which says why).
    if (cut <= 0 || key === ctx.root || !isWithin(ctx.root, dir) || posix.normalize(key) !== key) continue;
    groups.push((last = [dir, [name], i]));
  }
  const maxBytes = Math.min(query.maxBytes, SYNC_READ_BYTES);
  const contains = query.contains === undefined ? undefined : Buffer.from(query.contains.buffer, query.contains.byteOffset, query.contains.byteLength);
  const count = groups.reduce((n, g) => n + g[1].length, 0);
  const threads = helpers.count;
  const inThread = threads === 0 || count < MIN_WORKER_FILES;
  const slices = inThread ? [groups] : split(groups, Math.max(1, Math.min(threads, Math.floor(count / MIN_PER_WORKER))));
  // Each slice holds its share of the total.
  const room = Math.floor(query.maxTotalBytes / slices.length);
  const answers = inThread
    ? [here(PINNED_IO, helpers.pin ? pinnedRead : openedRead, groups, maxBytes, contains, room)]
    : await Promise.all(slices.map((slice) => readPool(helpers.kind, threads).read(slice, maxBytes, contains, room, helpers.pin)));
  slices.forEach((slice, s) => {
    const answer = answers[s];
    if (answer === undefined) return;
    let at = 0;
    for (const [, names, first] of slice) for (let j = 0; j < names.length; j++) out[first + j] = answer[at++];
  });
  throwIfAborted(signal, 'cannot read for a search');
  return out;
}

const isText = (bytes: Buffer): boolean => isTextBytes(bytes, isUtf8);

function here(io: PinnedIo, leaf: typeof pinnedRead, groups: readonly Group[], maxBytes: number, contains: Buffer | undefined, room: number): Answer[] {
  const out: Answer[] = [];
  const budget = { left: room };
  for (const [dir, names] of groups) for (const one of readDirFiles(io, leaf, dir, names, maxBytes, contains, isText, budget)) out.push(one);
  return out;
}

/** `groups` cut into `n` slices of about as many files each (a directory's files may be cut too). */
function split(groups: readonly Group[], n: number): Group[][] {
  const total = groups.reduce((sum, g) => sum + g[1].length, 0);
  const per = Math.ceil(total / n);
  const slices: Group[][] = [[]];
  let room = per;
  for (const [dir, names, first] of groups) {
    for (let start = 0; start < names.length; ) {
      if (room === 0) {
        slices.push([]);
        room = per;
      }
      const take = Math.min(room, names.length - start);
      slices[slices.length - 1]!.push([dir, names.slice(start, start + take), first + start]);
      start += take;
      room -= take;
    }
  }
  return slices;
}

