import type { FsChangeEvent, FsObservation } from '../seam/index.js';

type Ledger = Map<string, FsObservation>;

/** How many recent changes are kept; an owner that has not been told for longer gets the general note. */
const LOG_LIMIT = 4096;
/** How many paths one note names. */
const NOTE_PATHS = 20;

interface Logged {
  readonly seq: number;
  readonly event: FsChangeEvent;
}

/**
 * What a change feed told the observation policy, and what each owner has been told of it: the
 * files an owner observed whose latest change it did not make, named once in its next tool result.
 */
export class ChangeNotes {
  #seq = 0;
  #overflowAt = -1;
  readonly #log: Logged[] = [];
  /** The last change each ledger was told about (or first observed after). */
  readonly #told = new WeakMap<Ledger, number>();
  readonly #subscriptions = new Set<() => void>();

  /** Reads `feed` until it ends or the returned function is called. */
  subscribe(feed: AsyncIterable<FsChangeEvent>): () => void {
    const iterator = feed[Symbol.asyncIterator]();
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      this.#subscriptions.delete(stop);
      void Promise.resolve(iterator.return?.()).catch(() => {});
    };
    this.#subscriptions.add(stop);
    void (async () => {
      try {
        for (let r = await iterator.next(); !r.done && !stopped; r = await iterator.next()) this.push(r.value);
      } catch {
        // A feed that failed may have lost changes: say so once.
        this.push({ kind: 'overflow', path: '/' });
      } finally {
        this.#subscriptions.delete(stop);
      }
    })();
    return stop;
  }

  /** Stops every subscription. */
  close(): void {
    for (const stop of [...this.#subscriptions]) stop();
  }

  push(event: FsChangeEvent): void {
    const seq = ++this.#seq;
    if (event.kind === 'overflow') {
      this.#overflowAt = seq;
      return;
    }
    if (event.kind !== 'write' && event.kind !== 'remove' && event.kind !== 'rename') return;
    this.#log.push({ seq, event });
    if (this.#log.length > LOG_LIMIT) this.#log.splice(0, this.#log.length - LOG_LIMIT);
  }

  /** A ledger that starts observing now cares only about changes from now on. */
  touch(ledger: Ledger): void {
    if (!this.#told.has(ledger)) this.#told.set(ledger, this.#seq);
  }

  /** The note for an owner's next result, once; undefined when there is nothing to tell. */
  take(ledger: Ledger | undefined, ownerId: string | undefined): string | undefined {
    if (ledger === undefined) return undefined;
    const since = this.#told.get(ledger) ?? this.#seq;
    this.#told.set(ledger, this.#seq);
    if (since === this.#seq || ledger.size === 0) return undefined;
    const oldest = this.#log[0]?.seq ?? this.#seq + 1;
    if (this.#overflowAt > since || oldest > since + 1) {
      return 'Note: changes made by other writers since your last call may have been missed; read files again before editing them.';
    }
    const changed = this.#changedSince(ledger, ownerId, since);
    if (changed.size === 0) return undefined;
    if (changed.size === 1) {
      const [path, what] = [...changed][0]!;
      return `Note: ${path}, which you read, ${what} by another writer since; read it again before editing it.`;
    }
    const named = [...changed].slice(0, NOTE_PATHS).map(([path, what]) => `${path} (${what.replace(/^was /, '')})`);
    const more = changed.size > NOTE_PATHS ? ` and ${changed.size - NOTE_PATHS} more` : '';
    return `Note: files you read were changed by another writer since: ${named.join(', ')}${more}; read them again before editing them.`;
  }

  /** Path → what happened, for each observed path whose latest change since `since` the ledger does not reflect. */
  #changedSince(ledger: Ledger, ownerId: string | undefined, since: number): Map<string, string> {
    const decided = new Set<string>();
    const changed = new Map<string, string>();
    for (let i = this.#log.length - 1; i >= 0 && this.#log[i]!.seq > since; i--) {
      const { event } = this.#log[i]!;
      const sides: [string, 'gone' | 'here'][] =
        event.kind === 'rename' ? [[event.path, 'here'], [event.from!, 'gone']] : [[event.path, event.kind === 'remove' ? 'gone' : 'here']];
      for (const [path, side] of sides) {
        // Only the latest change of a path counts: the owner may have read it again since.
        if (decided.has(path)) continue;
        decided.add(path);
        const seen = ledger.get(path);
        if (seen === undefined || (ownerId !== undefined && event.owner === ownerId)) continue;
        if (side === 'gone') {
          if (seen.kind === 'absent') continue;
          changed.set(path, event.kind === 'rename' ? `was moved to ${event.path}` : 'was removed');
        } else {
          if (seen.kind === 'present' && event.version !== undefined && seen.version === event.version) continue;
          changed.set(path, 'was changed');
        }
      }
    }
    return new Map([...changed].reverse());
  }
}
