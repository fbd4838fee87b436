/**
 * Commands the CLI prints for the user to run next, spelled so that they work when pasted: with
 * the options that say where the sandbox is, and paths quoted for a POSIX shell.
 */
import { resolve } from 'node:path';
import { optionalString, type Command, type Parsed } from './args.js';

/** `word` as one POSIX shell word. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Where the sandbox is, as options: the resolved root and state, or the database the user named. */
export function locationArgs(parsed: Parsed, located: { readonly root: string; readonly stateDir: string }): string[] {
  const given = (name: string) => {
    const value = optionalString(parsed, name);
    return value === undefined ? [] : [`--${name}`, value];
  };
  const postgres = optionalString(parsed, 'postgres');
  if (postgres !== undefined) return ['--postgres', postgres, ...given('workspace'), ...given('sandbox')];
  const sqlite = optionalString(parsed, 'sqlite');
  if (sqlite !== undefined) return ['--sqlite', resolve(sqlite), ...given('workspace'), ...given('sandbox')];
  // The default state directory follows from the root; one given elsewhere must be named.
  return ['--root', located.root, ...(parsed.values.state === undefined ? [] : ['--state', located.stateDir])];
}

/** `dsh-fs COMMAND` with the location, `extra` options and the paths, ready to paste. */
export function commandLine(command: Command, location: readonly string[], extra: readonly string[], paths: readonly string[]): string {
  return ['dsh-fs', command, ...location, ...extra, ...paths].map(shellWord).join(' ');
}
