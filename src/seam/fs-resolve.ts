import { FsError, throwIfAborted } from './errors.js';
import { call } from './fs-call.js';
import type { FsContext } from './fs-context.js';
import { childKeyOf, resolveNoFollow } from './links.js';
import { canonicalPath, isWithin } from './path.js';
import type { FileSystem, FsResolveOptions, FsTarget, FsTargetKey } from './types.js';

/** P1 and the lexical part of P2: a path made a target, confined to the root; and containment. */
export function createResolveOps(ctx: FsContext): Pick<FileSystem, 'resolve' | 'contains' | 'childKey'> {
  const { provider, root, cwd, reserved } = ctx;
  return {
    async resolve(path: string, opts?: FsResolveOptions): Promise<FsTarget> {
      const signal = opts?.signal;
      throwIfAborted(signal, 'cannot resolve path');
      const abs = canonicalPath(path, opts?.cwd === undefined ? cwd : canonicalPath(opts.cwd, cwd));
      if (root !== undefined && !isWithin(root, abs)) {
        throw new FsError('FS_OUTSIDE_ROOT', `path "${path}" resolves to "${abs}", which is outside the root "${root}"`);
      }
      reserved?.(abs, path);
      const noFollow = opts?.noFollow === true;
      const target = await call(`cannot resolve "${abs}"`, signal, () => (noFollow ? resolveNoFollow(provider, abs, signal) : provider.resolve(abs, { signal })));
      throwIfAborted(signal, `cannot resolve "${abs}"`); // a provider may finish without looking at the signal
      ctx.checkTarget(target);
      return target;
    },

    contains(parent: FsTarget, child: FsTarget): boolean {
      ctx.checkTarget(parent);
      ctx.checkTarget(child);
      return provider.contains ? provider.contains(parent, child) : isWithin(parent.targetKey, child.targetKey);
    },

    childKey(parent: FsTarget, name: string): FsTargetKey {
      ctx.checkTarget(parent);
      return childKeyOf(provider)(parent, name);
    },
  };
}
