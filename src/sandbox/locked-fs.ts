import type { OverlayFileSystem } from '../backends/overlay/index.js';
import { registerOverlayView } from '../backends/overlay/compose.js';
import type { FsTarget, FsWalkEntry, FsWalkOptions } from '../seam/index.js';
import type { LockedOverlay } from './locked.js';

type Async = {
  [K in keyof OverlayFileSystem]-?: NonNullable<OverlayFileSystem[K]> extends (...args: never[]) => Promise<unknown> ? K : never;
}[keyof OverlayFileSystem];

const ASYNC = ['resolve', 'stat', 'readText', 'streamText', 'readBytes', 'streamBytes', 'listDir', 'writeText', 'writeBytes', 'editText', 'remove', 'mkdir', 'rmdir', 'rename', 'changes', 'diff', 'fork', 'adopt', 'commit', 'discard', 'rewind', 'label'] as const satisfies readonly Async[];
/** Present on the overlay only in some setups: passed on where the first overlay has them. */
const OPTIONAL = ['writeBytesFrom', 'flush', 'applyChanges', 'searchCandidates', 'searchReads', 'setExecutable', 'symlink', 'readlink', 'removeLink', 'renameLink'] as const satisfies readonly Async[];
// Fails to compile when the overlay gains an operation not listed above (it would bypass the lock).
type Unlisted = Exclude<Async, (typeof ASYNC)[number] | (typeof OPTIONAL)[number]>;
const listed: [Unlisted] extends [never] ? true : Unlisted = true;
void listed;

/**
 * An OverlayFileSystem whose every operation runs through `locked.use`: under the state's lock,
 * on the overlay as other processes left it. `walk` is read whole under the lock. What cannot
 * wait for a lock (`checkpoints()`, `lower`, `provider`, `recovered`) is the current overlay's,
 * as of the last operation.
 */
export function lockedFs(locked: LockedOverlay, first: OverlayFileSystem): OverlayFileSystem {
  const now = () => locked.current() ?? first;
  const through = (name: Async) => (...args: unknown[]) => locked.use((o) => (o[name] as (...a: unknown[]) => Promise<unknown>).apply(o, args));
  const fs = {
    cwd: first.cwd,
    ...(first.root === undefined ? {} : { root: first.root }),
    get lower() {
      return now().lower;
    },
    get provider() {
      return now().provider;
    },
    get recovered() {
      return now().recovered;
    },
    contains: (parent: FsTarget, child: FsTarget) => now().contains(parent, child),
    childKey: (parent: FsTarget, name: string) => now().childKey(parent, name),
    checkpoints: () => now().checkpoints(),
    ...(first.watch === undefined ? {} : { watch: (...args: Parameters<NonNullable<OverlayFileSystem['watch']>>) => now().watch!(...args) }),
    ...Object.fromEntries([...ASYNC, ...OPTIONAL.filter((name) => first[name] !== undefined)].map((name) => [name, through(name)])),
    async *walk(target: FsTarget, options?: FsWalkOptions) {
      yield* await locked.use(async (o) => {
        const all: FsWalkEntry[] = [];
        for await (const entry of o.walk(target, options)) all.push(entry);
        return all;
      });
    },
  };
  // Review, merge and runs reach the overlay's storage through the view (outside the lock, as before).
  registerOverlayView(fs as unknown as OverlayFileSystem, now);
  return fs as unknown as OverlayFileSystem;
}
