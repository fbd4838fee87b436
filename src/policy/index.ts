import { FsError, FsTargetKey, FsVersion, type FsChangeEvent, type FsObservation, type FsTarget, type FsWatchOptions, type FsWriteIntent } from '../seam/index.js';
import { ChangeNotes } from './feed.js';
import type { EditGuard, HarnessContext, HarnessPluginObject, Owner, RenameGuard } from '../harness/index.js';

/** JSON form of the policy's state, for `restore` in a resumed session. */
export interface ObservationState {
  readonly format: 'dsh-fs/observations';
  readonly version: 1;
  /** owner id → targetKey → observation. */
  readonly owners: Readonly<Record<string, Readonly<Record<string, ObservationRecord>>>>;
}

export type ObservationRecord = { readonly kind: 'present'; readonly version: string } | { readonly kind: 'absent' };

export interface ObservationPolicyOptions {
  /**
   * A stable string id for an object owner (e.g. `(session) => session.id`). Owners with the same
   * id share observations, and only owners with an id appear in `exportState()`. String owners
   * are their own id. Without this option object owners are kept by identity and not exported.
   */
  readonly ownerId?: (owner: object) => string | undefined;
  /**
   * Subscribe to `ctx.fs.watch` (with these options, when an object) when applied: an owner is
   * then told, in its next tool result, that a file it observed was changed by another writer
   * (see docs/feed.md). FS_UNSUPPORTED when the filesystem cannot watch. Default false.
   */
  readonly watch?: boolean | Omit<FsWatchOptions, 'bufferSize'>;
}

export interface ObservationPolicy extends HarnessPluginObject {
  readonly name: 'observation-policy';
  /** Installs the four deciders (write, edit, remove, rename) and the recorder on `ctx.events`. */
  apply(ctx: HarnessContext): void;
  /** What `owner` last observed of `target`: undefined when unseen. */
  observation(owner: Owner, target: FsTarget | string): FsObservation | undefined;
  /** The decision for a write (no I/O). */
  writeIntent(target: FsTarget, owner: Owner | undefined): FsWriteIntent;
  /** The decision for an edit (no I/O); throws FS_NOT_OBSERVED or FS_NOT_FOUND. */
  editIntent(target: FsTarget, owner: Owner | undefined): EditGuard;
  /** The decision for a delete (no I/O): the observed version; throws FS_NOT_OBSERVED or FS_NOT_FOUND. */
  removeIntent(target: FsTarget, owner: Owner | undefined): FsWriteIntent;
  /**
   * The decision for a move (no I/O): the source is guarded by its observed version when there
   * is one (an unread source may move); the destination may be replaced only at the version
   * this owner observed, otherwise it must not exist.
   */
  renameIntent(from: FsTarget, to: FsTarget, owner: Owner | undefined): RenameGuard;
  /** Records an observation (what the `fs/observed` listener does). */
  record(target: FsTarget, observation: FsObservation, owner: Owner | undefined): void;
  /** Forgets one target, or everything, that `owner` observed (e.g. after context compaction). */
  forget(owner: Owner, target?: FsTarget | string): void;
  /** JSON-serialisable state of every owner that has a string id, or of one owner. */
  exportState(owner?: Owner): ObservationState;
  /** Loads exported state; each owner in it replaces that owner's observations. Others are kept. */
  restore(state: unknown): void;
  /**
   * Reads a change feed (e.g. `fs.watch()`) until it ends or the returned function is called: the
   * changes it tells of become notes in the owners' next tool results (see `note`).
   */
  subscribe(feed: AsyncIterable<FsChangeEvent>): () => void;
  /**
   * The note for `owner`'s next tool result, once: the files it observed whose latest change it
   * did not make (a later read of the same version clears it). Undefined when there is none.
   */
  note(owner: Owner): string | undefined;
  /** Stops every subscription (those made by `watch` too). */
  close(): void;
}

type Ledger = Map<string, FsObservation>;

/**
 * The observation policy. Per owner and target it knows unseen, absent, or present at
 * a version, and turns that into the guard of each mutation. It does no I/O and owns no storage:
 * the provider does the compare-and-swap under its own lock.
 */
export function createObservationPolicy(options: ObservationPolicyOptions = {}): ObservationPolicy {
  const byId = new Map<string, Ledger>();
  const byIdentity = new WeakMap<object, Ledger>();
  const ownerId = options.ownerId;
  const changes = new ChangeNotes();

  const idOf = (owner: Owner): string | undefined => {
    if (typeof owner === 'string') return owner;
    const id = ownerId?.(owner);
    if (id !== undefined && (typeof id !== 'string' || id === '')) {
      throw new FsError('FS_INVALID_ARGUMENT', `ownerId must return a non-empty string or undefined, got ${JSON.stringify(id)}`);
    }
    return id;
  };

  const isOwner = (owner: unknown): owner is Owner =>
    (typeof owner === 'string' && owner !== '') || (typeof owner === 'object' && owner !== null) || typeof owner === 'function';

  function ledger(owner: Owner, create: true): Ledger;
  function ledger(owner: Owner, create: false): Ledger | undefined;
  function ledger(owner: Owner, create: boolean): Ledger | undefined {
    const id = idOf(owner);
    let found = id === undefined ? byIdentity.get(owner as object) : byId.get(id);
    if (found === undefined && create) {
      found = new Map();
      if (id === undefined) byIdentity.set(owner as object, found);
      else byId.set(id, found);
    }
    return found;
  }

  const keyOf = (target: FsTarget | string): string => (typeof target === 'string' ? target : target.targetKey);

  const policy: ObservationPolicy = {
    name: 'observation-policy',

    apply(ctx) {
      const watch = options.watch === undefined || options.watch === false ? undefined : options.watch;
      if (watch !== undefined && typeof ctx.fs.watch !== 'function') {
        throw new FsError('FS_UNSUPPORTED', 'observation-policy: this filesystem cannot watch for changes (no fs.watch)');
      }
      // All or none: a clash on any event removes the deciders already installed.
      const installed: (() => void)[] = [];
      try {
        installed.push(ctx.events.decide('fs/write-intent', (target, owner) => policy.writeIntent(target, owner)));
        installed.push(ctx.events.decide('fs/edit-intent', (target, owner) => policy.editIntent(target, owner)));
        installed.push(ctx.events.decide('fs/remove-intent', (target, owner) => policy.removeIntent(target, owner)));
        installed.push(ctx.events.decide('fs/rename-intent', (from, to, owner) => policy.renameIntent(from, to, owner)));
      } catch (err) {
        for (const remove of installed) remove();
        throw err;
      }
      ctx.events.on('fs/observed', (target, observation, owner) => policy.record(target, observation, owner));
      ctx.tools.addNote((owner) => policy.note(owner));
      if (watch !== undefined) policy.subscribe(ctx.fs.watch!(watch === true ? {} : watch));
    },

    observation(owner, target) {
      if (!isOwner(owner)) return undefined;
      return ledger(owner, false)?.get(keyOf(target));
    },

    writeIntent(target, owner) {
      const seen = isOwner(owner) ? ledger(owner, false)?.get(target.targetKey) : undefined;
      if (seen?.kind === 'present') return { kind: 'replaceIfVersion', version: seen.version };
      return { kind: 'createIfAbsent' };
    },

    editIntent(target, owner) {
      const seen = isOwner(owner) ? ledger(owner, false)?.get(target.targetKey) : undefined;
      if (seen === undefined) {
        throw new FsError('FS_NOT_OBSERVED', `cannot edit "${target.displayPath}": it has not been read in this session`);
      }
      if (seen.kind === 'absent') {
        throw new FsError(
          'FS_NOT_FOUND',
          `cannot edit "${target.displayPath}": not found when this session last read it; read it again, or create it with write`,
        );
      }
      return { version: seen.version };
    },

    removeIntent(target, owner) {
      const seen = isOwner(owner) ? ledger(owner, false)?.get(target.targetKey) : undefined;
      if (seen === undefined) {
        throw new FsError('FS_NOT_OBSERVED', `cannot delete "${target.displayPath}": it has not been read in this session`);
      }
      if (seen.kind === 'absent') {
        throw new FsError('FS_NOT_FOUND', `cannot delete "${target.displayPath}": not found when this session last read it`);
      }
      return { kind: 'replaceIfVersion', version: seen.version };
    },

    renameIntent(from, to, owner) {
      const l = isOwner(owner) ? ledger(owner, false) : undefined;
      const source = l?.get(from.targetKey);
      const dest = l?.get(to.targetKey);
      return {
        ...(source?.kind === 'present' ? { expect: source.version } : {}),
        // Unseen or absent: the destination must be empty; the provider refuses otherwise, and the tool says "read it first".
        replace: dest?.kind === 'present' ? dest.version : false,
      };
    },

    record(target, observation, owner) {
      // Without an owner there is nobody to authorise later, so nothing is kept.
      if (!isOwner(owner)) return;
      const entry: FsObservation =
        observation.kind === 'present' ? { kind: 'present', version: observation.version } : { kind: 'absent' };
      const l = ledger(owner, true);
      changes.touch(l);
      l.set(target.targetKey, entry);
    },

    subscribe: (feed) => changes.subscribe(feed),

    note(owner) {
      if (!isOwner(owner)) return undefined;
      return changes.take(ledger(owner, false), idOf(owner));
    },

    close: () => changes.close(),

    forget(owner, target) {
      if (!isOwner(owner)) return;
      const found = ledger(owner, false);
      if (found === undefined) return;
      if (target === undefined) found.clear();
      else found.delete(keyOf(target));
    },

    exportState(owner) {
      if (owner === undefined) return exportLedgers(byId, [...byId.keys()]);
      if (!isOwner(owner)) throw new FsError('FS_INVALID_ARGUMENT', 'exportState(owner): owner must be an object or a non-empty string');
      const id = idOf(owner);
      if (id === undefined) {
        throw new FsError('FS_INVALID_ARGUMENT', 'this owner has no string id, so its state cannot be exported; pass ownerId to createObservationPolicy');
      }
      return exportLedgers(byId, [id]);
    },

    restore(state) {
      const parsed = parseState(state);
      for (const [id, entries] of parsed) byId.set(id, entries);
    },
  };
  return policy;
}

/** The state of the owners `ids` (in id order; those with no observation left out). */
function exportLedgers(byId: ReadonlyMap<string, Ledger>, ids: readonly string[]): ObservationState {
  const owners: Record<string, Record<string, ObservationRecord>> = {};
  for (const id of [...ids].sort()) {
    const l = byId.get(id);
    if (l === undefined || l.size === 0) continue;
    const out: Record<string, ObservationRecord> = {};
    for (const [key, o] of [...l].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      out[key] = o.kind === 'present' ? { kind: 'present', version: o.version } : { kind: 'absent' };
    }
    owners[id] = out;
  }
  return { format: 'dsh-fs/observations', version: 1, owners };
}

/** Validates the whole state before anything is loaded, so a bad state changes nothing. */
function parseState(state: unknown): Map<string, Ledger> {
  const bad = (why: string) => new FsError('FS_INVALID_ARGUMENT', `cannot restore observation state: ${why}`);
  if (typeof state !== 'object' || state === null) throw bad('expected an object from exportState()');
  const s = state as Partial<Record<string, unknown>>;
  if (s.format !== 'dsh-fs/observations' || s.version !== 1) throw bad('unknown format (expected format "dsh-fs/observations", version 1)');
  if (typeof s.owners !== 'object' || s.owners === null || Array.isArray(s.owners)) throw bad('"owners" must be an object');
  const out = new Map<string, Ledger>();
  for (const [id, entries] of Object.entries(s.owners)) {
    if (id === '') throw bad('an owner id is empty');
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) throw bad(`owner "${id}" must map target keys to observations`);
    const l: Ledger = new Map();
    for (const [key, o] of Object.entries(entries as Record<string, unknown>)) {
      const rec = o as Partial<{ kind: unknown; version: unknown }> | null;
      if (key === '') throw bad(`owner "${id}" has an empty target key`);
      if (rec?.kind === 'absent') l.set(FsTargetKey(key), { kind: 'absent' });
      else if (rec?.kind === 'present' && typeof rec.version === 'string' && rec.version !== '') {
        l.set(FsTargetKey(key), { kind: 'present', version: FsVersion(rec.version) });
      } else throw bad(`owner "${id}", target "${key}": expected {kind:"present",version} or {kind:"absent"}`);
    }
    out.set(id, l);
  }
  return out;
}
