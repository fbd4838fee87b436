import type { FsVersion } from '../../seam/index.js';
import type { PMap, PSet } from './pmap.js';

/** A file held by the upper layer. `base` is the lower's version when the overlay first changed it. */
export interface UpperFile {
  readonly kind: 'file';
  readonly bytes: Uint8Array;
  readonly version: FsVersion;
  /** When the overlay last wrote it (informational, like any mtime). */
  readonly mtimeMs: number;
  /** Undefined when the lower had no file there. */
  readonly base: FsVersion | undefined;
  /** Set when the file was moved here by rename: where it came from (see UpperOrigin). */
  readonly origin?: UpperOrigin;
  /** The executable bit (X1); absent means clear. */
  readonly executable?: true;
  /**
   * The lower's bytes at `base` (the content the overlay first read), kept for a text file of at
   * most BASE_BYTES_MAX bytes so that a later sync can merge three ways; absent otherwise.
   */
  readonly baseBytes?: Uint8Array;
}

/**
 * Where a moved file came from: the lower path it was first moved away from (chained moves keep
 * the first). `version` is set when the content moved was the lower's own file there: while the
 * file still has that version, commit can publish the move with the lower's atomic rename.
 */
export interface UpperOrigin {
  readonly path: string;
  readonly version?: FsVersion;
}

/** A removal: hides whatever the lower has at this path. */
export interface UpperWhiteout {
  readonly kind: 'whiteout';
  readonly base: FsVersion | undefined;
}

/**
 * A symbolic link made in the overlay (K1), holding its text. `base` as for a whiteout: what the
 * lower had at this path (a link's version comes from its text, see `linkVersion`).
 */
export interface UpperLink {
  readonly kind: 'link';
  readonly text: string;
  readonly base: FsVersion | undefined;
}

export type UpperEntry = UpperFile | UpperWhiteout | UpperLink;

/** One atomic change of the upper layer. */
export interface UpperChange {
  /** `undefined` drops the entry, so the path shows the lower again. */
  readonly entries?: ReadonlyArray<readonly [string, UpperEntry | undefined]>;
  readonly addDirs?: readonly string[];
  readonly dropDirs?: readonly string[];
  /** Lower directories removed in the overlay: nothing of the lower at or below them shows. */
  readonly addOpaque?: readonly string[];
  readonly dropOpaque?: readonly string[];
  /** Also delete every stored blob nothing refers to (after the save). */
  readonly sweep?: boolean;
  /** Replace the whole upper layer with this one (adopting a fork); applied before the rest. */
  readonly replace?: UpperSnapshot;
  /** Labels for the checkpoint this change records. */
  readonly label?: CheckpointLabel;
}

/** Who or what made a change (free text, both optional): kept on its checkpoint. */
export interface CheckpointLabel {
  readonly owner?: string;
  readonly source?: string;
}

/**
 * The upper layer as it was right after one change. `id` is a positive integer, increasing by
 * one with every change of the upper (ids are never reused, also across reopening); `time` is
 * when the change was applied (ms since the epoch); `paths` are the target keys it touched.
 */
export interface Checkpoint extends CheckpointLabel {
  readonly id: number;
  readonly time: number;
  readonly paths: readonly string[];
}

/**
 * The whole upper layer at one moment. Immutable: forks share it as it is, and later changes of
 * either side make new maps that share their untouched parts.
 */
export interface UpperSnapshot {
  readonly entries: PMap<UpperEntry>;
  readonly dirs: PSet;
  readonly opaque: PSet;
}

/** When the journal is folded into a new document (tests make it small). */
export interface UpperTuning {
  readonly compactRatio?: number;
  readonly compactMinBytes?: number;
  /** How many checkpoints are kept (the oldest are dropped first); default 1,000. */
  readonly keepCheckpoints?: number;
  /** The most bytes of replaced contents the kept checkpoints hold (the oldest are dropped first); default 256 MiB. */
  readonly keepCheckpointBytes?: number;
}
