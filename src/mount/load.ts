import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { installCommand } from '../peers.js';
import { FsError } from '../seam/index.js';

/** The part of fuse-native's class the mount uses (the package ships no types). */
export interface FuseInstance {
  mount(cb: (err: Error | null) => void): void;
  unmount(cb: (err: Error | null) => void): void;
}
export type FuseConstructor = new (mountpoint: string, ops: object, options: object) => FuseInstance;

/** Loads fuse-native; the default imports it. Tests inject a failing one to see the message. */
export type FuseLoader = () => Promise<FuseConstructor>;

export interface LoadOptions {
  readonly loader?: FuseLoader;
  /** Where the FUSE device is looked for (default /dev/fuse). */
  readonly device?: string;
  /** The PATH searched for fusermount (default process.env.PATH). */
  readonly path?: string;
}

const INSTALL_SYSTEM = 'install it with "apt-get install -y libfuse2 fuse" (Debian/Ubuntu, as root)';
const INSTALL_PACKAGE = `install it with: ${installCommand('fuse-native')} (an optional peer dependency of dsh-fs)`;

const defaultLoader: FuseLoader = async () => {
  // A variable specifier, so bundlers and tsc leave the optional package alone.
  const name = 'fuse-native';
  const mod = (await import(name)) as { default?: unknown };
  return (mod.default ?? mod) as FuseConstructor;
};

/**
 * Every piece a mount needs, checked before anything is mounted: the device, fusermount (which
 * unmounts), libfuse.so.2 and fuse-native. One FsError names what is missing and how to get it.
 */
export async function loadFuse(options: LoadOptions = {}): Promise<FuseConstructor> {
  const missing: string[] = [];
  const device = options.device ?? '/dev/fuse';
  if (!(await stat(device).then(() => true, () => false))) {
    missing.push(`the FUSE device ${device} (load the fuse kernel module, or give the container --device /dev/fuse)`);
  }
  if (!(await onPath('fusermount', options.path ?? process.env.PATH ?? ''))) {
    missing.push(`fusermount: ${INSTALL_SYSTEM}`);
  }
  let Fuse: FuseConstructor | undefined;
  try {
    Fuse = await (options.loader ?? defaultLoader)();
  } catch (err) {
    missing.push(describeLoadFailure(err));
  }
  if (missing.length > 0 || Fuse === undefined) {
    throw new FsError('FS_UNSUPPORTED', `cannot mount: missing ${missing.join('; ')}`);
  }
  return Fuse;
}

function describeLoadFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (/libfuse\.so/.test(message)) return `libfuse.so.2: ${INSTALL_SYSTEM}`;
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /Cannot find (package|module) 'fuse-native'/.test(message)) {
    return `the fuse-native package: ${INSTALL_PACKAGE}`;
  }
  return `a working fuse-native (it failed to load: ${message.split('\n')[0]})`;
}

async function onPath(command: string, pathList: string): Promise<boolean> {
  for (const dir of pathList.split(delimiter)) {
    if (dir === '') continue;
    if (await access(join(dir, command), constants.X_OK).then(() => true, () => false)) return true;
  }
  return false;
}
