import { execFile, spawn } from 'node:child_process';
import { hash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const MAIN_JS = join(REPO, 'dist/cli/main.js');

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function isFresh(): boolean {
  return existsSync(MAIN_JS) && statSync(MAIN_JS).mtimeMs >= newestSourceMtime(join(REPO, 'src'));
}

/**
 * Builds dist/ (as `npm run build` does) when it is missing or older than any source. Test files
 * running in parallel share one build through a lock directory.
 */
export async function ensureBuilt(): Promise<void> {
  if (isFresh()) return;
  const lock = join(tmpdir(), `dsh-fs-cli-build-${hash('sha256', REPO, 'hex').slice(0, 12)}`);
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
      const age = Date.now() - ((await stat(lock).catch(() => undefined))?.mtimeMs ?? Date.now());
      if (age > 10 * 60_000) await rmdir(lock).catch(() => {});
      await delay(250);
    }
  }
  try {
    if (isFresh()) return;
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    const output = await new Promise<string>((resolve) => {
      execFile(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: REPO, maxBuffer: 1 << 24 }, (_err, stdout, stderr) =>
        resolve(`${stdout}${stderr}`),
      );
    });
    // tsc still emits when some other file of the tree has a type error; only a missing entry is fatal here.
    if (!isFresh()) throw new Error(`building dist/ failed:\n${output}`);
  } finally {
    await rmdir(lock).catch(() => {});
  }
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node dist/cli/main.js ...args` to completion, stdout and stderr piped. */
export function runCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS, ...args], {
      cwd: options.cwd ?? REPO,
      env: { ...process.env, NO_COLOR: '', FORCE_COLOR: '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const temps: string[] = [];

export async function tempDir(prefix = 'dsh-cli-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

export async function removeTemps(): Promise<void> {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
}

/** A project directory with the given files, and a state directory beside it (not created). */
export async function project(files: Record<string, string>): Promise<{ root: string; state: string; base: string }> {
  const base = await tempDir();
  const root = join(base, 'project');
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  await mkdir(root, { recursive: true });
  return { root, state: join(base, 'state'), base };
}

export interface Served {
  readonly client: Client;
  readonly stderr: () => string;
  call(name: string, args: unknown): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** Starts `dsh-fs serve ...args` and connects an MCP client to it over stdio. */
export async function serve(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN_JS, 'serve', ...args],
    env: { ...(process.env as Record<string, string>), ...(env as Record<string, string>) },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'dsh-fs-test', version: '0.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    call: async (name, args) => (await client.callTool({ name, arguments: args as Record<string, unknown> })) as CallToolResult,
    close: () => client.close(),
  };
}

/** The text of a tool result's single text block. */
export function textOf(result: CallToolResult): string {
  const block = result.content[0];
  if (block?.type !== 'text') throw new Error(`expected a text block, got ${JSON.stringify(result.content)}`);
  return block.text;
}

/** The FsError code an error result carries. */
export function codeOf(result: CallToolResult): string | undefined {
  const meta = result._meta?.['dsh-fs/error'] as { code?: string } | undefined;
  return meta?.code;
}
