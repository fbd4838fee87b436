import type { FsOpOptions } from '../../seam/index.js';
import { settleAll } from '../../seam/settle.js';
import { TREE_LOCK } from './core.js';
import type { ReviewContext } from './review-context.js';
import { picks, selectionRoots, within } from './review-select.js';
import { allChanges } from './review-status.js';

export async function discard(ctx: ReviewContext, paths?: readonly string[], options: FsOpOptions = {}): Promise<void> {
  const { state, lock } = ctx;
  const roots = await selectionRoots(ctx, paths, options.signal);
  // A rename goes back as a whole: both its names are discarded.
  const grown = roots && [...roots];
  if (grown) for (const c of allChanges(state)) if (c.from !== undefined && picks(roots, c)) grown.push(c.path, c.from);
  const selected = (key: string) => within(grown, key);
  const keys = [...state.entries.keys()].filter(selected);
  // Concurrently, so a persistent upper saves them as one state document.
  await settleAll(keys.map((key) => lock.run(key, () => state.apply({ entries: [[key, undefined]] }))));
  await lock.run(TREE_LOCK, async () => {
    // Directories the overlay made or removed at or beneath the selection go too; those above it stay.
    const drop = [...state.dirs].filter((dir) => selected(dir) && !state.hasFileBelow(dir));
    const dropOpaque = [...state.opaque].filter(selected);
    if (drop.length > 0 || dropOpaque.length > 0) await state.apply({ dropDirs: drop, dropOpaque });
  });
  if (paths === undefined) await state.sweep();
}
