import { posix } from 'node:path';
import { Volume } from 'memfs';
import { Union } from 'unionfs';
import { type MemoryProvider } from '../../src/backends/memory/index.js';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import type { ConformanceSubject } from '../../src/conformance/index.js';
import {
  FsError,
  FsTargetKey,
  FsVersion,
  applyEdit,
  checkWriteIntent,
  compareNames,
  contentVersion,
  createFs,
  crlfToLf,
  depthFirst,
  decodeText,
  encodeText,
  expectHolds,
  observe,
  lineNumberAt,
  type FsCurrent,
  type FsEditOutcome,
  type FsEditRequest,
  type FsProvider,
  type FsTarget,
  type FsWalkEntry,
} from '../../src/seam/index.js';
import { dirMutants } from './dir-mutants.js';
import { storeMutants } from './store-mutants.js';
import { volumeHooks } from './memory-subject.js';
import { rootedSubject } from './rooted.js';

/**
 * Deliberately broken providers, one bug each, built with the seam's createFs over a wrapper of
 * the memory provider. Each names the rule that must catch it.
 */
export interface Mutant {
  readonly name: string;
  /** The rule that names the bug. */
  readonly rule: string;
  /** The named rule is the only one that fails (the bug is invisible to every other rule). */
  readonly only?: boolean;
  readonly subject: () => ConformanceSubject;
}

const BASE = '/work';

/**
 * Not a bug: listings in any order (here UTF-16 unit order, reversed), as most stores give them.
 * The seam orders every listing and walk, so this passes every rule.
 */
export const unordered = {
  subject: () =>
    subjectOver((base) => ({
      ...base,
      listDir: async (target, options) => (await base.listDir(target, options)).sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0)),
      walk: undefined,
    })),
};

function subjectOver(wrap: (base: MemoryProvider) => FsProvider): ConformanceSubject {
  const base = createMemoryProvider({ files: { [BASE]: null } });
  // Without memory's own `modify`: every write then goes through the mutant's swap.
  const { modify: _modify, ...swapOnly } = base;
  const provider = wrap(swapOnly);
  return { fs: createFs(provider), provider, base: BASE, ...volumeHooks(base.volume) };
}

type EditFn = (
  decoded: { text: string; bom: boolean },
  edit: Required<FsEditRequest>,
  what: string,
) => { bytes: Uint8Array; replacements: number; lines: FsEditOutcome['lines'] };

/**
 * A native editText as a remote backend would write one: read, edit, then swap guarded by the
 * version it read (so a write that slips in between is never overwritten).
 */
function withNativeEdit(base: MemoryProvider, fn: EditFn): FsProvider {
  return {
    ...base,
    async editText(target, edit, guard, options) {
      const what = `cannot edit "${target.displayPath}"`;
      for (;;) {
        const current = await base.read(target, { ...options, maxBytes: Infinity }).catch((err: unknown) => {
          if (err instanceof FsError && err.code === 'FS_NOT_FOUND') return undefined;
          throw err;
        });
        checkWriteIntent(guard && { kind: 'replaceIfVersion', version: guard.version }, current, what);
        if (current === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
        const result = fn(decodeText(current.bytes, what), edit, what);
        const done = await base.swap(target, { ...options, expect: { kind: 'present', version: current.version }, bytes: result.bytes });
        if (done.ok) return { version: done.version!, replacements: result.replacements, lines: result.lines };
      }
    },
  };
}

function withBom(body: Uint8Array, bom: boolean): Uint8Array {
  if (!bom) return body;
  const out = new Uint8Array(body.byteLength + 3);
  out.set([0xef, 0xbb, 0xbf]);
  out.set(body, 3);
  return out;
}

/** The correct native edit: what every mutant below gets wrong in exactly one way. */
const correctEdit: EditFn = ({ text, bom }, { oldString, newString, replaceAll }, what) => {
  const result = applyEdit(text, oldString, newString, replaceAll);
  if (!result.ok) throw new FsError(result.error.code, `${what}: ${result.error.message}`);
  return { bytes: withBom(encodeText(result.text, false), bom), replacements: result.replacements, lines: result.lines };
};

export const control: Mutant = {
  name: 'control: a correct native edit over the memory provider',
  rule: '',
  subject: () => subjectOver((base) => withNativeEdit(base, correctEdit)),
};

export const mutants: readonly Mutant[] = [
  {
    name: 'versions from mtime and size, with a frozen clock',
    rule: 'V1',
    subject: () =>
      subjectOver((base) => {
        const vol = base.volume;
        const FROZEN = new Date('2020-01-01T00:00:00Z');
        const version = (key: string) => {
          const st = vol.statSync(key);
          return FsVersion(`mtime:${Number(st.mtimeMs)}:${Number(st.size)}`);
        };
        return {
          ...base,
          async stat(target, options) {
            const info = await base.stat(target, options);
            return info?.type === 'file' ? { ...info, version: version(target.targetKey) } : info;
          },
          async read(target, options) {
            const current = await base.read(target, options);
            return { ...current, version: version(target.targetKey) };
          },
          async swap(target, request) {
            const exists = (await base.stat(target, {})) !== undefined;
            const now = exists ? { version: version(target.targetKey) } : undefined;
            if (!expectHolds(request.expect, now)) return { ok: false, current: observe(now) };
            const done = await base.swap(target, { ...request, expect: { kind: 'any' } });
            if (request.bytes === null) return done;
            vol.utimesSync(target.targetKey, FROZEN, FROZEN);
            return { ...done, version: version(target.targetKey) };
          },
        };
      }),
  },
  {
    name: 'native edit replaces the first match without the ambiguity check',
    rule: 'E3',
    subject: () =>
      subjectOver((base) =>
        withNativeEdit(base, (decoded, edit, what) => {
          const result = applyEdit(decoded.text, edit.oldString, edit.newString, edit.replaceAll);
          const at = decoded.text.indexOf(edit.oldString);
          if (!result.ok && result.error.code === 'FS_AMBIGUOUS_EDIT' && at !== -1) {
            const text = decoded.text.slice(0, at) + edit.newString + decoded.text.slice(at + edit.oldString.length);
            const line = lineNumberAt(decoded.text, at);
            return { bytes: withBom(encodeText(text, false), decoded.bom), replacements: 1, lines: [{ start: line, end: line }] };
          }
          return correctEdit(decoded, edit, what);
        }),
      ),
  },
  {
    name: 'native edit rewrites the whole file with LF line endings',
    rule: 'L2',
    subject: () => subjectOver((base) => withNativeEdit(base, (decoded, edit, what) => correctEdit({ ...decoded, text: crlfToLf(decoded.text) }, edit, what))),
  },
  {
    name: 'native edit expands $ patterns through String.replace',
    rule: 'E4',
    subject: () =>
      subjectOver((base) =>
        withNativeEdit(base, (decoded, edit, what) =>
          // String.replace expands $&, $$, $` and $' in its replacement; here against old_string itself.
          correctEdit(decoded, { ...edit, newString: edit.oldString.replace(edit.oldString, edit.newString) }, what),
        ),
      ),
  },
  {
    name: 'swap is not atomic: it compares, then awaits before it publishes',
    rule: 'G3',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async swap(target: FsTarget, request) {
          const info = await base.stat(target, {});
          const now = info?.type === 'file' ? { version: info.version! } : undefined;
          if (!expectHolds(request.expect, now)) return { ok: false, current: observe(now) };
          await Promise.resolve(); // the window another writer slips through
          return base.swap(target, { ...request, expect: { kind: 'any' } });
        },
      })),
  },
  {
    name: 'non-atomic swap: publishes the first half, then the rest',
    rule: 'G5',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async swap(target: FsTarget, request) {
          if (request.bytes === null || request.bytes.byteLength < 2) return base.swap(target, request);
          const half = await base.swap(target, { ...request, bytes: request.bytes.subarray(0, request.bytes.byteLength >> 1) });
          if (!half.ok) return half;
          await new Promise((resolve) => setImmediate(resolve)); // a reader can land here
          return base.swap(target, { ...request, expect: { kind: 'any' } });
        },
      })),
  },
  {
    name: 'native edit drops the BOM',
    rule: 'L4',
    subject: () =>
      subjectOver((base) =>
        withNativeEdit(base, (decoded, edit, what) => correctEdit({ ...decoded, bom: false }, edit, what)),
      ),
  },
  {
    name: 'versions from the first KiB of content plus the size',
    rule: 'V1',
    subject: () =>
      subjectOver((base) => {
        const vol = base.volume;
        const version = (bytes: Uint8Array) => FsVersion(`head:${contentVersion(bytes.subarray(0, 1024))}:${bytes.byteLength}`);
        const current = (key: string) => {
          try {
            const st = vol.statSync(key);
            return st.isFile() ? { version: version(new Uint8Array(vol.readFileSync(key) as Buffer)) } : undefined;
          } catch {
            return undefined;
          }
        };
        return {
          ...base,
          async stat(target, options) {
            const info = await base.stat(target, options);
            return info?.type === 'file' ? { ...info, version: current(target.targetKey)!.version } : info;
          },
          async read(target, options) {
            const got = await base.read(target, options);
            return { ...got, version: version(got.bytes) };
          },
          async swap(target, request) {
            const now = current(target.targetKey);
            if (!expectHolds(request.expect, now)) return { ok: false, current: observe(now) };
            const done = await base.swap(target, { ...request, expect: { kind: 'any' } });
            return done.ok && request.bytes !== null ? { ...done, version: version(request.bytes) } : done;
          },
        };
      }),
  },
  {
    name: "native edit reads outside the critical section and swaps blind",
    rule: 'G6',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async editText(target, edit, guard, options) {
          const what = `cannot edit "${target.displayPath}"`;
          const current = await base.read(target, { ...options, maxBytes: Infinity });
          if (guard && guard.version !== current.version) throw new FsError('FS_STALE_VERSION', `${what}: stale`);
          const result = correctEdit(decodeText(current.bytes, what), edit, what);
          await new Promise((resolve) => setImmediate(resolve)); // another edit reads the same bytes here
          const done = await base.swap(target, { ...options, expect: { kind: 'any' }, bytes: result.bytes });
          return { version: done.ok ? done.version! : current.version, replacements: result.replacements, lines: result.lines };
        },
      })),
  },
  {
    name: 'swap ignores its expectation',
    rule: 'G7',
    subject: () => subjectOver((base) => ({ ...base, swap: (target, request) => base.swap(target, { ...request, expect: { kind: 'any' } }) })),
  },
  {
    name: 'resolve follows a link only in the last path component',
    rule: 'P3',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async resolve(path, options) {
          const parent = posix.dirname(path);
          const last = await base.resolve(path, options);
          // The parent is taken as written: a link to a directory is never followed.
          return { targetKey: FsTargetKey(posix.join(parent, posix.basename(last.targetKey))), displayPath: path };
        },
      })),
  },
  {
    name: 'a dangling link is listed as a file',
    rule: 'P4',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async listDir(target, options) {
          return (await base.listDir(target, options)).map((e) => {
            if (e.type !== 'other') return e;
            try {
              return base.volume.lstatSync(posix.join(target.targetKey, e.name)).isSymbolicLink() ? { ...e, type: 'file' as const } : e;
            } catch {
              return e;
            }
          });
        },
      })),
  },
  {
    name: 'listing a file gives FS_NOT_FOUND',
    rule: 'P4',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        listDir: (target, options) =>
          base.listDir(target, options).catch((err: unknown) => {
            if (err instanceof FsError && err.code === 'FS_NOT_DIRECTORY') throw new FsError('FS_NOT_FOUND', err.message);
            throw err;
          }),
      })),
  },
  {
    name: 'listing a missing directory gives no entries',
    rule: 'P4',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        listDir: (target, options) =>
          base.listDir(target, options).catch((err: unknown) => {
            if (err instanceof FsError && err.code === 'FS_NOT_FOUND') return [];
            throw err;
          }),
      })),
  },
  {
    name: 'a path whose parent is a file gives FS_IO_ERROR',
    rule: 'P4',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        swap: (target, request) =>
          base.swap(target, request).catch((err: unknown) => {
            if (err instanceof FsError && err.code === 'FS_NOT_DIRECTORY') throw new FsError('FS_IO_ERROR', `${err.message} (ENOTDIR)`);
            throw err;
          }),
      })),
  },
  {
    name: 'mkdir over a file succeeds without a word',
    rule: 'D1',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async mkdir(target, options) {
          if ((await base.stat(target, options))?.type === 'file') return;
          return base.mkdir(target, options);
        },
      })),
  },
  {
    name: 'rmdir removes a non-empty directory without recursive',
    rule: 'D2',
    subject: () => subjectOver((base) => ({ ...base, rmdir: (target, options) => base.rmdir(target, { ...options, recursive: true }) })),
  },
  {
    name: 'rename copies, yields, then deletes',
    rule: 'D3',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async rename(from, to, options) {
          const info = await base.stat(from, options);
          if (info?.type !== 'file') return base.rename(from, to, options);
          const { bytes } = await base.read(from, { maxBytes: Infinity });
          const made = await base.swap(to, { expect: options.replace === false ? { kind: 'absent' } : { kind: 'any' }, bytes });
          if (!made.ok) throw new FsError('FS_ALREADY_EXISTS', 'the destination exists');
          await new Promise((resolve) => setImmediate(resolve)); // both names exist here
          await base.swap(from, { expect: { kind: 'any' }, bytes: null });
        },
      })),
  },
  {
    name: 'walk descends into links to directories',
    rule: 'D4',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async *walk(top, options) {
          const visit = async function* (dir: FsTarget, prefix: string, depth: number): AsyncGenerator<FsWalkEntry> {
            for (const entry of await base.listDir(dir, options)) {
              const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
              yield { ...entry, path };
              if (entry.type === 'directory' && depth < 40) yield* visit(entry.target, path, depth + 1);
            }
          };
          yield* visit(top, '', 0);
        },
      })),
  },
  {
    name: 'a narrowed walk leaves out files of other endings without saying how many',
    rule: 'D4',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async *walk(top, options) {
          const endings = options.narrow?.fileNameEndsWith;
          for await (const entry of depthFirst(top, (dir) => base.listDir(dir, options), options.prune ? { prune: options.prune } : {})) {
            if (endings && entry.type === 'file' && !endings.some((e) => entry.name.endsWith(e))) continue;
            yield entry;
          }
        },
      })),
  },
  {
    name: 'a narrowed walk also leaves out directories of other endings (and counts them)',
    rule: 'D4',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async *walk(top, options) {
          const endings = options.narrow?.fileNameEndsWith;
          for await (const entry of depthFirst(top, (dir) => base.listDir(dir, options), options.prune ? { prune: options.prune } : {})) {
            if (endings && entry.type !== 'other' && entry.path.includes('/') && !endings.some((e) => entry.name.endsWith(e))) {
              options.narrow!.leftOut(1);
              continue;
            }
            yield entry;
          }
        },
      })),
  },
  {
    name: 'listing loops: every directory also lists itself as a child',
    rule: 'D4',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async listDir(target, options) {
          const entries = await base.listDir(target, options);
          const self = posix.join(target.targetKey, 'again');
          return [...entries, { name: 'again', type: 'directory' as const, target: { targetKey: FsTargetKey(self), displayPath: posix.join(target.displayPath, 'again') } }];
        },
        walk: undefined,
      })),
  },
  {
    name: 'an absolute symlink that stays inside the root is refused',
    rule: 'P2',
    subject: () => rootedSubject('no-absolute'),
  },
  {
    name: 'readBytes truncates at maxBytes instead of refusing',
    rule: 'M1',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async read(target, options) {
          const whole = await base.read(target, { ...options, maxBytes: Infinity });
          return whole.bytes.byteLength <= options.maxBytes ? whole : { ...whole, bytes: whole.bytes.subarray(0, options.maxBytes) };
        },
      })),
  },
  {
    name: 'native edit re-encodes with a BOM only when the text has none (text starting with U+FEFF loses it)',
    rule: 'L4',
    subject: () =>
      subjectOver((base) =>
        withNativeEdit(base, (decoded, edit, what) => {
          const result = applyEdit(decoded.text, edit.oldString, edit.newString, edit.replaceAll);
          if (!result.ok) throw new FsError(result.error.code, `${what}: ${result.error.message}`);
          return { bytes: encodeText(result.text, decoded.bom), replacements: result.replacements, lines: result.lines };
        }),
      ),
  },
  {
    name: 'a root checked only lexically: links lead out',
    rule: 'P2',
    subject: () => rootedSubject('lexical'),
  },
  {
    name: 'an "overlay" made of unionfs over two memfs volumes: writes and deletes reach the lower',
    rule: 'O1',
    subject: unionOverlaySubject,
  },
  {
    name: 'swap decides `existed` by a stat before its atomic step',
    rule: 'G8',
    only: true,
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async swap(target, request) {
          const existed = (await base.stat(target, {})) !== undefined;
          await new Promise((resolve) => setImmediate(resolve)); // another creator publishes here
          const done = await base.swap(target, request);
          return done.ok ? { ...done, existed } : done;
        },
      })),
  },
  {
    name: 'a rename that may not replace checks its destination, awaits, then moves over it',
    rule: 'R1',
    only: true,
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async rename(from, to, options) {
          if (options.replace !== false) return base.rename(from, to, options);
          if ((await base.stat(to, options)) !== undefined) throw new FsError('FS_ALREADY_EXISTS', 'the destination exists');
          await new Promise((resolve) => setImmediate(resolve)); // a creator of the destination lands here
          return base.rename(from, to, { ...options, replace: true });
        },
      })),
  },
  {
    name: 'rename addresses both names by their display paths',
    rule: 'R2',
    only: true,
    subject: () =>
      subjectOver((base) => {
        const asWritten = (t: FsTarget): FsTarget => ({ targetKey: FsTargetKey(t.displayPath), displayPath: t.displayPath });
        return { ...base, rename: (from, to, options) => base.rename(asWritten(from), asWritten(to), options) };
      }),
  },
  {
    name: 'a write publishes a new file with the default mode, dropping the executable bit',
    rule: 'X1',
    only: true,
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async swap(target, request) {
          const done = await base.swap(target, request);
          if (done.ok && request.bytes !== null) base.volume.chmodSync(target.targetKey, 0o666);
          return done;
        },
      })),
  },
  {
    name: 'symlink stores its text normalised, as a path, not as written',
    rule: 'K1',
    only: true,
    subject: () =>
      subjectOver((base) => ({
        ...base,
        symlink: (target, linkText, options) => base.symlink!(target, posix.normalize(linkText), options),
      })),
  },
  {
    name: 'renameLink copies the link: the old name keeps a link too',
    rule: 'K2',
    only: true,
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async renameLink(from, to, options) {
          const text = String(base.volume.readlinkSync(from.targetKey));
          await base.renameLink!(from, to, options);
          base.volume.symlinkSync(text, from.targetKey);
        },
      })),
  },
  {
    name: 'a batch swaps its files one by one and stops at the first broken guard, keeping those before it',
    rule: 'B1',
    only: true,
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async applyBatch(swaps, options) {
          const versions = [];
          for (const [index, s] of swaps.entries()) {
            const done = await base.swap(s.target, { ...options, expect: s.expect, bytes: s.bytes });
            if (!done.ok) return { ok: false, index, current: done.current };
            versions.push(done.version);
          }
          return { ok: true, versions };
        },
      })),
  },
  {
    name: 'stat asked for no version skips the file and reports it as empty',
    rule: 'V5',
    // Not only V5: the seam's quota reads sizes through unversioned stats too, so Q1 catches it.
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async stat(target, options) {
          const info = await base.stat(target, options);
          return options.unversioned && info?.type === 'file' ? { ...info, size: 0 } : info;
        },
      })),
  },
  ...dirMutants,
  ...storeMutants,
];

/**
 * What people reach for first as an overlay: unionfs over an upper and a lower memfs volume,
 * behind a plain provider. unionfs tries each volume in turn for every call, so a write whose
 * directory exists only below, and every unlink of a lower file, lands in the lower.
 */
function unionOverlaySubject(): ConformanceSubject {
  const lowerProvider = createMemoryProvider({ files: { [BASE]: null } });
  const upper = new Volume();
  upper.mkdirSync(BASE, { recursive: true });
  const union = new Union().use(lowerProvider.volume as never).use(upper as never);
  const ufs = union as unknown as Volume;
  const stat = (key: string) => {
    try {
      return ufs.statSync(key);
    } catch {
      return undefined;
    }
  };
  const version = (key: string) => contentVersion(new Uint8Array(ufs.readFileSync(key) as Buffer));
  const provider: FsProvider = {
    async resolve(path) {
      return { targetKey: FsTargetKey(path), displayPath: path };
    },
    async stat(target) {
      const st = stat(target.targetKey);
      if (!st) return undefined;
      return st.isDirectory() ? { type: 'directory', version: FsVersion('dir') } : { type: 'file', version: version(target.targetKey), size: Number(st.size) };
    },
    async read(target, { maxBytes }) {
      const st = stat(target.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `cannot read "${target.displayPath}": not found`);
      if (st.isDirectory()) throw new FsError('FS_NOT_REGULAR_FILE', `cannot read "${target.displayPath}": a directory`);
      const bytes = new Uint8Array(ufs.readFileSync(target.targetKey) as Buffer);
      if (bytes.byteLength > maxBytes) throw new FsError('FS_TOO_LARGE', `cannot read "${target.displayPath}": too large`);
      return { bytes, version: contentVersion(bytes) };
    },
    async swap(target, { expect, bytes }) {
      const st = stat(target.targetKey);
      if (st?.isDirectory()) throw new FsError('FS_NOT_REGULAR_FILE', `cannot write "${target.displayPath}": a directory`);
      const now = st ? { version: version(target.targetKey) } : undefined;
      if (!expectHolds(expect, now)) return { ok: false, current: observe(now) };
      if (bytes === null) {
        if (now) ufs.unlinkSync(target.targetKey);
        return { ok: true, existed: now !== undefined };
      }
      ufs.mkdirSync(posix.dirname(target.targetKey), { recursive: true });
      ufs.writeFileSync(target.targetKey, Buffer.from(bytes));
      return { ok: true, existed: now !== undefined, version: contentVersion(bytes) };
    },
    async listDir(target) {
      const st = stat(target.targetKey);
      if (!st) throw new FsError('FS_NOT_FOUND', `cannot list "${target.displayPath}": not found`);
      if (!st.isDirectory()) throw new FsError('FS_NOT_DIRECTORY', `cannot list "${target.displayPath}": not a directory`);
      return (ufs.readdirSync(target.targetKey) as string[]).sort(compareNames).map((name) => {
        const key = posix.join(target.targetKey, name);
        const child = stat(key)!;
        return {
          name,
          type: child.isDirectory() ? ('directory' as const) : ('file' as const),
          target: { targetKey: FsTargetKey(key), displayPath: posix.join(target.displayPath, name) },
          ...(child.isDirectory() ? {} : { size: Number(child.size) }),
        };
      });
    },
    async mkdir(target) {
      ufs.mkdirSync(target.targetKey, { recursive: true });
    },
    async rmdir(target, { recursive }) {
      ufs.rmSync(target.targetKey, { recursive });
    },
    async rename(from, to) {
      ufs.renameSync(from.targetKey, to.targetKey);
    },
  };
  return { fs: createFs(provider), provider, lower: createFs(lowerProvider), base: BASE };
}
