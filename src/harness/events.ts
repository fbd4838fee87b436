import { FsError, toFsError } from '../seam/index.js';
import { safeJson as describe } from '../seam/path.js';
import type { FsObservation, FsTarget, FsVersion, FsWriteIntent } from '../seam/index.js';

/**
 * Who performs a tool call: an agent session object (compared by identity) or a string id.
 * Observations and decisions are per owner.
 */
export type Owner = object | string;

/** The guard an edit runs under: the version the owner last observed. */
export interface EditGuard {
  readonly version: FsVersion;
}

type MaybePromise<T> = T | Promise<T>;

/** Chooses the intent of a write: undefined means unconditional. Throw an FsError to refuse. */
export type WriteIntentDecider = (target: FsTarget, owner: Owner | undefined) => MaybePromise<FsWriteIntent | undefined>;
/** Chooses the guard of an edit: undefined means unguarded. Throw an FsError to refuse. */
export type EditIntentDecider = (target: FsTarget, owner: Owner | undefined) => MaybePromise<EditGuard | undefined>;
/** Chooses the guard of a removal (a `replaceIfVersion` intent): undefined means unconditional. Throw an FsError to refuse. */
export type RemoveIntentDecider = (target: FsTarget, owner: Owner | undefined) => MaybePromise<FsWriteIntent | undefined>;

/** The guards of a move: the source's version (`expect`) and what the destination may hold (`replace`). */
export interface RenameGuard {
  readonly expect?: FsVersion;
  readonly replace: boolean | FsVersion;
}
/** Chooses the guards of a move: undefined means unconditional (a file at the destination is replaced). Throw an FsError to refuse. */
export type RenameIntentDecider = (from: FsTarget, to: FsTarget, owner: Owner | undefined) => MaybePromise<RenameGuard | undefined>;
/** Records what an owner has seen. Must not affect the call that emitted it. */
export type ObservedListener = (target: FsTarget, observation: FsObservation, owner: Owner | undefined) => MaybePromise<void>;

export interface FsDeciders {
  'fs/write-intent': WriteIntentDecider;
  'fs/edit-intent': EditIntentDecider;
  'fs/remove-intent': RemoveIntentDecider;
  'fs/rename-intent': RenameIntentDecider;
}

export type FsDecisionEvent = keyof FsDeciders;
export type FsEventName = FsDecisionEvent | 'fs/observed';

/** Where a failing `fs/observed` listener is reported; the emitting call never fails because of it. */
export type ListenerErrorHandler = (error: unknown, info: { readonly event: 'fs/observed'; readonly target: FsTarget }) => void;

/**
 * The `fs/*` event gate. The `*-intent` events (write, edit, remove, rename) are single-slot decisions: a
 * second decider is refused rather than silently replacing the first. `fs/observed` is a
 * broadcast to any number of recorders.
 */
export interface FsEventGate {
  /** Installs the decider for `event`; returns a function that removes it. */
  decide<E extends FsDecisionEvent>(event: E, decider: FsDeciders[E]): () => void;
  hasDecider(event: FsDecisionEvent): boolean;
  /** Adds an `fs/observed` listener; returns a function that removes it. */
  on(event: 'fs/observed', listener: ObservedListener): () => void;
  /** Asks the write decider; undefined (no decider, or its answer) means unconditional. */
  writeIntent(target: FsTarget, owner: Owner | undefined): Promise<FsWriteIntent | undefined>;
  /** Asks the edit decider; undefined (no decider, or its answer) means unguarded. */
  editIntent(target: FsTarget, owner: Owner | undefined): Promise<EditGuard | undefined>;
  /** Asks the remove decider; undefined (no decider, or its answer) means unconditional. */
  removeIntent(target: FsTarget, owner: Owner | undefined): Promise<FsWriteIntent | undefined>;
  /** Asks the rename decider; undefined means unconditional: the source unguarded, a destination file replaced. */
  renameIntent(from: FsTarget, to: FsTarget, owner: Owner | undefined): Promise<RenameGuard | undefined>;
  /** Tells every listener; listener failures go to the error handler, never to the caller. */
  observed(target: FsTarget, observation: FsObservation, owner: Owner | undefined): void;
}

export interface FsEventGateOptions {
  /** Default: `console.warn`. */
  readonly onListenerError?: ListenerErrorHandler;
}

const DECISION_EVENTS: readonly FsDecisionEvent[] = ['fs/write-intent', 'fs/edit-intent', 'fs/remove-intent', 'fs/rename-intent'];
const VERBS: Record<FsDecisionEvent, string> = {
  'fs/write-intent': 'write',
  'fs/edit-intent': 'edit',
  'fs/remove-intent': 'delete',
  'fs/rename-intent': 'move',
};

export function createEventGate(options: FsEventGateOptions = {}): FsEventGate {
  const deciders: { [E in FsDecisionEvent]?: FsDeciders[E] } = {};
  const listeners: ObservedListener[] = [];
  const onListenerError = options.onListenerError ?? defaultListenerError;

  const report = (error: unknown, target: FsTarget) => {
    try {
      onListenerError(error, { event: 'fs/observed', target });
    } catch (handlerError) {
      // The handler itself failed; the committed call must still succeed.
      defaultListenerError(handlerError, { event: 'fs/observed', target });
    }
  };

  async function ask<E extends FsDecisionEvent>(event: E, target: FsTarget, owner: Owner | undefined, to?: FsTarget) {
    const decider = deciders[event] as ((...args: unknown[]) => unknown) | undefined;
    if (decider === undefined) return undefined;
    try {
      return await (to === undefined ? decider(target, owner) : decider(target, to, owner));
    } catch (err) {
      throw toFsError(err, `cannot ${VERBS[event]} "${target.displayPath}": the ${event} decider failed`);
    }
  }

  const validIntent = (intent: unknown, event: FsDecisionEvent): FsWriteIntent => {
    const i = intent as Partial<{ kind: unknown; version: unknown }> | null;
    if (typeof i === 'object' && i !== null) {
      if (i.kind === 'createIfAbsent') return { kind: 'createIfAbsent' };
      if (i.kind === 'replaceIfVersion' && typeof i.version === 'string' && i.version !== '') {
        return { kind: 'replaceIfVersion', version: i.version as FsVersion };
      }
    }
    throw new FsError('FS_INVALID_ARGUMENT', `the ${event} decider returned an invalid intent: ${describe(intent)}`);
  };

  return {
    decide(event, decider) {
      if (!DECISION_EVENTS.includes(event)) {
        throw new FsError('FS_INVALID_ARGUMENT', `unknown decision event ${JSON.stringify(event)}; expected one of ${DECISION_EVENTS.join(', ')}`);
      }
      if (typeof decider !== 'function') throw new FsError('FS_INVALID_ARGUMENT', `the ${event} decider must be a function`);
      if (deciders[event] !== undefined) {
        throw new FsError(
          'FS_INVALID_ARGUMENT',
          `${event} already has a decider; remove it (with the function decide() returned) before installing another`,
        );
      }
      (deciders as Record<string, unknown>)[event] = decider;
      return () => {
        if (deciders[event] === decider) delete deciders[event];
      };
    },

    hasDecider: (event) => deciders[event] !== undefined,

    on(event, listener) {
      if (event !== 'fs/observed') {
        throw new FsError('FS_INVALID_ARGUMENT', `on() accepts only "fs/observed"; use decide() for ${JSON.stringify(event)}`);
      }
      if (typeof listener !== 'function') throw new FsError('FS_INVALID_ARGUMENT', 'an fs/observed listener must be a function');
      const entry: ObservedListener = (...args) => listener(...args);
      listeners.push(entry);
      return () => {
        const i = listeners.indexOf(entry);
        if (i !== -1) listeners.splice(i, 1);
      };
    },

    async writeIntent(target, owner) {
      const intent = await ask('fs/write-intent', target, owner);
      return intent === undefined ? undefined : validIntent(intent, 'fs/write-intent');
    },

    async removeIntent(target, owner) {
      const intent = await ask('fs/remove-intent', target, owner);
      if (intent === undefined) return undefined;
      const valid = validIntent(intent, 'fs/remove-intent');
      // Creating is no way to remove.
      if (valid.kind !== 'replaceIfVersion') throw new FsError('FS_INVALID_ARGUMENT', `the fs/remove-intent decider returned an invalid intent: ${describe(intent)}`);
      return valid;
    },

    async renameIntent(from, to, owner) {
      const guard = await ask('fs/rename-intent', from, owner, to);
      if (guard === undefined) return undefined;
      const g = guard as Partial<{ expect: unknown; replace: unknown }> | null;
      const versionOk = (v: unknown) => typeof v === 'string' && v !== '';
      if (
        typeof g === 'object' &&
        g !== null &&
        (g.expect === undefined || versionOk(g.expect)) &&
        (typeof g.replace === 'boolean' || versionOk(g.replace))
      ) {
        return { ...(g.expect === undefined ? {} : { expect: g.expect as FsVersion }), replace: g.replace as boolean | FsVersion };
      }
      throw new FsError('FS_INVALID_ARGUMENT', `the fs/rename-intent decider returned an invalid guard: ${describe(guard)}`);
    },

    async editIntent(target, owner) {
      const guard = await ask('fs/edit-intent', target, owner);
      if (guard === undefined) return undefined;
      const g = guard as Partial<{ version: unknown }> | null;
      if (typeof g === 'object' && g !== null && typeof g.version === 'string' && g.version !== '') {
        return { version: g.version as FsVersion };
      }
      throw new FsError('FS_INVALID_ARGUMENT', `the fs/edit-intent decider returned an invalid guard: ${describe(guard)}`);
    },

    observed(target, observation, owner) {
      const valid =
        observation?.kind === 'absent' ||
        (observation?.kind === 'present' && typeof observation.version === 'string' && observation.version !== '');
      if (!valid) throw new FsError('FS_INVALID_ARGUMENT', `invalid observation ${describe(observation)}`);
      // A snapshot, so a listener that unsubscribes during the emit does not skip its neighbour.
      for (const listener of [...listeners]) {
        try {
          const result = listener(target, observation, owner);
          if (isThenable(result)) result.then(undefined, (err: unknown) => report(err, target));
        } catch (err) {
          report(err, target);
        }
      }
    },
  };
}

function defaultListenerError(error: unknown, info: { event: string; target: FsTarget }): void {
  const detail = error instanceof Error ? error.message : String(error);
  console.warn(`dsh-fs: an ${info.event} listener failed for "${info.target.displayPath}" (ignored): ${detail}`);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
