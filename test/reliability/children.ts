import { spawn } from 'node:child_process';
import { REPO, buildForChildren, type ChildResult } from '../local/helpers.js';

/** Child processes that need more than the local provider: the tools, the policy, the overlay. */
const ENTRIES = ['src/index.ts', 'src/tools/index.ts', 'src/policy/index.ts', 'src/backends/local/index.ts', 'src/backends/overlay/index.ts'];

export interface PackageBuild {
  /** file URL of the compiled module for a source path such as `src/tools/index.ts`. */
  url(source: string): string;
}

export function buildPackageForChildren(): PackageBuild {
  return buildForChildren(ENTRIES);
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
