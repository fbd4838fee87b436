import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO, type ChildResult } from '../local/helpers.js';

/**
 * Child processes that need more than the local provider (the tools, the policy, the overlay):
 * `buildForChildren` in test/local compiles only the provider, so this compiles the package's
 * entry points the same way (tsc, type checking off) into node_modules/.cache, once per source
 * state, published by an atomic rename.
 */
const ENTRIES = ['src/index.ts', 'src/tools/index.ts', 'src/policy/index.ts', 'src/backends/local/index.ts', 'src/backends/overlay/index.ts'];

export interface PackageBuild {
  /** file URL of the compiled module for a source path such as `src/tools/index.ts`. */
  url(source: string): string;
}

export function buildPackageForChildren(): PackageBuild {
  const sources = listTs(join(REPO, 'src')).sort();
  const digest = createHash('sha256');
  for (const f of [...sources, join(REPO, 'tsconfig.json'), join(REPO, 'tsconfig.build.json')]) {
    digest.update(f).update('\0').update(readFileSync(f)).update('\0');
  }
  const cache = join(REPO, 'node_modules', '.cache', 'dsh-fs-reliability-build');
  const dir = join(cache, digest.digest('hex').slice(0, 16));
  const url = (source: string) => pathToFileURL(join(dir, 'out', source.replace(/^src\//, '').replace(/\.ts$/, '.js'))).href;
  if (!ENTRIES.every((e) => existsSync(new URL(url(e))))) {
    const work = `${dir}.${process.pid}.${Date.now()}.tmp`;
    mkdirSync(work, { recursive: true });
    const tsconfig = join(work, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        extends: join(REPO, 'tsconfig.build.json'),
        compilerOptions: { rootDir: join(REPO, 'src'), outDir: join(work, 'out'), declaration: false, sourceMap: false, noCheck: true },
        include: [],
        files: ENTRIES.map((e) => join(REPO, e)),
      }),
    );
    try {
      execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], { stdio: 'pipe' });
    } catch (err) {
      if (!existsSync(join(work, 'out/index.js'))) {
        rmSync(work, { recursive: true, force: true });
        throw new Error(`could not compile the package for child processes:\n${(err as { stdout?: Buffer }).stdout?.toString() ?? String(err)}`);
      }
    }
    try {
      renameSync(work, dir);
    } catch {
      rmSync(work, { recursive: true, force: true }); // another worker published the same build
    }
    // Builds of older sources go once they are an hour old.
    for (const name of readdirSync(cache)) {
      const p = join(cache, name);
      if (p !== dir && Date.now() - (statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 3_600_000) {
        rmSync(p, { recursive: true, force: true });
      }
    }
  }
  return { url };
}

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listTs(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/**
 * Runs a command that ends by exec'ing node on a module script (a wrapper such as `unshare` or a
 * shell that sets a limit first), with an overall timeout. `runScript` in test/local spawns node
 * directly and cannot put a wrapper in front of it.
 */
export function runWrapped(command: string, args: readonly string[], timeoutMs = 60_000): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
