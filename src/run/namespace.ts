import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { FsError } from '../seam/index.js';

/**
 * The program's namespace: `unshare` (util-linux) makes a private mount namespace (with a user
 * namespace mapping the caller to root where the caller is not root) and a PID namespace whose
 * first process is a short shell script. The script mounts overlayfs at the project's own path,
 * runs the program there, then kills whatever the program left running and waits while this
 * process reads the merged view through /proc/PID/root. The kernel tears the mount down with the
 * namespace: a run killed at any point leaves no mount and no process behind.
 *
 * File descriptor 3 tells this process how it goes ("mounted", then "exit N"); 4 is a pipe this
 * process holds open: when it closes (this process is done, or was killed), everything left in
 * the namespace is killed and the namespace ends.
 */
const SCRIPT = `
merged=$1 options=$2 cwd=$3
shift 3
if ! mount -t overlay dsh-fs-run -o "$options" "$merged"; then echo nomount >&3; exit 125; fi
echo mounted >&3
( read -r _ <&4; kill -KILL -1 ) 3>&- </dev/null >/dev/null 2>&1 &
cd "$merged/$cwd" || { echo nocwd >&3; exit 125; }
"$@" 3>&- 4<&-
status=$?
kill -KILL -1 2>/dev/null
echo "exit $status" >&3
read -r _ <&4
exit $status
`;

export interface NamespaceRun {
  /** This process's view of the namespace's mounts: PATH there is `${procRoot}${PATH}`. */
  readonly procRoot: string;
  /** The program's exit status (128+signal when killed), once it ended. */
  readonly exited: Promise<number>;
  /** Lets the namespace end; resolves when it has. */
  close(): Promise<void>;
}

export interface NamespaceOptions {
  readonly merged: string;
  readonly lowers: readonly string[];
  readonly upper: string;
  readonly work: string;
  /** The program's directory relative to `merged` ('' for itself). */
  readonly cwd: string;
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly stdio: 'inherit' | 'ignore' | 'pipe';
}

/** True when this process runs as root: a plain mount namespace then, else a user namespace too. */
export const privileged = () => process.getuid?.() === 0;

/** The overlayfs mount options; refused for paths overlayfs cannot be given in them. */
export function mountOptions(o: Pick<NamespaceOptions, 'lowers' | 'upper' | 'work'>, asRoot: boolean): string {
  for (const p of [...o.lowers, o.upper, o.work]) {
    if (/[,:\\\n]/.test(p)) throw new FsError('FS_UNSUPPORTED', `overlayfs cannot take the path "${p}" in its mount options (it holds ',', ':' or '\\')`);
  }
  const base = `lowerdir=${o.lowers.join(':')},upperdir=${o.upper},workdir=${o.work},metacopy=off`;
  // Without root: xattrs in the user. namespace; directory renames are then copies (no redirects) anyway.
  return asRoot ? `${base},redirect_dir=off` : `${base},userxattr`;
}

/** Starts the namespace and the program; rejects with FS_UNSUPPORTED when overlayfs cannot be mounted there. */
export async function startNamespace(o: NamespaceOptions): Promise<NamespaceRun & { readonly child: ChildProcess }> {
  const asRoot = privileged();
  const options = mountOptions(o, asRoot);
  const userns = asRoot ? [] : ['--user', '--map-root-user'];
  const args = [...userns, '--mount', '--propagation', 'private', '--pid', '--fork', '--kill-child', '--mount-proc',
    'sh', '-c', SCRIPT, 'dsh-fs-run', o.merged, options, o.cwd, ...o.argv];
  const child = spawn('unshare', args, { env: o.env, stdio: [o.stdio, o.stdio, o.stdio, 'pipe', 'pipe'] });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err) => reject(new FsError('FS_UNSUPPORTED', `cannot start unshare (util-linux) for a run on overlayfs: ${err.message}`)));
  });
  const control = child.stdio[3] as Readable;
  const hold = child.stdio[4] as Writable;
  hold.on('error', () => {});
  const lines = readLines(control);
  const ended = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  const close = async () => {
    hold.end();
    await ended;
  };
  await spawned;
  const first = await lines.next();
  if (first !== 'mounted') {
    const [code] = await ended;
    const why = first === 'nocwd' ? 'the working directory is not a directory in the sandbox' : `unshare or mount failed (exit ${code ?? 'signal'})`;
    throw new FsError(first === 'nocwd' ? 'FS_NOT_DIRECTORY' : 'FS_UNSUPPORTED', `cannot run on overlayfs: ${why}`);
  }
  const exited = (async () => {
    const line = await lines.next();
    const m = /^exit (\d+)$/.exec(line ?? '');
    if (m !== null) return Number(m[1]);
    const [code, signal] = await ended;
    return code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0));
  })();
  return { child, procRoot: `/proc/${child.pid}/root`, exited, close };
}

/** Lines of a stream, one `next()` at a time (undefined at its end). */
function readLines(stream: Readable): { next(): Promise<string | undefined> } {
  const queue: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let rest = '';
  let done = false;
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    rest += chunk;
    for (let i = rest.indexOf('\n'); i >= 0; i = rest.indexOf('\n')) {
      const line = rest.slice(0, i);
      rest = rest.slice(i + 1);
      const w = waiting.shift();
      if (w) w(line);
      else queue.push(line);
    }
  });
  const finish = () => {
    done = true;
    for (const w of waiting.splice(0)) w(undefined);
  };
  stream.on('end', finish);
  stream.on('close', finish);
  stream.on('error', finish);
  return {
    next: () => {
      if (queue.length > 0) return Promise.resolve(queue.shift());
      if (done) return Promise.resolve(undefined);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}
