import { FsError, toFsError } from '../../seam/index.js';
import type { UpperStore } from './store.js';
import { createContext, type UpperContext } from './state-context.js';
import { journalHeader } from './state-format.js';
import { adoptMaps, layerSnapshot } from './state-index.js';
import { compact, enqueue, syncDeferred } from './state-save.js';

/** A new context sharing `cx`'s layer and indexes, with `cx`'s layer as its fork base. */
function forkContext(cx: UpperContext, store: UpperStore | undefined): UpperContext {
  const child = createContext(cx.root, store, { compactRatio: cx.compactRatio, compactMinBytes: cx.compactMinBytes, keepCheckpoints: cx.keep, keepCheckpointBytes: cx.keepBytes });
  adoptMaps(child.live, layerSnapshot(cx.live), cx.live);
  child.base = layerSnapshot(cx.live);
  // The fork starts with its parent's checkpoints (at most `keep` of them, shared as they are).
  child.history = [...cx.history];
  child.nextId = cx.nextId;
  return child;
}

/** A fork in memory: constant time and memory; from then on each side changes only its own maps. */
export function forkInMemory(cx: UpperContext): UpperContext {
  return forkContext(cx, undefined);
}

/**
 * A fork kept in the host directory `dir` (see UpperStore.fork), taken between two saves so it
 * holds exactly the saved state; `wrap` makes the fork's public face from its context.
 */
export function forkInto<T>(cx: UpperContext, dir: string, wrap: (child: UpperContext) => T): Promise<T> {
  const store = cx.store;
  if (store?.fork === undefined) {
    return Promise.reject(new FsError('FS_INVALID_ARGUMENT', 'only an overlay kept in a state directory forks into a state directory'));
  }
  return new Promise<T>((resolve, reject) => {
    enqueue(cx, store, {
      task: async () => {
        try {
          // A fork continues the saved journal: a state whose journal is not in place is saved anew first.
          // So does a fork's journal that continues its own fork base: a fork's base stands alone.
          if (cx.journalEnd === undefined || cx.continues) await compact(cx, store, [], false);
          // The fork base shares the journal up to here: every record in it on disk first.
          await syncDeferred(cx, store);
          if (cx.journalEnd === undefined) throw new FsError('FS_IO_ERROR', `cannot fork the overlay state in "${store.where}": its journal could not be written`);
          const header = journalHeader(cx.root, cx.generation, true);
          const childStore = await store.fork!(dir, { journalEnd: cx.journalEnd, blobs: [...cx.refs.keys()], journal: header });
          const child = forkContext(cx, childStore);
          child.refs = new Map(cx.refs);
          child.pinned = new Set(cx.refs.keys());
          child.generation = cx.generation;
          child.snapshotBytes = cx.snapshotBytes;
          child.journalEnd = header.byteLength;
          child.continues = true;
          resolve(wrap(child));
        } catch (err) {
          reject(toFsError(err, `cannot fork the overlay state in "${store.where}" into "${dir}"`));
        }
      },
    });
  });
}
