import { realpath } from 'node:fs/promises';
import { FsError, KeyedMutex, createChangeHub, createFs, reportChanges, throwIfAborted, type CreateFsOptions, type FileSystem, type FsOpOptions } from '../../seam/index.js';
import type { OverlayCore } from './core.js';
import { createForkReview } from './fork.js';
import { createHistory } from './history.js';
import type { OverlayFileSystem, OverlayForkOptions, OverlayReviewOptions, OverlayRewindOptions } from './types.js';
import { createOverlayProvider } from './provider.js';
import { createReview } from './review.js';
import { UpperState, type UpperTuning } from './state.js';
import type { UpperStore } from './store.js';

/**
 * An overlay over `options.lower` whose upper is kept in `store` (or in memory). Tests
 * give it stores that fail or crash, and a small compaction threshold.
 */
export async function composeOverlay(
  options: CreateFsOptions & { readonly lower: FileSystem; readonly keepCheckpoints?: number; readonly keepCheckpointBytes?: number },
  store: UpperStore | undefined,
  tuning: UpperTuning = {},
  owner?: string,
): Promise<OverlayFileSystem> {
  const { lower } = options;
  const rootKey = (await lower.resolve(lower.root ?? '/')).targetKey;
  const keepCheckpoints = tuning.keepCheckpoints ?? options.keepCheckpoints;
  const keepCheckpointBytes = tuning.keepCheckpointBytes ?? options.keepCheckpointBytes;
  const state = await UpperState.open(rootKey, store, {
    ...tuning,
    ...(keepCheckpoints === undefined ? {} : { keepCheckpoints }),
    ...(keepCheckpointBytes === undefined ? {} : { keepCheckpointBytes }),
  });
  return assemble(options, rootKey, state, owner);
}

/** The upper state of each overlay this module made (for adopt). */
const states = new WeakMap<OverlayFileSystem, UpperState>();
/** The storage of each overlay this module made (for rebase.ts). */
const cores = new WeakMap<OverlayFileSystem, OverlayCore & { readonly changed: () => void }>();

/** Views that stand for an overlay this module made, reopened as they go (createSandbox's `fs`). */
const views = new WeakMap<OverlayFileSystem, () => OverlayFileSystem>();
/** Makes `view` stand for the overlay `current()` returns, for review, merge and runs. */
export function registerOverlayView(view: OverlayFileSystem, current: () => OverlayFileSystem): void {
  views.set(view, current);
}
const underlying = (overlay: OverlayFileSystem) => views.get(overlay)?.() ?? overlay;

/** The storage of an overlay this module made (for runs, which import a layer of changes at once); undefined for any other object. */
export function coreOf(overlay: OverlayFileSystem): OverlayCore | undefined {
  return cores.get(underlying(overlay));
}

/** An overlay's storage and a way to tell its watchers that many paths changed; undefined for any other filesystem. */
export function overlayCore(overlay: OverlayFileSystem): (OverlayCore & { readonly changed: () => void }) | undefined {
  return cores.get(underlying(overlay));
}

/** The upper state of an overlay this module made (merge compares layers), else undefined. */
export function upperStateOf(overlay: OverlayFileSystem): UpperState | undefined {
  return states.get(underlying(overlay));
}

function assemble(options: CreateFsOptions & { readonly lower: FileSystem }, rootKey: string, state: UpperState, owner: string | undefined): OverlayFileSystem {
  const { lower } = options;
  const core = { lower, state, rootKey, lock: new KeyedMutex(), ...(owner === undefined ? {} : { owner }) };
  // Changes made through the view are reported to `watch`, with the owner of the current label.
  const hub = createChangeHub();
  const provider = reportChanges(createOverlayProvider(core), hub, () => state.currentLabel()?.owner);
  const fs = createFs(provider, options);
  const review = createReview(core, fs);
  const forkReview = createForkReview(core, fs);
  const { sides, ...history } = createHistory(core, fs);
  // Changes of many paths at once: watchers are told to re-read (see docs/feed.md).
  const thenOverflow = async (change: Promise<void>) => {
    await change;
    hub.emit({ kind: 'overflow', path: '/' });
  };
  const overlay: OverlayFileSystem = Object.assign(fs, {
    lower,
    provider,
    recovered: [],
    ...review,
    ...history,
    discard: (paths?: readonly string[], o?: FsOpOptions) => thenOverflow(review.discard(paths, o)),
    rewind: (id: number, o?: OverlayRewindOptions) => thenOverflow(history.rewind(id, o)),
    changes: async (paths?: readonly string[], o: OverlayReviewOptions = {}) => {
      const between = sides(o);
      if (between) return forkReview.changes(paths, o, between);
      return checkAgainst(o) === 'parent' ? forkReview.changes(paths, o) : review.changes(paths, o);
    },
    diff: async (paths?: readonly string[], o: OverlayReviewOptions = {}) => {
      const between = sides(o);
      if (between) return forkReview.diff(paths, o, between);
      return checkAgainst(o) === 'parent' ? forkReview.diff(paths, o) : review.diff(paths, o);
    },
    async fork(forkOptions: OverlayForkOptions = {}) {
      const dir = forkOptions.stateDir;
      if (dir !== undefined && (typeof dir !== 'string' || dir.length === 0)) throw new FsError('FS_INVALID_ARGUMENT', 'stateDir must be a non-empty path');
      const child = dir === undefined ? state.forkInMemory() : await state.forkInto(dir);
      // A store's fork is named, not a directory (SQLite): then no commit journal can be its own.
      return assemble(options, rootKey, child, dir === undefined ? undefined : await realpath(dir).catch(() => undefined));
    },
    async adopt(winner: OverlayFileSystem, adoptOptions: FsOpOptions = {}) {
      const other = states.get(underlying(winner));
      if (other === undefined || winner.lower !== lower) throw new FsError('FS_INVALID_ARGUMENT', 'adopt takes an overlay over the same lower (a fork of this one)');
      throwIfAborted(adoptOptions.signal, 'cannot adopt the fork');
      if (other !== state) await thenOverflow(state.replaceWith(other));
    },
  });
  states.set(overlay, state);
  cores.set(overlay, { ...core, changed: () => hub.emit({ kind: 'overflow', path: '/' }) });
  return overlay;
}

function checkAgainst(options: OverlayReviewOptions): 'lower' | 'parent' {
  const against = options.against ?? 'lower';
  if (against !== 'lower' && against !== 'parent') throw new FsError('FS_INVALID_ARGUMENT', `against must be "lower" or "parent", not ${JSON.stringify(against)}`);
  return against;
}
