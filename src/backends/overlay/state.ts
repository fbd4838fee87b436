import { toFsError } from '../../seam/index.js';
import type { PMap, PSet } from './pmap.js';
import type { UpperStore } from './store.js';
import { createContext, type UpperContext } from './state-context.js';
import { forkInMemory, forkInto } from './state-fork.js';
import { applyChange, expandReplace } from './state-apply.js';
import { changePaths, changesLayer, checkpointOf, findCheckpoint, keepCheckpoint, layerChange, stampOf } from './state-history.js';
import { adoptMaps, layerSnapshot } from './state-index.js';
import { load } from './state-load.js';
import { enqueue, syncDeferred } from './state-save.js';
import type { Checkpoint, CheckpointLabel, UpperChange, UpperEntry, UpperSnapshot, UpperTuning } from './state-types.js';

export type {
  Checkpoint,
  CheckpointLabel,
  UpperChange,
  UpperEntry,
  UpperFile,
  UpperLink,
  UpperOrigin,
  UpperSnapshot,
  UpperTuning,
  UpperWhiteout,
} from './state-types.js';
export { JOURNAL_FORMAT, STATE_FORMAT, STATE_FORMAT_VERSION } from './state-format.js';
export { parseJournal } from './state-parse.js';

/**
 * The upper layer: files, whiteouts and the directories the overlay made, keyed by the lower's
 * target keys. Held in memory; with a store, every change is saved before it becomes visible:
 * appended to a journal (one record per change, one fsync per group of changes), which is folded
 * into a new state document once it outgrows the document.
 */
export class UpperState {
  readonly #cx: UpperContext;

  private constructor(cx: UpperContext) {
    this.#cx = cx;
  }

  static async open(root: string, store?: UpperStore, tuning: UpperTuning = {}): Promise<UpperState> {
    const cx = createContext(root, store, tuning);
    if (store) await load(cx, store);
    return new UpperState(cx);
  }

  /**
   * Immutable snapshots: each saved change replaces them (iterating one is safe across awaits,
   * and sees the state as it was when read).
   */
  get entries(): PMap<UpperEntry> {
    return this.#cx.live.entries;
  }

  get dirs(): PSet {
    return this.#cx.live.dirs;
  }

  /** Lower directories the overlay removed: the lower shows nothing at or below them. */
  get opaque(): PSet {
    return this.#cx.live.opaque;
  }

  /** The whole upper layer now (constant time). */
  snapshot(): UpperSnapshot {
    return layerSnapshot(this.#cx.live);
  }

  /** For a fork: its parent's upper layer as it was at the fork; undefined for an overlay that is no fork. */
  async base(): Promise<UpperSnapshot | undefined> {
    const cx = this.#cx;
    if (typeof cx.base === 'function') cx.base = await cx.base();
    return cx.base;
  }

  /**
   * A fork of this state, in memory: it starts with this state's layer and shares it (constant
   * time and memory); from then on each changes only its own maps.
   */
  forkInMemory(): UpperState {
    return new UpperState(forkInMemory(this.#cx));
  }

  /**
   * A fork of this state kept in the host directory `dir` (see UpperStore.fork): taken between two
   * saves, so it holds exactly the saved state. The maps are shared as in memory.
   */
  forkInto(dir: string): Promise<UpperState> {
    return forkInto(this.#cx, dir, (child) => new UpperState(child));
  }

  /** Replaces this state's layer with `other`'s (adopting a fork), saved as one new state document. */
  replaceWith(other: UpperState): Promise<void> {
    const cx = this.#cx;
    if (!cx.store) {
      // In memory: take the other's maps as they are (constant time; the checkpoint's paths cost the differences).
      const before = this.snapshot();
      adoptMaps(cx.live, other.snapshot(), other.#cx.live);
      const diff = layerChange(before, this.snapshot(), () => true);
      if (changesLayer(diff)) keepCheckpoint(cx, checkpointOf(stampOf(cx.nextId, cx.labels.at(-1)), changePaths(diff)), this.snapshot(), [], new Set());
      return Promise.resolve();
    }
    return this.apply({ replace: other.snapshot() });
  }

  /** The checkpoints kept, oldest first (see docs/history.md). */
  checkpoints(): Checkpoint[] {
    return this.#cx.history.map((c) => c.info);
  }

  /** The layer right after the change of checkpoint `id`; undefined when no such checkpoint is kept. */
  checkpoint(id: number): UpperSnapshot | undefined {
    return findCheckpoint(this.#cx.history, id)?.layer;
  }

  /** The label `label` gives changes now (the innermost), if any. */
  currentLabel(): CheckpointLabel | undefined {
    return this.#cx.labels.at(-1);
  }

  /**
   * Runs `fn`, labelling with `label` the checkpoint of every change applied (every `apply` call
   * made) until it settles. Nested calls: the innermost label wins.
   */
  async label<T>(label: CheckpointLabel, fn: () => Promise<T>): Promise<T> {
    const held = { ...label };
    this.#cx.labels.push(held);
    try {
      return await fn();
    } finally {
      const i = this.#cx.labels.lastIndexOf(held);
      if (i >= 0) this.#cx.labels.splice(i, 1);
    }
  }

  /** True when the upper holds a file, or made a directory, strictly below `key` (constant time). */
  hasDescendant(key: string): boolean {
    return this.#cx.live.below.has(key);
  }

  /** True when the upper holds a link anywhere (constant time). */
  get hasLinks(): boolean {
    return this.#cx.live.links > 0;
  }

  /** What the upper holds, as a quota counts it: the bytes of its files, and its files and links (constant time). */
  get usage(): { readonly bytes: number; readonly files: number } {
    const live = this.#cx.live;
    return { bytes: live.bytes, files: live.filesBelow.get('/') ?? 0 };
  }

  /** True when the upper holds a file (or a link) strictly below `key` (constant time). */
  hasFileBelow(key: string): boolean {
    return this.#cx.live.filesBelow.has(key);
  }

  /** True when the upper has an entry, or made or removed a directory, directly in `key` (constant time). */
  hasChild(key: string): boolean {
    return this.#cx.live.children.has(key);
  }

  get persistent(): boolean {
    return this.#cx.store !== undefined;
  }

  /**
   * Applies a change. With a store, changes arriving together are saved together (group commit:
   * one journal append and one fsync) and become visible only once saved; a failed save changes
   * nothing. `deferred`: saved without the fsync, which the next flushed save or `flush` makes
   * (a crash before then may lose the change, and any deferred one after it).
   */
  apply(given: UpperChange, options?: { readonly deferred?: boolean }): Promise<void> {
    const cx = this.#cx;
    const { store } = cx;
    const label = cx.labels.at(-1);
    const change = given.label !== undefined || label === undefined ? given : { ...given, label };
    if (!store) {
      for (const c of expandReplace(this.snapshot(), [change])) applyChange(cx, c, changesLayer(c) ? stampOf(cx.nextId, c.label) : undefined, new Set());
      return Promise.resolve();
    }
    const deferred = options?.deferred === true;
    return new Promise<void>((resolve, reject) => enqueue(this.#cx, store, { change, deferred, resolve, reject }));
  }

  /** Makes every deferred change saved so far durable. */
  flush(): Promise<void> {
    const cx = this.#cx;
    const store = cx.store;
    if (!store || !cx.unsynced) return Promise.resolve();
    return new Promise<void>((resolve, reject) =>
      enqueue(cx, store, { task: () => syncDeferred(cx, store).then(resolve, (err: unknown) => reject(toFsError(err, `cannot flush the overlay state in "${store.where}"`))) }),
    );
  }

  /**
   * Deletes every stored blob no entry refers to (e.g. left by a crash between two saves), and
   * folds the journal into a new state document.
   */
  sweep(): Promise<void> {
    // Queued like a change, so no save is writing a blob it has not yet referred to meanwhile.
    return this.#cx.store ? this.apply({ sweep: true }) : Promise.resolve();
  }
}
