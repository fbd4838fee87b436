import type { UpperStore } from './store.js';
import { emptyLayer, type LiveLayer } from './state-index.js';
import type { Checkpoint, CheckpointLabel, UpperChange, UpperSnapshot, UpperTuning } from './state-types.js';

/** The journal is folded into a new state document once it is this many times the document's size. */
const COMPACT_RATIO = 2;
/** ...and at least this large (so a small sandbox does not rewrite its document every few saves). */
const COMPACT_MIN_BYTES = 256 * 1024;
/** How many checkpoints are kept by default. */
export const KEEP_CHECKPOINTS = 1000;
/** Default bound of the contents only older checkpoints hold: 256 MiB. */
export const KEEP_CHECKPOINT_BYTES = 256 * 1024 * 1024;

/** A checkpoint with the layer it holds. */
export interface HeldCheckpoint {
  readonly info: Checkpoint;
  readonly layer: UpperSnapshot;
  /**
   * Blobs of the files the change replaced: still held by the checkpoints before this one, so
   * released when this one becomes the oldest kept (already released for the oldest).
   */
  readonly released: readonly string[];
  /**
   * The bytes of the contents the changes of the checkpoints up to this one replaced, summed from
   * the first change kept: what the checkpoints before this one hold is `upTo - oldest.upTo`.
   */
  readonly upTo: number;
}

export type Pending =
  | { readonly change: UpperChange; readonly deferred?: boolean; readonly resolve: () => void; readonly reject: (err: unknown) => void }
  /** Runs alone, between saves (a fork of the saved state). */
  | { readonly task: (store: UpperStore) => Promise<void> };

/**
 * What the parts of one upper state share: its live layer and, with a store, where its saves
 * stand. Loading, saving and forking change it in place; UpperState is its public face.
 */
export interface UpperContext {
  readonly root: string;
  readonly store: UpperStore | undefined;
  readonly compactRatio: number;
  readonly compactMinBytes: number;
  readonly live: LiveLayer;
  /** A fork's parent layer as it was at the fork (loaded on demand when reopened). */
  base: UpperSnapshot | (() => Promise<UpperSnapshot>) | undefined;
  /** The journal in place continues the fork base (a fork's first journal, until its first new document). */
  continues: boolean;
  /** Blobs the fork base refers to: kept in the store for as long as the fork is (see `base`). */
  pinned: Set<string>;
  /** How many entries refer to each stored blob (every blob with a count is in the store). */
  refs: Map<string, number>;
  readonly queue: Pending[];
  draining: boolean;
  /** The state document's generation (0: none, or one older than format 3). */
  generation: number;
  snapshotBytes: number;
  /** Where the next journal record goes; undefined when the next save must write a new document. */
  journalEnd: number | undefined;
  /** The checkpoints kept, oldest first (see state-history.ts). */
  history: HeldCheckpoint[];
  /** The id the next checkpoint gets. */
  nextId: number;
  readonly keep: number;
  /** The most bytes of replaced contents the kept checkpoints may hold (the oldest go first). */
  readonly keepBytes: number;
  /** The labels given by `UpperState.label`, innermost last. */
  labels: CheckpointLabel[];
  /** The journal holds records of deferred saves not yet flushed to disk. */
  unsynced: boolean;
  /**
   * Blobs no entry refers to any more, released by a deferred save: deleted once that save is on
   * disk (until then a crash may reopen to a record that still names them).
   */
  dropLater: Set<string>;
}

/** An empty state's context (nothing loaded yet). */
export function createContext(root: string, store: UpperStore | undefined, tuning: UpperTuning): UpperContext {
  return {
    root,
    store,
    compactRatio: tuning.compactRatio ?? COMPACT_RATIO,
    compactMinBytes: tuning.compactMinBytes ?? COMPACT_MIN_BYTES,
    live: emptyLayer(),
    base: undefined,
    continues: false,
    pinned: new Set(),
    refs: new Map(),
    queue: [],
    draining: false,
    generation: 0,
    snapshotBytes: 0,
    journalEnd: undefined,
    history: [],
    nextId: 1,
    keep: tuning.keepCheckpoints ?? KEEP_CHECKPOINTS,
    keepBytes: tuning.keepCheckpointBytes ?? KEEP_CHECKPOINT_BYTES,
    labels: [],
    unsynced: false,
    dropLater: new Set(),
  };
}
