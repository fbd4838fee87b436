import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FsError, toFsError } from '../../seam/index.js';
import { FORK_FILE } from './store.js';

/**
 * The state directory a fork kept in `dir` was forked from (as `fork.json` records it), or
 * undefined when the state in `dir` is no fork. The parent may have moved or gone since.
 */
export async function forkParentDir(dir: string): Promise<string | undefined> {
  let raw: string;
  try {
    raw = await readFile(join(dir, FORK_FILE), 'utf8');
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return undefined;
    throw toFsError(err, `cannot read the fork record in "${dir}"`);
  }
  let parent: unknown;
  try {
    parent = (JSON.parse(raw) as { parent?: unknown }).parent;
  } catch {
    parent = undefined;
  }
  if (typeof parent !== 'string' || parent === '') throw new FsError('FS_IO_ERROR', `the overlay state in "${dir}" is not valid: bad ${FORK_FILE}`);
  return parent;
}
