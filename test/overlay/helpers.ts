import fc from 'fast-check';
import type { MemoryTree } from '../../src/backends/memory/index.js';
import { INLINE_MAX_BYTES } from '../../src/backends/overlay/state-format.js';
import { FsVersion, contentVersion, isFsError, type FileSystem, type FsWriteIntent } from '../../src/seam/index.js';

/** fast-check runs for the overlay properties; raise with DSH_FS_OVERLAY_RUNS for a longer soak. */
export const RUNS = Number(process.env.DSH_FS_OVERLAY_RUNS ?? 40);

export const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));

/** `text` made longer than INLINE_MAX_BYTES: saved as a blob file, not inline in the state's records. */
export const stored = (text: string) => `${text}${'.'.repeat(INLINE_MAX_BYTES)}\n`;

/** Candidate files; `/a` and `/a/x` collide, so file-versus-directory cases come up often. */
export const FILES = ['/a', '/b', '/d/a', '/d/b', '/d/e/f', '/a/x', '/e/g'] as const;
/** Paths the operations use: the files, directories, and paths through lower symlinks. */
export const PATHS = [...FILES, '/d', '/e', '/l/a', '/l/n', '/lf', '/n/m/o'] as const;
export const DIRS = ['/', '/d', '/d/e', '/a', '/e', '/l', '/n', '/n/m'] as const;

const contentArb = fc.oneof(
  // Two contents past the inline limit, so saves also write and drop blob files.
  fc.constantFrom('', 'a', 'a\n', 'ab\r\nab\r\n', '\uFEFFa b\n', 'b a b', 'x\ny\n', stored('a'), stored('b a b')),
  fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '\r\n'), maxLength: 8 }),
);

const bytesArb = fc.oneof(
  contentArb.map(utf8),
  fc.constantFrom(new Uint8Array([0, 1, 2]), new Uint8Array([0xff, 0xfe, 0x61]), new Uint8Array([0xc3])),
);

/** A consistent lower tree: no file below another file; optional symlinks into `/d`. */
export const lowerTreeArb: fc.Arbitrary<MemoryTree> = fc
  .record({
    files: fc.dictionary(fc.constantFrom(...FILES), contentArb, { maxKeys: FILES.length }),
    emptyDir: fc.boolean(),
    dirLink: fc.boolean(),
    fileLink: fc.boolean(),
  })
  .map(({ files, emptyDir, dirLink, fileLink }) => {
    const tree: Record<string, MemoryTree[string]> = {};
    for (const [path, content] of Object.entries(files)) {
      const blocked = Object.keys(files).some((other) => other !== path && path.startsWith(`${other}/`));
      if (!blocked) tree[path] = content;
    }
    if (emptyDir && !tree['/e/g']) tree['/e'] = null;
    if (dirLink) tree['/l'] = { symlink: '/d' };
    if (fileLink) tree['/lf'] = { symlink: '/d/a' };
    return tree;
  });

export type Op =
  | { op: 'write'; path: string; content: string; intent: 'none' | 'create' | 'current' | 'stale' }
  | { op: 'bytes'; path: string; bytes: Uint8Array }
  | { op: 'edit'; path: string; oldString: string; newString: string; replaceAll: boolean; guard: boolean }
  | { op: 'remove'; path: string; intent: 'none' | 'current' }
  | { op: 'read'; path: string }
  | { op: 'stat'; path: string }
  | { op: 'list'; path: string }
  | { op: 'mkdir'; path: string }
  | { op: 'rmdir'; path: string; recursive: boolean }
  | { op: 'rename'; from: string; to: string; expect: 'none' | 'current' | 'stale'; replace: 'no' | 'yes' | 'current' };

const pathArb = fc.constantFrom(...PATHS);

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('write' as const), path: pathArb, content: contentArb, intent: fc.constantFrom('none' as const, 'create' as const, 'current' as const, 'stale' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('bytes' as const), path: pathArb, bytes: bytesArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('edit' as const),
      path: pathArb,
      oldString: fc.constantFrom('a', 'b', 'ab', '\n', 'a\r\n'),
      newString: fc.constantFrom('B', '', 'x\n', '$&'),
      replaceAll: fc.boolean(),
      guard: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('remove' as const), path: pathArb, intent: fc.constantFrom('none' as const, 'current' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('read' as const), path: pathArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('stat' as const), path: pathArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('list' as const), path: fc.constantFrom(...DIRS) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('mkdir' as const), path: fc.constantFrom(...PATHS, ...DIRS) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rmdir' as const), path: fc.constantFrom(...DIRS, '/a/x'), recursive: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('rename' as const),
      from: fc.constantFrom(...PATHS, '/d', '/e', '/n', '/d/e'),
      to: fc.constantFrom(...PATHS, '/d', '/e', '/n', '/d/e', '/z', '/n/z', '/d/z'),
      expect: fc.constantFrom('none' as const, 'current' as const, 'stale' as const),
      replace: fc.constantFrom('no' as const, 'yes' as const, 'current' as const),
    }),
  },
);

export const opsArb = fc.array(opArb, { maxLength: 14 });

/** Runs one operation and describes its outcome (result or error code) for comparison. */
export async function runOp(fs: FileSystem, op: Op): Promise<unknown> {
  return withoutTimes(await runOpRaw(fs, op));
}

/** Modification times are informational and differ between any two filesystems. */
function withoutTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'mtimeMs').map(([k, v]) => [k, withoutTimes(v)]));
}

async function runOpRaw(fs: FileSystem, op: Op): Promise<unknown> {
  try {
    const target = await fs.resolve(op.op === 'rename' ? op.from : op.path);
    const currentVersion = async () => (await fs.stat(target))?.version ?? FsVersion('sha256:absent');
    switch (op.op) {
      case 'write': {
        let intent: FsWriteIntent | undefined;
        if (op.intent === 'create') intent = { kind: 'createIfAbsent' };
        if (op.intent === 'current') intent = { kind: 'replaceIfVersion', version: await currentVersion() };
        if (op.intent === 'stale') intent = { kind: 'replaceIfVersion', version: contentVersion(utf8('stale')) };
        return { ok: await fs.writeText(target, op.content, intent) };
      }
      case 'bytes':
        return { ok: await fs.writeBytes(target, op.bytes) };
      case 'edit': {
        const guard = op.guard ? { version: await currentVersion() } : undefined;
        return { ok: await fs.editText(target, { oldString: op.oldString, newString: op.newString, replaceAll: op.replaceAll }, guard) };
      }
      case 'remove': {
        const intent: FsWriteIntent | undefined = op.intent === 'current' ? { kind: 'replaceIfVersion', version: await currentVersion() } : undefined;
        await fs.remove(target, intent);
        return { ok: 'removed' };
      }
      case 'read':
        return { ok: await fs.readText(target) };
      case 'stat':
        return { ok: (await fs.stat(target)) ?? 'absent' };
      case 'list':
        return { ok: await fs.listDir(target) };
      case 'mkdir':
        await fs.mkdir(target);
        return { ok: 'made' };
      case 'rmdir':
        await fs.rmdir(target, { recursive: op.recursive });
        return { ok: 'removed' };
      case 'rename': {
        const to = await fs.resolve(op.to);
        const version = async (t: typeof target) => (await fs.stat(t))?.version ?? FsVersion('sha256:absent');
        const expect = op.expect === 'none' ? undefined : op.expect === 'stale' ? contentVersion(utf8('stale')) : await version(target);
        const replace = op.replace === 'no' ? false : op.replace === 'yes' ? true : await version(to);
        await fs.rename(target, to, { ...(expect === undefined ? {} : { expect }), replace });
        return { ok: 'moved' };
      }
    }
  } catch (err) {
    if (isFsError(err)) return { error: err.code };
    throw err;
  }
}

export interface ViewEntry {
  readonly type: string;
  readonly version?: string;
  readonly bytes?: string;
}

/**
 * Everything a filesystem shows from `/`: each path's type, version and (for files) bytes,
 * walking through symlinked directories by their display path.
 */
export async function viewOf(fs: FileSystem, options: { dirVersions?: boolean } = {}): Promise<Record<string, ViewEntry>> {
  const out: Record<string, ViewEntry> = {};
  const walk = async (path: string, depth: number) => {
    const target = await fs.resolve(path);
    const info = await fs.stat(target);
    out[path] = { type: 'directory', ...(options.dirVersions === false ? {} : { version: info?.version }) };
    if (depth > 8) return;
    for (const e of await fs.listDir(target)) {
      const info = await fs.stat(e.target);
      if (e.type !== (info?.type ?? 'other')) throw new Error(`listDir says ${e.target.displayPath} is a ${e.type}, stat says ${info?.type}`);
      if (e.type === 'directory') await walk(e.target.displayPath, depth + 1);
      else if (e.type === 'file') {
        const r = await fs.readBytes(e.target, { maxBytes: 1 << 20 });
        if (r.version !== info?.version) throw new Error(`readBytes and stat disagree on the version of ${e.target.displayPath}`);
        if (r.bytes.byteLength !== e.size) throw new Error(`listDir size of ${e.target.displayPath} is ${e.size}, read ${r.bytes.byteLength}`);
        out[e.target.displayPath] = { type: 'file', version: r.version, bytes: Buffer.from(r.bytes).toString('base64') };
      } else out[e.target.displayPath] = { type: e.type };
    }
  };
  await walk('/', 0);
  return out;
}

/** Only the regular files of a view. */
export function filesOf(view: Record<string, ViewEntry>): Record<string, ViewEntry> {
  return Object.fromEntries(Object.entries(view).filter(([, e]) => e.type === 'file'));
}
