import { posix } from 'node:path';
import { isWithin } from '../../seam/index.js';
import { lowerStat, pathTarget, type OverlayCore } from './core.js';
import { layerChange } from './state-history.js';
import type { UpperChange, UpperEntry, UpperSnapshot } from './state-types.js';

/**
 * The change a rewind of `roots` makes: at and below each root the layer becomes `target`'s,
 * and the directories above a root that the view at the checkpoint showed are shown again (so
 * what comes back has its parents), with nothing else of them: where one was a removed lower
 * directory, the lower shows again but for its other children, which stay hidden.
 */
export async function rewindPathsChange(
  core: Pick<OverlayCore, 'lower' | 'rootKey'>,
  live: UpperSnapshot,
  target: UpperSnapshot,
  roots: readonly string[],
  signal: AbortSignal | undefined,
): Promise<UpperChange> {
  const inRoot = (key: string) => roots.some((r) => isWithin(r, key));
  const change = layerChange(live, target, inRoot);
  const out = new Parts(change);
  const onPath = new Set<string>();
  for (const r of roots) for (let d = r; d !== '/' && !onPath.has(d); d = posix.dirname(d)) onPath.add(d);
  const isDir = async (key: string) => (await lowerStat(core.lower, pathTarget(key), signal))?.type === 'directory';
  const done = new Set<string>();
  for (const r of roots) {
    if (!(await shows(core, target, r, signal))) continue;
    const chain: string[] = [];
    for (let d = posix.dirname(r); d !== '/' && isWithin(core.rootKey, d) && d !== core.rootKey; d = posix.dirname(d)) chain.unshift(d);
    // Whether the lower shows below the ancestor, in the layer now and after the change.
    let wasHidden = false;
    let nowHidden = false;
    for (const [i, d] of chain.entries()) {
      const next = chain[i + 1] ?? r;
      if (inRoot(d)) break;
      const first = !done.has(d);
      done.add(d);
      if (first && !(await showsDirectory(core, live, d, signal))) out.restore(d, live, target);
      wasHidden ||= live.opaque.has(d) || live.entries.get(d) !== undefined;
      nowHidden ||= out.hides(d, live);
      if (first && wasHidden && !nowHidden && (await isDir(d))) await out.hideChildren(core, d, live, (c) => c === next || onPath.has(c) || inRoot(c), signal);
    }
  }
  return out.change();
}

/** The pieces of a rewind's change, keyed so that no key is changed twice. */
class Parts {
  readonly #entries = new Map<string, UpperEntry | undefined>();
  readonly #addDirs: string[];
  readonly #addOpaque: string[];
  readonly #dropOpaque: string[];
  readonly #base: UpperChange;

  constructor(base: UpperChange) {
    this.#base = base;
    for (const [k, e] of base.entries ?? []) this.#entries.set(k, e);
    this.#addDirs = [...(base.addDirs ?? [])];
    this.#addOpaque = [...(base.addOpaque ?? [])];
    this.#dropOpaque = [...(base.dropOpaque ?? [])];
  }

  /** Makes `d` itself what `target` had there (its entry, made directory and opacity). */
  restore(d: string, live: UpperSnapshot, target: UpperSnapshot): void {
    const entry = target.entries.get(d);
    if (live.entries.get(d) !== entry) this.#entries.set(d, entry);
    if (target.dirs.has(d) && !live.dirs.has(d)) this.#addDirs.push(d);
    if (live.opaque.has(d) && !target.opaque.has(d)) this.#dropOpaque.push(d);
    if (!live.opaque.has(d) && target.opaque.has(d)) this.#addOpaque.push(d);
  }

  /** True when, after the change, the upper hides the lower at and below `d`. */
  hides(d: string, live: UpperSnapshot): boolean {
    const entry = this.#entries.has(d) ? this.#entries.get(d) : live.entries.get(d);
    const opaque = this.#addOpaque.includes(d) || (live.opaque.has(d) && !this.#dropOpaque.includes(d));
    return opaque || entry !== undefined;
  }

  /** Keeps the lower's children of `d` hidden (but those `keep` selects) that the upper does not hide itself. */
  async hideChildren(
    core: Pick<OverlayCore, 'lower'>,
    d: string,
    live: UpperSnapshot,
    keep: (key: string) => boolean,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    for (const child of await core.lower.listDir(pathTarget(d), { signal })) {
      const c = child.target.targetKey;
      if (keep(c) || this.#entries.has(c) || live.entries.get(c) !== undefined || live.opaque.has(c)) continue;
      if (child.type === 'directory') {
        this.#addOpaque.push(c);
        continue;
      }
      const info = child.type === 'file' ? await lowerStat(core.lower, child.target, signal) : undefined;
      this.#entries.set(c, { kind: 'whiteout', base: info?.type === 'file' ? info.version : undefined });
    }
  }

  change(): UpperChange {
    return { ...this.#base, entries: [...this.#entries], addDirs: this.#addDirs, addOpaque: this.#addOpaque, dropOpaque: this.#dropOpaque };
  }
}

/** True when `layer`'s view (over the lower) shows something at `key`. */
async function shows(core: Pick<OverlayCore, 'lower'>, layer: UpperSnapshot, key: string, signal: AbortSignal | undefined): Promise<boolean> {
  const e = layer.entries.get(key);
  if (e !== undefined && e.kind !== 'whiteout') return true;
  if (layer.dirs.has(key)) return true;
  if (e === undefined && !hiddenAbove(layer, key) && (await lowerStat(core.lower, pathTarget(key), signal)) !== undefined) return true;
  return holdsBelow(layer, key);
}

/** True when `layer`'s view shows a directory at `key`. */
async function showsDirectory(core: Pick<OverlayCore, 'lower'>, layer: UpperSnapshot, key: string, signal: AbortSignal | undefined): Promise<boolean> {
  const e = layer.entries.get(key);
  if (e !== undefined && e.kind !== 'whiteout') return false;
  if (layer.dirs.has(key)) return true;
  if (e === undefined && !hiddenAbove(layer, key) && (await lowerStat(core.lower, pathTarget(key), signal))?.type === 'directory') return true;
  return holdsBelow(layer, key);
}

/** True when the upper hides the lower at `key`: a removed directory at or above it, or an entry above it. */
function hiddenAbove(layer: UpperSnapshot, key: string): boolean {
  if (layer.opaque.has(key)) return true;
  for (let k = posix.dirname(key); ; k = posix.dirname(k)) {
    if (layer.opaque.has(k) || layer.entries.get(k) !== undefined) return true;
    if (k === '/') return false;
  }
}

/** True when `layer` holds a file or link, or made a directory, strictly below `key` (a scan: rewinds of paths only). */
function holdsBelow(layer: UpperSnapshot, key: string): boolean {
  const prefix = key === '/' ? '/' : `${key}/`;
  for (const [k, e] of layer.entries) if (e.kind !== 'whiteout' && k.startsWith(prefix)) return true;
  for (const d of layer.dirs) if (d.startsWith(prefix)) return true;
  return false;
}
