import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellWord as quote } from '../src/cli/advice.js';
import { commitAll, sh } from './mount-fixture.js';

/** A real package with a real test suite (js-yaml 4.1.1, MIT; see its README.md). */
export const FIXTURE = fileURLToPath(new URL('./fixtures/js-yaml', import.meta.url));

/** The CLI as it ships. */
export const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

export interface RunTrees {
  /** The package under git, its dependencies installed: the plain folder. */
  readonly plain: string;
  /** A copy of `plain`, which the runs and the bare overlayfs mount are over (never written). */
  readonly tree: string;
  /** The same two without node_modules, for `npm ci`. */
  readonly freshPlain: string;
  readonly freshTree: string;
  /** npm's cache (filled by the setup's install from the registry), so every `npm ci` reads the same. */
  readonly npmCache: string;
}

/**
 * The fixture under git (node_modules ignored) in `dir`, installed once with `npm ci` from the
 * registry, then copied (`cp -a`: modes and symlinks as they are).
 */
export async function makeRunTrees(dir: string): Promise<RunTrees> {
  const t: RunTrees = {
    plain: join(dir, 'plain'),
    tree: join(dir, 'tree'),
    freshPlain: join(dir, 'fresh-plain'),
    freshTree: join(dir, 'fresh-tree'),
    npmCache: join(dir, 'npm-cache'),
  };
  await sh(`cp -a ${quote(FIXTURE)} ${quote(t.plain)}`);
  await commitAll(t.plain);
  for (const copy of [t.freshPlain, t.freshTree]) await sh(`cp -a ${quote(t.plain)} ${quote(copy)}`);
  await sh(`cd ${quote(t.plain)} && ${benchEnv(t)} && npm ci ${NPM_CI_FLAGS} >/dev/null`);
  await sh(`cp -a ${quote(t.plain)} ${quote(t.tree)}`);
  // git's index holds the stat data of the folder it was made in: refreshed here, once, not in a round.
  for (const d of [t.plain, t.tree, t.freshPlain, t.freshTree]) await sh(`cd ${quote(d)} && git status --porcelain >/dev/null`);
  return t;
}

/** The same `npm ci` everywhere: from the cache the setup filled, no audit or funding requests. */
export const NPM_CI_FLAGS = '--prefer-offline --no-audit --no-fund';

/**
 * The environment of every subject: a run sets GIT_OPTIONAL_LOCKS=0 for its program (docs/run.md),
 * so the others get it too; npm uses the bench's cache.
 */
export const benchEnv = (t: RunTrees) => `export GIT_OPTIONAL_LOCKS=0 npm_config_cache=${quote(t.npmCache)}`;

/** `dsh-fs run` of `argv` (shell words) over `root` with its state in `state`, as a user types it. */
export const dshRun = (root: string, state: string, argv: string, json = false) =>
  `exec node ${quote(CLI)} run${json ? ' --json' : ''} --root ${quote(root)} --state ${quote(state)} -- ${argv}`;

/** New, empty upper and work directories for a bare overlayfs mount (untimed, before each round). */
export async function emptyScratch(scratch: string): Promise<void> {
  await mkdir(join(scratch, 'upper'), { recursive: true });
  await mkdir(join(scratch, 'work'));
}

/**
 * The floor: kernel overlayfs mounted over `lower` at its own path in a private mount namespace, no
 * dsh-fs code, upper and work in `scratch` (made by `emptyScratch` first). Without root, a user
 * namespace and `userxattr`, as a run does.
 */
export function bareOverlay(lower: string, scratch: string, script: string): string {
  const root = process.getuid?.() === 0;
  const options = `lowerdir=${lower},upperdir=${join(scratch, 'upper')},workdir=${join(scratch, 'work')}${root ? '' : ',userxattr'}`;
  const inside = `mount -t overlay bench -o ${quote(options)} ${quote(lower)} && cd ${quote(lower)} && ${script}`;
  return `exec unshare ${root ? '' : '-Ur '}-m --propagation private sh -c ${quote(inside)}`;
}
