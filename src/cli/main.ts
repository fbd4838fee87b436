#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isFsError } from '../seam/errors.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, isCommand, optionalString, parseCommand, type Command, type Parsed } from './args.js';
import type { Io } from './io.js';
import { closePools } from './pools.js';
import { packageVersion } from './version.js';

export { packageVersion };

// The help texts: loaded only to be shown.
const help = () => import('./help.js');

/** Runs one invocation; resolves to the exit status. Never rejects. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined) {
      io.stderr.write((await help()).MAIN_HELP);
      return EXIT_USAGE;
    }
    if (first === '--help' || first === '-h' || first === 'help') {
      const topic = rest[0];
      const { HELP, MAIN_HELP } = await help();
      io.stdout.write(topic !== undefined && isCommand(topic) ? HELP[topic] : MAIN_HELP);
      return EXIT_OK;
    }
    if (first === '--version' || first === '-v') {
      io.stdout.write(`${packageVersion()}\n`);
      return EXIT_OK;
    }
    if (!isCommand(first)) {
      throw new UsageError(first.startsWith('-') ? `unknown option "${first}"` : `unknown command "${first}"`);
    }
    const parsed = parseCommand(first, rest);
    if (parsed.values.help === true) {
      io.stdout.write((await help()).HELP[first]);
      return EXIT_OK;
    }
    return await dispatch(first, parsed, io);
  } catch (err) {
    if (err instanceof UsageError) {
      const where = err.command === undefined ? '' : ` ${err.command}`;
      io.stderr.write(`dsh-fs${where}: ${err.message}\nRun "dsh-fs${where} --help" for usage.\n`);
      return EXIT_USAGE;
    }
    const message = isFsError(err) ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err);
    io.stderr.write(`dsh-fs: ${message}\n`);
    return EXIT_FAILURE;
  } finally {
    // Database connections of a --postgres command: ended, so the process can exit.
    await closePools();
  }
}

/**
 * A reader that goes away (`dsh-fs status | head -1`) ends the output, not the command: EPIPE is
 * swallowed and the command finishes with its usual status. Other stream errors are reported.
 */
export function quietOnClosedPipe(stream: NodeJS.WritableStream, stderr: NodeJS.WritableStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return;
    stderr.write(`dsh-fs: cannot write output: ${err.message}\n`);
    process.exit(EXIT_FAILURE);
  });
}

/**
 * Each command's modules are imported when that command runs, so `--version`, `--help` and a
 * command load only what they use (see "Figures" in docs/run.md).
 */
async function dispatch(command: Command, parsed: Parsed, io: Io): Promise<number> {
  switch (command) {
    case 'serve':
      return (await import('./serve-command.js')).serve(parsed, io);
    case 'status':
      return (await import('./review.js')).status(parsed, io);
    case 'diff':
      return (await import('./review.js')).diff(parsed, io);
    case 'commit': {
      if (parsed.values.hunk === undefined) return (await import('./review.js')).commit(parsed, io);
      const { commitHunks, hunkIds } = await import('./review-hunks.js');
      return commitHunks(parsed, io, hunkIds(parsed)!);
    }
    case 'discard':
      return (await import('./review.js')).discard(parsed, io);
    case 'checkpoints':
      return (await import('./history.js')).checkpoints(parsed, io);
    case 'rewind':
      return (await import('./history.js')).rewind(parsed, io);
    case 'log':
      return (await import('./audit.js')).log(parsed, io);
    case 'fork':
      return (await import('./sandbox.js')).fork(parsed, io);
    case 'merge':
      return (await import('./merge.js')).mergeCommand(parsed, io);
    case 'sync':
      return (await import('./sync.js')).syncCommand(parsed, io);
    case 'mount':
      return (await import('./mount.js')).mountCommand(parsed, io);
    case 'run':
      return (await import('./run.js')).runCommand(parsed, io);
    case 'demo':
      return (await import('./demo.js')).demo(io, optionalString(parsed, 'keep'));
    case 'import':
    case 'export':
      return (await import('./postgres.js')).transfer(command, parsed, io);
    case 'review':
      return (await import('./review-hunks.js')).review(parsed, io);
    case 'reject':
      return (await import('./review-hunks.js')).reject(parsed, io);
  }
}

function isMainModule(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  quietOnClosedPipe(process.stdout, process.stderr);
  const io: Io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), stdin: process.stdin };
  const code = await main(process.argv.slice(2), io);
  // Exit naturally, so piped output is flushed; a stream left open (a server's stdin) ends it after a moment.
  process.exitCode = code;
  setTimeout(() => process.exit(code), 500).unref();
}
