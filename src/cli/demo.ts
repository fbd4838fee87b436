import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { createHarness, type ToolResult } from '../harness/index.js';
import { createObservationPolicy } from '../policy/index.js';
import type { FsErrorCode } from '../seam/index.js';
import { fsTools, searchTools } from '../tools/index.js';
import { EXIT_FAILURE, EXIT_OK, UsageError } from './args.js';
import { colorDiff, colorsFor } from './color.js';
import type { Io } from './io.js';
import { openLower, openSandbox } from './workspace.js';

const UTIL_JS = `export function first(items) {
  if (items.length === 0) {
    return null;
  }
  return items[0];
}

export function last(items) {
  if (items.length === 0) {
    return null;
  }
  return items[items.length - 1];
}
`;

const SAMPLE: Record<string, string> = {
  'README.md': '# greeter\n\nA tiny sample project.\n',
  'src/greet.js': 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n',
  'src/util.js': UTIL_JS,
  // Written with Windows line endings on purpose.
  'config.ini': '[server]\r\nhost = localhost\r\nport = 8080\r\n',
};

/** The outcome a step expects; the demo stops (exit 1) if the toolkit behaves otherwise. */
type Expect = 'ok' | FsErrorCode;

class DemoFailure extends Error {}

/** How to run this command again: `dsh-fs` when installed, else `node <path to main.js>`. */
function selfCommand(): string {
  const entry = process.argv[1] ?? 'dsh-fs';
  return basename(entry) === 'dsh-fs' ? 'dsh-fs' : `node ${shellQuote(entry)}`;
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** The directory `--keep` names: created if missing, refused unless empty (the demo writes a project there). */
async function keepDir(dir: string, cwd: string): Promise<string> {
  const abs = resolve(cwd, dir);
  const entries = await readdir(abs).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw new UsageError(`--keep "${dir}": ${err.code === 'ENOTDIR' ? 'not a directory' : err.message}`, 'demo');
  });
  if (entries.length > 0) throw new UsageError(`--keep "${dir}" must be an empty or new directory`, 'demo');
  await mkdir(abs, { recursive: true });
  return abs;
}

/**
 * A scripted agent session against a sandbox over a sample project in a temporary directory:
 * every tool call and its result is printed, and checked, so the demo is also a smoke test.
 * With `keep`, it works in that directory, leaves its changes uncommitted and keeps them.
 */
export async function demo(io: Io, keep?: string): Promise<number> {
  const c = colorsFor(io.stdout, 'auto', io.env);
  const out = (text = '') => io.stdout.write(`${text}\n`);
  const temp = keep === undefined ? await mkdtemp(join(tmpdir(), 'dsh-fs-demo-')) : await keepDir(keep, io.cwd);
  const project = join(temp, 'project');
  const state = join(temp, 'sandbox-state');
  const cleanup = () => (keep === undefined ? rm(temp, { recursive: true, force: true }) : Promise.resolve());
  const onSignal = () => {
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    for (const [path, text] of Object.entries(SAMPLE)) {
      await mkdir(join(project, path, '..'), { recursive: true });
      await writeFile(join(project, path), text);
    }
    const sandbox = await openSandbox(openLower(project), state);
    const ctx = createHarness({ fs: sandbox, plugins: [createObservationPolicy(), fsTools(), searchTools()] });
    const session = 'demo-agent';

    let stepNo = 0;
    const step = (title: string) => {
      stepNo++;
      out();
      out(c.bold(`── ${stepNo}. ${title} ${'─'.repeat(Math.max(3, 66 - title.length))}`));
    };
    const note = (text: string) => out(c.dim(`   ${text}`));
    const call = async (name: string, args: Record<string, unknown>, expect: Expect): Promise<ToolResult> => {
      out(`${c.cyan('→')} ${c.bold(name)} ${JSON.stringify(args)}`);
      const result = await ctx.tools.execute(name, args, { owner: session });
      const [first = '', ...rest] = result.text.split('\n');
      const tag = result.isError ? `  ${c.red(`[${result.error?.code ?? 'error'}]`)}` : '';
      out(`${result.isError ? c.red('←') : c.green('←')} ${first}${rest.length === 0 ? tag : ''}`);
      for (const [i, line] of rest.entries()) out(`${line === '' ? '' : `  ${line}`}${i === rest.length - 1 ? tag : ''}`);
      const got: Expect = result.isError ? (result.error?.code ?? 'FS_IO_ERROR') : 'ok';
      if (got !== expect) throw new DemoFailure(`step ${stepNo}: ${name} gave ${got}, expected ${expect}`);
      return result;
    };

    out(c.bold('dsh-fs demo: an agent session against a sandbox'));
    out(`project:        ${project}`);
    out(`sandbox state:  ${state}`);
    note('The agent works on a copy-on-write sandbox: the project directory changes only on commit.');

    step('Read a file');
    await call('read', { file_path: 'src/greet.js' }, 'ok');

    step('Find files, and search inside them');
    await call('glob', { pattern: '*.js' }, 'ok');
    await call('grep', { pattern: 'return null', include: '*.js' }, 'ok');

    step('Create a new file: no read needed');
    await call('write', { file_path: 'NOTES.md', content: '# Notes\n\n- try dsh-fs\n' }, 'ok');

    step('Overwrite a file it never read: refused');
    await call('write', { file_path: 'README.md', content: '# mine now\n' }, 'FS_NOT_OBSERVED');
    note('A blind overwrite could destroy work the agent never saw.');

    step('Edit after someone else changed the file: refused as stale');
    await call('read', { file_path: 'README.md' }, 'ok');
    await writeFile(join(project, 'README.md'), '# greeter\n\nA tiny sample project, now with tests.\n');
    note('Meanwhile, outside the agent, a person edits README.md in the project directory.');
    await call('edit', { file_path: 'README.md', old_string: 'A tiny sample project.', new_string: 'A tiny greeter.' }, 'FS_STALE_VERSION');
    note('The agent re-reads, sees the new text, and edits that.');
    await call('read', { file_path: 'README.md' }, 'ok');
    await call(
      'edit',
      { file_path: 'README.md', old_string: 'A tiny sample project, now with tests.', new_string: 'A tiny greeter, now with tests.' },
      'ok',
    );

    step('Edit a CRLF file with an LF old_string');
    await call('read', { file_path: 'config.ini' }, 'ok');
    await call('edit', { file_path: 'config.ini', old_string: 'host = localhost\nport = 8080', new_string: 'host = 0.0.0.0\nport = 9090' }, 'ok');
    const ini = (await sandbox.readBytes(await sandbox.resolve('config.ini'), { maxBytes: 1 << 20 })).bytes;
    note(`config.ini in the sandbox, as bytes: ${JSON.stringify(Buffer.from(ini).toString('utf8'))}`);
    note('Every line still ends in CRLF: only the matched text changed.');

    step('An ambiguous edit, and its fix');
    await call('read', { file_path: 'src/util.js' }, 'ok');
    await call('edit', { file_path: 'src/util.js', old_string: '    return null;', new_string: '    return undefined;' }, 'FS_AMBIGUOUS_EDIT');
    note('The agent adds context so the match is unique.');
    await call(
      'edit',
      {
        file_path: 'src/util.js',
        old_string: 'export function last(items) {\n  if (items.length === 0) {\n    return null;',
        new_string: 'export function last(items) {\n  if (items.length === 0) {\n    return undefined;',
      },
      'ok',
    );

    step('Review: the project directory is untouched; the diff');
    const onDisk = await readFile(join(project, 'src/util.js'), 'utf8');
    if (onDisk !== UTIL_JS) throw new DemoFailure('the project directory changed before commit');
    note('src/util.js on disk is unchanged. `dsh-fs diff` shows the same:');
    out();
    io.stdout.write(colorDiff(await sandbox.diff(), c));

    if (keep !== undefined) {
      step('Your turn: review the sandbox');
      note('The changes stay in the sandbox, uncommitted. Try:');
      const args = `--root ${shellQuote(project)} --state ${shellQuote(state)}`;
      for (const command of ['status', 'diff', 'commit']) out(`  ${selfCommand()} ${command} ${args}`);
      note(`Serve the project to an MCP client: ${selfCommand()} serve ${args}`);
      return EXIT_OK;
    }

    step('Commit');
    const result = await sandbox.commit();
    for (const path of result.committed) out(`${c.green('committed')} ${relative(sandbox.root ?? project, path)}`);
    for (const p of [...result.conflicts, ...result.failed]) out(`${c.red(p.code)} ${p.message}`);
    if (result.conflicts.length + result.failed.length > 0) throw new DemoFailure('the commit did not go through');
    const committedIni = await readFile(join(project, 'config.ini'), 'utf8');
    if (committedIni !== '[server]\r\nhost = 0.0.0.0\r\nport = 9090\r\n') throw new DemoFailure('config.ini was not committed as edited');
    note(`config.ini on disk now: ${JSON.stringify(committedIni)}`);
    note(`sandbox changes left: ${(await sandbox.changes()).length}`);

    out();
    out(c.bold('Done.') + ' Serve the same tools to an MCP client with: dsh-fs serve --root <your project>');
    return EXIT_OK;
  } catch (err) {
    if (!(err instanceof DemoFailure)) throw err;
    io.stderr.write(`dsh-fs demo: ${err.message}\n`);
    return EXIT_FAILURE;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanup();
    out(c.dim(keep === undefined ? `(removed ${temp})` : `(kept ${temp})`));
  }
}
