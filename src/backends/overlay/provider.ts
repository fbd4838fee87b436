import { posix } from 'node:path';
import {
  FsError,
  FsTargetKey,
  FsVersion,
  checkRename,
  checkRmdir,
  compareNames,
  contentVersion,
  expectHolds,
  isFsError,
  isWithin,
  observe,
  throwIfAborted,
  type FsCurrent,
  type FsDirEntry,
  type FsInfo,
  type FsProvider,
  type FsSwapResult,
  type FsTarget,
  type RenameSide,
} from '../../seam/index.js';
import { TREE_LOCK, WHOLE_FILE, type OverlayCore, lowerStat, lowerIfSame, pathTarget, bytesEqual, isHidden, hasUpperDescendant, isChild, hasUpperChild, notRegular, notDirectory } from './core.js';
import type { UpperEntry, UpperFile, UpperOrigin } from './state.js';
import { createOverlaySetExecutable } from './modes.js';
import { createOverlayLinks, resolveInView, upperLinkEntry } from './links.js';
import { applyOverlayBatch, type PlannedSwap, type SwapPlanRequest } from './batch.js';

/**
 * The overlay as a storage provider. Target keys are the lower's (canonical absolute paths), so
 * aliases resolve as the lower resolves them; text semantics come from the seam.
 */
export function createOverlayProvider(core: OverlayCore): FsProvider {
  const { lower, state, rootKey, lock } = core;

  /**
   * The view's file at `target` without reading any content: its version (undefined when there is
   * none), the upper entry, and the lower's stat when the view shows the lower.
   */
  async function viewVersion(target: FsTarget, what: string, signal: AbortSignal | undefined) {
    const key = target.targetKey;
    const entry = state.entries.get(key);
    if (entry?.kind === 'file') return { version: entry.version, entry };
    if (state.dirs.has(key)) throw notRegular(what);
    if (entry) return { version: undefined, entry };
    const info = await visibleLowerStat(target, signal);
    if (info === undefined) {
      if (hasUpperDescendant(state, key)) throw notRegular(what);
      return { version: undefined };
    }
    if (info.type !== 'file') throw notRegular(what);
    return { version: info.version, lower: info };
  }

  /** Ancestors (nearest first) that the view lacks and a new file at `key` needs. */
  async function dirsToCreate(key: string, what: string, signal: AbortSignal | undefined): Promise<string[]> {
    const out: string[] = [];
    for (let dir = posix.dirname(key); isWithin(rootKey, dir); dir = posix.dirname(dir)) {
      const entry = state.entries.get(dir);
      if (entry?.kind === 'file') throw notDirectory(what);
      if (state.dirs.has(dir)) break;
      if (!entry) {
        const info = await visibleLowerStat(pathTarget(dir), signal);
        if (info?.type === 'directory') break;
        if (info) throw notDirectory(what);
        if (hasUpperDescendant(state, dir)) break;
      }
      out.push(dir);
      if (dir === '/') break;
    }
    return out;
  }

  /** The lower's stat where the view shows the lower: nothing at or below a removed directory. */
  async function visibleLowerStat(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    return isHidden(state, target.targetKey) ? undefined : lowerStat(lower, target, signal);
  }

  async function mergedDirVersion(target: FsTarget, signal: AbortSignal | undefined): Promise<FsVersion> {
    const names = (await listMerged(target, signal)).map((e) => e.name);
    // The memory provider's formula, so an unchanged directory keeps its version across layers.
    return FsVersion(`dir:${contentVersion(Buffer.from(names.join('\0')))}`);
  }

  async function listMerged(target: FsTarget, signal: AbortSignal | undefined): Promise<FsDirEntry[]> {
    const key = target.targetKey;
    const what = `cannot list "${target.displayPath}"`;
    const own = state.entries.get(key);
    if (own?.kind === 'file') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
    const madeHere = state.dirs.has(key);
    if (own && !madeHere) throw new FsError('FS_NOT_FOUND', `${what}: not found`);

    let lowerEntries: FsDirEntry[] = [];
    if (!own && isHidden(state, key)) {
      if (!madeHere && !hasUpperDescendant(state, key)) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
    } else if (!own) {
      try {
        lowerEntries = await lower.listDir(target, { signal });
      } catch (err) {
        const absent = isFsError(err, 'FS_NOT_FOUND') || isFsError(err, 'FS_NOT_DIRECTORY');
        if (!(absent && (madeHere || hasUpperDescendant(state, key)))) throw err;
      }
    }

    const entries = state.entries;
    const out: FsDirEntry[] = [];
    const seen = new Set<string>();
    // Upper links, typed by what they lead to once the scans are done.
    const links: string[] = [];
    const entryFor = (name: string, childKey: string, file: UpperFile | undefined): FsDirEntry => ({
      name,
      type: file ? 'file' : 'directory',
      target: { targetKey: FsTargetKey(childKey), displayPath: posix.join(target.displayPath, name) },
      ...(file ? { size: file.bytes.byteLength, mtimeMs: file.mtimeMs, executable: file.executable === true } : {}),
    });

    for (const e of lowerEntries) {
      seen.add(e.name);
      const childKey = posix.join(key, e.name);
      const child = entries.get(childKey);
      if (child?.kind === 'file') out.push(entryFor(e.name, childKey, child));
      else if (child?.kind === 'link') links.push(e.name);
      else if (state.dirs.has(childKey)) out.push(entryFor(e.name, childKey, undefined));
      else if (child || state.opaque.has(childKey)) continue; // whited out, or a removed directory
      else if (e.target.targetKey !== childKey) {
        // A lower symlink: its type is whatever the view holds at the link's target.
        const linked = entries.get(e.target.targetKey);
        const cut = isHidden(state, e.target.targetKey);
        const display = { ...e.target, displayPath: posix.join(target.displayPath, e.name) };
        if (linked?.kind === 'file') {
          out.push({ name: e.name, type: 'file', target: display, size: linked.bytes.byteLength, mtimeMs: linked.mtimeMs, executable: linked.executable === true });
        }
        else if (state.dirs.has(e.target.targetKey)) out.push({ name: e.name, type: 'directory', target: display });
        else if (linked || (cut && !hasUpperDescendant(state, e.target.targetKey))) out.push({ name: e.name, type: 'other', target: display });
        else if (cut) out.push({ name: e.name, type: 'directory', target: display });
        else out.push({ ...e, target: display });
      } else out.push({ ...e, target: { ...e.target, displayPath: posix.join(target.displayPath, e.name) } });
    }

    const prefix = key === '/' ? '/' : `${key}/`;
    // forEach: a whole-map scan, faster than iterating the persistent map.
    entries.forEach((child, childKey) => {
      if (child.kind === 'whiteout' || !isChild(prefix, childKey)) return;
      const name = childKey.slice(prefix.length);
      if (!seen.has(name)) {
        seen.add(name);
        if (child.kind === 'link') links.push(name);
        else out.push(entryFor(name, childKey, child));
      }
    });
    for (const name of links) out.push(await upperLinkEntry(core, provider.stat, target, name, signal));
    for (const dir of state.dirs) {
      if (!isChild(prefix, dir)) continue;
      const name = dir.slice(prefix.length);
      if (!seen.has(name)) {
        seen.add(name);
        out.push(entryFor(name, dir, undefined));
      }
    }
    throwIfAborted(signal, what);
    return out.sort((a, b) => compareNames(a.name, b.name));
  }

  /** What a rename's checks need of one name in the view. */
  async function renameSide(target: FsTarget, signal: AbortSignal | undefined): Promise<RenameSide | undefined> {
    const info = await provider.stat(target, { signal });
    if (info?.type !== 'directory') return info && { type: info.type, version: info.version };
    return { type: 'directory', version: info.version, empty: (await listMerged(target, signal)).length === 0 };
  }

  /**
   * Everything the view has at and below a directory: its files and directories (real children
   * only), and anything else (symlinks, special files), by key. Directories come parents first.
   */
  async function viewTree(top: FsTarget, signal: AbortSignal | undefined) {
    const files: string[] = [];
    const dirs: string[] = [top.targetKey];
    const other: string[] = [];
    for (let i = 0; i < dirs.length; i++) {
      const dir = dirs[i]!;
      for (const e of await listMerged(pathTarget(dir), signal)) {
        const own = posix.join(dir, e.name);
        if (e.target.targetKey !== own || e.type === 'other') other.push(own);
        else if (e.type === 'directory') dirs.push(own);
        else files.push(own);
      }
    }
    return { files, dirs, other };
  }

  /**
   * Whether an upper file going from `key` must leave a whiteout: only when the lower has something
   * there (no whiteouts for nothing), and not when that is the lower directory the overlay removed
   * at this very key (its removal is already recorded; a whiteout would read as a file deleted
   * where there was none). A lower file hidden by a removed ancestor keeps its whiteout.
   */
  async function needsWhiteout(key: string, signal: AbortSignal | undefined): Promise<boolean> {
    const below = await lowerStat(lower, pathTarget(key), signal);
    return below !== undefined && !(below.type === 'directory' && state.opaque.has(key));
  }

  /**
   * The upper entry a view file leaves behind when it goes (removed or moved away): a whiteout
   * with its base when the lower has a file there, else nothing.
   */
  async function leavingEntry(key: string, signal: AbortSignal | undefined): Promise<UpperEntry | undefined> {
    const entry = state.entries.get(key);
    if (entry?.kind === 'file') {
      if (entry.base !== undefined) return { kind: 'whiteout', base: entry.base };
      return (await needsWhiteout(key, signal)) ? { kind: 'whiteout', base: undefined } : undefined;
    }
    const info = await visibleLowerStat(pathTarget(key), signal);
    return { kind: 'whiteout', base: info?.type === 'file' ? info.version : undefined };
  }

  /** A directory of the view goes: the overlay forgets it, and a lower one is cut off (opaque). */
  async function leaveDirectory(
    dir: string,
    change: { dropDirs: string[]; addOpaque: string[] },
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (state.dirs.has(dir)) change.dropDirs.push(dir);
    if ((await visibleLowerStat(pathTarget(dir), signal))?.type === 'directory') change.addOpaque.push(dir);
  }

  /** The upper file a moved view file becomes at `key`: its bytes, where it came from, and the base there. */
  async function arrivingEntry(from: FsTarget, key: string, signal: AbortSignal | undefined): Promise<UpperEntry | undefined> {
    const entry = state.entries.get(from.targetKey);
    let bytes: Uint8Array;
    let origin: UpperOrigin | undefined;
    let executable: boolean;
    if (entry?.kind === 'file') {
      bytes = entry.bytes;
      executable = entry.executable === true;
      // A file made in the overlay has no lower origin: it is simply added at its new name.
      origin = entry.origin ?? (entry.base === undefined ? undefined : { path: from.targetKey });
    } else {
      const current = await lower.readBytes(from, { maxBytes: WHOLE_FILE, signal });
      bytes = current.bytes;
      executable = (await lowerStat(lower, from, signal))?.executable === true;
      origin = { path: from.targetKey, version: contentVersion(bytes) };
    }
    const there = state.entries.get(key);
    const base = there ? there.base : await visibleLowerStat(pathTarget(key), signal).then((i) => (i?.type === 'file' ? i.version : undefined));
    // As for writes: bytes the lower already holds there need no upper copy (moving a file back).
    const lowerNow = isHidden(state, key) ? undefined : await lowerIfSame(lower, pathTarget(key), bytes, signal);
    if (lowerNow !== undefined && bytesEqual(lowerNow.bytes, bytes) && lowerNow.executable === executable) return undefined;
    const version = contentVersion(bytes);
    const mtimeMs = entry?.kind === 'file' ? entry.mtimeMs : Date.now();
    return { kind: 'file', bytes, version, mtimeMs, base, ...(origin ? { origin } : {}), ...(executable ? { executable: true } : {}) };
  }

  /**
   * What a swap does, without doing it: its result, and the upper change that publishes it
   * (none when nothing changes). Undefined when it would create a file and `creating` is false
   * (the caller then takes the tree lock and asks again). A write with `from` moves that file here.
   */
  async function planSwap(swap: SwapPlanRequest, signal: AbortSignal | undefined, creating: boolean): Promise<PlannedSwap | undefined> {
    const { target, expect, bytes } = swap;
    const key = target.targetKey;
    const what = `cannot ${bytes === null ? 'remove' : 'write'} "${target.displayPath}"`;
    const view = await viewVersion(target, what, signal);
    const before = view.version === undefined ? undefined : { version: view.version };
    if (!expectHolds(expect, before)) return { result: { ok: false, current: observe(before) } };
    const existed = before !== undefined;
    if (!existed && bytes !== null && !creating) return undefined;
    throwIfAborted(signal, what);
    if (bytes === null) {
      if (!existed) return { result: { ok: true, existed } };
      let next: UpperEntry | undefined;
      if (view.entry) {
        next = (await needsWhiteout(key, signal)) ? { kind: 'whiteout', base: view.entry.base } : undefined;
      } else {
        next = { kind: 'whiteout', base: view.lower?.version };
      }
      return { result: { ok: true, existed }, change: { entries: [[key, next]] } };
    }
    const addDirs = existed ? [] : await dirsToCreate(key, what, signal);
    throwIfAborted(signal, what);
    // A file replaced keeps its executable bit (X1); a moved one brings its own, and where it came from.
    const moved = swap.from === undefined ? undefined : await movedFrom(swap.from, signal);
    const executable = moved ? moved.executable : view.entry?.kind === 'file' ? view.entry.executable === true : view.lower?.executable === true;
    // Bytes the lower already holds need no upper copy: the path shows the lower, at its version.
    // (Not below a removed directory: there the lower is hidden, so the copy is the file.)
    const lowerNow = isHidden(state, key) ? undefined : await lowerIfSame(lower, target, bytes, signal);
    if (lowerNow !== undefined && bytesEqual(lowerNow.bytes, bytes) && lowerNow.executable === executable) {
      const change = view.entry || addDirs.length > 0 ? { entries: [[key, undefined]] as [string, undefined][], addDirs } : undefined;
      return { result: { ok: true, existed, version: lowerNow.version }, ...(change ? { change } : {}) };
    }
    const version = contentVersion(bytes);
    const base = view.entry ? view.entry.base : view.lower?.version;
    // A moved file keeps where it came from when rewritten (changes() shows a rename with edits).
    const origin = moved ? moved.origin : view.entry?.kind === 'file' ? view.entry.origin : undefined;
    const file: UpperFile = { kind: 'file', bytes, version, mtimeMs: Date.now(), base, ...(origin ? { origin } : {}), ...(executable ? { executable: true } : {}) };
    return { result: { ok: true, existed, version }, change: { entries: [[key, file]], addDirs } };
  }

  /** What a file moved away from `from` brings along: its executable bit and its origin. */
  async function movedFrom(from: FsTarget, signal: AbortSignal | undefined): Promise<{ executable: boolean; origin: UpperOrigin | undefined }> {
    const entry = state.entries.get(from.targetKey);
    if (entry?.kind === 'file') {
      return { executable: entry.executable === true, origin: entry.origin ?? (entry.base === undefined ? undefined : { path: from.targetKey }) };
    }
    const info = await visibleLowerStat(from, signal);
    return { executable: info?.executable === true, origin: info?.type === 'file' ? { path: from.targetKey, version: info.version } : undefined };
  }

  /**
   * Runs `fn` holding the lock of every key at and below the given names, in sorted order, and
   * then the tree lock: the order every other path uses (a key, then the tree lock), so no
   * deadlock. Creates take the tree lock, so once it is held the set cannot grow; if it grew
   * before, start again with the larger set.
   */
  async function withSubtreeLocks<T>(tops: FsTarget[], signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    const keysNow = async () => {
      const keys = new Set<string>();
      for (const top of tops) {
        keys.add(top.targetKey);
        if ((await provider.stat(top, { signal }))?.type !== 'directory') continue;
        const tree = await viewTree(top, signal);
        for (const k of [...tree.files, ...tree.dirs]) keys.add(k);
      }
      return [...keys].sort();
    };
    for (let attempt = 1; ; attempt++) {
      const keys = await keysNow();
      const result = await lockAll(keys, async () =>
        lock.run(TREE_LOCK, async () => {
          const now = await keysNow();
          if (now.some((k) => !keys.includes(k))) return { retry: true as const };
          return { retry: false as const, value: await fn() };
        }),
      );
      if (!result.retry) return result.value;
      throwIfAborted(signal, 'the directory kept changing');
      if (attempt >= 20) throw new FsError('FS_STALE_VERSION', 'the directory kept changing while it was being moved or removed; try again');
    }
  }

  function lockAll<T>(keys: readonly string[], fn: () => Promise<T>, i = 0): Promise<T> {
    return i >= keys.length ? fn() : lock.run(keys[i]!, () => lockAll(keys, fn, i + 1));
  }

  const provider: FsProvider = {
    ...(lower.root === undefined ? {} : { root: lower.root }),
    cwd: lower.cwd,

    async resolve(path, { signal }) {
      if (!state.hasLinks) return lower.resolve(path, { signal });
      return { targetKey: FsTargetKey(await resolveInView(core, path, signal)), displayPath: path };
    },

    contains: (parent, child) => lower.contains(parent, child),

    async stat(target, { signal }): Promise<FsInfo | undefined> {
      const key = target.targetKey;
      const entry = state.entries.get(key);
      if (entry?.kind === 'file') return { type: 'file', version: entry.version, size: entry.bytes.byteLength, mtimeMs: entry.mtimeMs, executable: entry.executable === true };
      if (entry?.kind === 'link') {
        // Named by itself (resolved with noFollow): what it leads to, as stat follows links (P4).
        const to = await resolveInView(core, key, signal).catch(() => undefined);
        return to === undefined || to === key ? undefined : provider.stat(pathTarget(to), { signal });
      }
      if (state.dirs.has(key)) return { type: 'directory', version: await mergedDirVersion(target, signal) };
      if (entry) return undefined;
      const info = await visibleLowerStat(target, signal);
      if (info?.type === 'directory') {
        return hasUpperChild(state, key) ? { type: 'directory', version: await mergedDirVersion(target, signal) } : info;
      }
      if (info === undefined && hasUpperDescendant(state, key)) {
        return { type: 'directory', version: await mergedDirVersion(target, signal) };
      }
      return info;
    },

    async read(target, { maxBytes, signal }): Promise<FsCurrent> {
      const key = target.targetKey;
      const what = `cannot read "${target.displayPath}"`;
      const entry = state.entries.get(key);
      if (entry?.kind === 'file') {
        if (entry.bytes.byteLength > maxBytes) {
          throw new FsError('FS_TOO_LARGE', `${what}: ${entry.bytes.byteLength} bytes exceeds the ${maxBytes}-byte limit`);
        }
        // A copy: callers own what they read, and must not reach into the upper layer.
        return { bytes: new Uint8Array(entry.bytes), version: entry.version };
      }
      if (state.dirs.has(key)) throw notRegular(what);
      if (entry) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      if (isHidden(state, key)) {
        if (hasUpperDescendant(state, key)) throw notRegular(what);
        throw new FsError('FS_NOT_FOUND', `${what}: not found`);
      }
      try {
        return await lower.readBytes(target, { maxBytes, signal });
      } catch (err) {
        if (isFsError(err, 'FS_NOT_FOUND') && hasUpperDescendant(state, key)) throw notRegular(what);
        throw err;
      }
    },

    swap(target, { expect, bytes, signal }) {
      const attempt = async (creating: boolean): Promise<FsSwapResult | undefined> => {
        const planned = await planSwap({ target, expect, bytes }, signal, creating);
        if (planned?.change) await state.apply(planned.change);
        return planned?.result;
      };
      return lock.run(target.targetKey, async () => {
        // Creating a file changes the tree (new directories, a name that a sibling create may need
        // as a directory), so creates also hold the tree lock; rewrites of a file do not.
        return (await attempt(false)) ?? lock.run(TREE_LOCK, async () => (await attempt(true))!);
      });
    },

    applyBatch: (swaps, { signal }) => applyOverlayBatch({ lock, treeLock: TREE_LOCK, state, lockAll, planSwap }, swaps, signal),

    async mkdir(target, { signal }) {
      const what = `cannot create directory "${target.displayPath}"`;
      await lock.run(TREE_LOCK, async () => {
        const info = await provider.stat(target, { signal });
        if (info?.type === 'directory') return;
        if (info !== undefined) throw notDirectory(what);
        const addDirs = [target.targetKey, ...(await dirsToCreate(target.targetKey, what, signal))];
        await state.apply({ addDirs });
      });
    },

    async rmdir(target, { recursive, signal }) {
      const what = `cannot remove directory "${target.displayPath}"`;
      await withSubtreeLocks([target], signal, async () => {
        const info = await provider.stat(target, { signal });
        if (info === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
        if (info.type !== 'directory') throw new FsError('FS_NOT_DIRECTORY', `${what}: not a directory`);
        checkRmdir(what, (await listMerged(target, signal)).length, recursive);
        const tree = await viewTree(target, signal);
        const change: { entries: [string, UpperEntry | undefined][]; dropDirs: string[]; addOpaque: string[] } = {
          entries: [],
          dropDirs: [],
          addOpaque: [],
        };
        for (const file of tree.files) change.entries.push([file, await leavingEntry(file, signal)]);
        for (const dir of tree.dirs) await leaveDirectory(dir, change, signal);
        // Links made in the overlay go with it.
        for (const key of tree.other) if (state.entries.get(key)?.kind === 'link') change.entries.push([key, undefined]);
        throwIfAborted(signal, what);
        // A lower symlink or special file below stays in the lower, hidden (commit then finds the
        // directory not empty).
        await state.apply(change);
      });
    },

    async rename(from, to, { expect, replace, signal }) {
      const what = `cannot move "${from.displayPath}" to "${to.displayPath}"`;
      await withSubtreeLocks([from, to], signal, async () => {
        const source = await renameSide(from, signal);
        const dest = await renameSide(to, signal);
        const replacing = checkRename(what, source, dest, { expect, replace });
        const change: { entries: [string, UpperEntry | undefined][]; dropDirs: string[]; addDirs: string[]; addOpaque: string[] } = {
          entries: [],
          dropDirs: [],
          addDirs: [],
          addOpaque: [],
        };
        if (replacing === 'none') change.addDirs.push(...(await dirsToCreate(to.targetKey, what, signal)));
        // The destination's name is taken by what arrives; an empty lower directory there goes.
        if (replacing === 'directory') await leaveDirectory(to.targetKey, change, signal);
        const moved = new Map<string, UpperEntry | undefined>();
        const mapKey = (key: string) => to.targetKey + key.slice(from.targetKey.length);
        if (source!.type === 'file') {
          moved.set(from.targetKey, await leavingEntry(from.targetKey, signal));
          moved.set(to.targetKey, await arrivingEntry(from, to.targetKey, signal));
        } else {
          const tree = await viewTree(from, signal);
          if (tree.other.length > 0) {
            throw new FsError('FS_NOT_REGULAR_FILE', `${what}: the overlay cannot move "${tree.other[0]}" (a symlink or special file) inside the directory`);
          }
          // Sources first: a destination key may be a source key too only when moving onto itself.
          for (const file of tree.files) moved.set(file, await leavingEntry(file, signal));
          for (const file of tree.files) moved.set(mapKey(file), await arrivingEntry(pathTarget(file), mapKey(file), signal));
          for (const dir of tree.dirs) await leaveDirectory(dir, change, signal);
          for (const dir of tree.dirs) change.addDirs.push(mapKey(dir));
        }
        throwIfAborted(signal, what);
        change.entries.push(...moved);
        // A directory both left and arrived at (moving onto an empty one) stays.
        const arriving = new Set(change.addDirs);
        change.dropDirs = change.dropDirs.filter((d) => !arriving.has(d));
        await state.apply(change);
      });
    },

    listDir: (target, { signal }) => listMerged(target, signal),

    setExecutable: createOverlaySetExecutable(core),

    ...createOverlayLinks(core),

  };
  return provider;
}
