import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seamPerCall as kitSeamPerCall } from '../../src/conformance/index.js';
import { FS_CALLS } from '../../src/conformance/harness.js';
import { createFs, createHarness, type FileSystem, type FsProvider, type HarnessContext, type HarnessPlugin } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { fsTools } from '../../src/tools/index.js';

/** A fresh temp directory (canonical), removed by `cleanup`. */
export async function tempDir(label: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), `dsh-fs-rel-${label}-`)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The harness an agent runtime builds: the observation policy and the read/write/edit tools.
 * `listenerErrors` collects failures of fs/observed listeners (the policy's recorder), which the
 * gate would otherwise only log.
 */
export function agentHarness(
  fs: FileSystem,
  cwd: string,
  extra: readonly HarnessPlugin[] = [],
): HarnessContext & { readonly listenerErrors: unknown[] } {
  const listenerErrors: unknown[] = [];
  const ctx = createHarness({
    fs,
    cwd,
    plugins: [createObservationPolicy(), fsTools(), ...extra],
    onListenerError: (err) => listenerErrors.push(err),
  });
  return Object.assign(ctx, { listenerErrors });
}

/**
 * A view of `obj` whose listed async methods pass through `point` before they start and after
 * they settle, so a scheduler decides what runs in between. Other properties read through.
 */
export function withPoints<T extends object>(obj: T, methods: readonly string[], point: (label: string) => Promise<unknown>): T {
  const out = Object.create(obj) as Record<string, unknown>;
  for (const name of methods) {
    const fn = (obj as Record<string, unknown>)[name];
    if (typeof fn !== 'function') continue;
    out[name] = async (...args: unknown[]) => {
      await point(`${name} ▶`);
      try {
        return await (fn as (...a: unknown[]) => Promise<unknown>).apply(obj, args);
      } finally {
        await point(`${name} ◀`);
      }
    };
  }
  return out as T;
}

// Every call but walk, which returns an iterable rather than a promise.
export const FS_METHODS = FS_CALLS.filter((m) => m !== 'walk');
export const PROVIDER_METHODS = ['resolve', 'stat', 'read', 'swap', 'modify', 'listDir', 'mkdir', 'rmdir', 'rename'] as const;

/** Every call through a seam of its own over `provider`, as from separate processes (the kit's helper). */
export function seamPerCall(provider: FsProvider): FileSystem {
  return kitSeamPerCall(provider, createFs(provider));
}
