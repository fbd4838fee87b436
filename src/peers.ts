import { createRequire } from 'node:module';
import { FsError } from './seam/errors.js';

/**
 * The optional peer dependencies and the ranges package.json admits (a test keeps the two
 * equal). Each is loaded only by the entry point that needs it, so a consumer installs only the
 * peers of the entry points it uses.
 */
export const PEERS = {
  pg: '^8.23.1',
  '@modelcontextprotocol/sdk': '^1.17.0',
  'fast-check': '^4.11.0',
  'fuse-native': '^2.2.6',
  // 6 for Node 20; 7 needs Node 22. The tests run on 6, scripts/ai-sdk-7-check.sh on 7.
  ai: '^6.0.0 || ^7.0.0',
  libsql: '^0.5.29',
} as const;
export type Peer = keyof typeof PEERS;

/** The command that installs a peer, as the error messages give it. */
export const installCommand = (name: Peer) => `npm install ${name}@"${PEERS[name]}"`;

/** The error for a peer that is not installed: names the package, who needs it and how to get it. */
export function missingPeer(name: Peer, needer: string, cause?: unknown): FsError {
  return new FsError('FS_UNSUPPORTED', `${needer} needs the package ${name}, which is not installed; install it with: ${installCommand(name)}`, { cause });
}

/** True when `err` says that `name` itself could not be found (not one of its own imports). */
export function isMissingPackage(err: unknown, name: string): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  const message = err instanceof Error ? err.message : String(err);
  return message.includes(`'${name}'`) || message.includes(`'${name}/`) || message.includes(`"${name}"`);
}

const require = createRequire(import.meta.url);

/** A peer loaded synchronously (its CommonJS build), for callers whose API is synchronous. */
export function requirePeer<T>(name: Peer, specifier: string, needer: string): T {
  try {
    return require(specifier) as T;
  } catch (err) {
    if (isMissingPackage(err, name)) throw missingPeer(name, needer, err);
    throw err;
  }
}

/** A peer imported as an ES module. */
export async function importPeer<T>(name: Peer, specifier: string, needer: string): Promise<T> {
  try {
    // A variable specifier, so bundlers and tsc leave the optional package alone.
    return (await import(specifier)) as T;
  } catch (err) {
    if (isMissingPackage(err, name)) throw missingPeer(name, needer, err);
    throw err;
  }
}
