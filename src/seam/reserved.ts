import { FsError } from './errors.js';
import type { FsProvider } from './types.js';

/**
 * Refuses a path (or a target key read as one) that names, below the root, a name the provider
 * reserves. `names` tests one name.
 */
export type ReservedCheck = ((path: string, shown: string) => void) & { readonly names: RegExp };

/**
 * The provider's reserved names as a check, or undefined when it declares none. A name is
 * reserved when the provider keeps files of that name for itself (the local provider's temp
 * files): a caller that could name one could create a file the provider later takes for its own.
 * Only segments below `root` count, so a root that happens to carry such a name still works.
 */
export function reservedNameCheck(provider: FsProvider, root: string | undefined): ReservedCheck | undefined {
  const declared = provider.reservedNames;
  if (declared === undefined) return undefined;
  if (!(declared instanceof RegExp)) {
    throw new FsError('FS_INVALID_ARGUMENT', "the provider's reservedNames must be a RegExp");
  }
  // A global or sticky RegExp carries lastIndex from one test to the next: use a copy without them.
  const pattern = new RegExp(declared.source, declared.flags.replace(/[gy]/g, ''));
  const base = root === undefined || root === '/' ? '/' : `${root}/`;
  const check = (path: string, shown: string): void => {
    if (!path.startsWith(base)) return;
    for (const segment of path.slice(base.length).split('/')) {
      if (pattern.test(segment)) {
        throw new FsError(
          'FS_INVALID_ARGUMENT',
          `"${shown}": the name "${segment}" is reserved by the storage for its own files; choose another name`,
        );
      }
    }
  };
  return Object.assign(check, { names: pattern });
}
