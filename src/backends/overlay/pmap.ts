/**
 * A persistent (immutable) hash map from strings: every change returns a new map that shares
 * all untouched parts with the old one (a hash array mapped trie, 32-way). Forking an overlay
 * shares its maps as they are, in constant time; later changes copy only the path they touch
 * (about log32 n nodes), so a lookup costs the same however many forks lie in between.
 */

const BITS = 5;
const MASK = (1 << BITS) - 1;
/** 32-bit hashes, 5 bits per level: below this depth all keys share their hash (a collision bucket). */
const MAX_SHIFT = 30;

interface Branch<V> {
  readonly kind: 0;
  readonly bitmap: number;
  readonly slots: readonly Slot<V>[];
}

interface Leaf<V> {
  readonly kind: 1;
  readonly hash: number;
  readonly key: string;
  readonly value: V;
}

interface Bucket<V> {
  readonly kind: 2;
  readonly hash: number;
  readonly pairs: readonly (readonly [string, V])[];
}

type Slot<V> = Branch<V> | Leaf<V> | Bucket<V>;

const EMPTY_BRANCH: Branch<never> = { kind: 0, bitmap: 0, slots: [] };

function hashOf(key: string): number {
  // FNV-1a over UTF-16 code units.
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

function getIn<V>(node: Slot<V>, hash: number, key: string, shift: number): V | undefined {
  for (;;) {
    if (node.kind === 1) return node.key === key ? node.value : undefined;
    if (node.kind === 2) {
      if (node.hash !== hash) return undefined;
      for (const [k, v] of node.pairs) if (k === key) return v;
      return undefined;
    }
    const bit = 1 << ((hash >>> shift) & MASK);
    if ((node.bitmap & bit) === 0) return undefined;
    node = node.slots[popcount(node.bitmap & (bit - 1))]!;
    shift += BITS;
  }
}

/** Two leaves (or a leaf and a bucket) of different keys under one new branch at `shift`. */
function merge<V>(a: Leaf<V> | Bucket<V>, b: Leaf<V>, shift: number): Slot<V> {
  if (a.hash === b.hash || shift > MAX_SHIFT) {
    const pairs = a.kind === 1 ? [[a.key, a.value] as const] : a.pairs;
    return { kind: 2, hash: b.hash, pairs: [...pairs, [b.key, b.value]] };
  }
  const ia = (a.hash >>> shift) & MASK;
  const ib = (b.hash >>> shift) & MASK;
  if (ia === ib) return { kind: 0, bitmap: 1 << ia, slots: [merge(a, b, shift + BITS)] };
  return { kind: 0, bitmap: (1 << ia) | (1 << ib), slots: ia < ib ? [a, b] : [b, a] };
}

/** The node with `leaf` set; `added` tells whether the key was new. */
function setIn<V>(node: Slot<V>, leaf: Leaf<V>, shift: number, added: { value: boolean }): Slot<V> {
  if (node.kind === 1) {
    if (node.key === leaf.key) return node.value === leaf.value ? node : leaf;
    added.value = true;
    return merge(node, leaf, shift);
  }
  if (node.kind === 2) {
    if (node.hash !== leaf.hash) {
      added.value = true;
      // Different hashes: split by the bits at this level (buckets only form at equal hashes).
      return splitBucket(node, leaf, shift);
    }
    const i = node.pairs.findIndex(([k]) => k === leaf.key);
    if (i >= 0) {
      if (node.pairs[i]![1] === leaf.value) return node;
      const pairs = [...node.pairs];
      pairs[i] = [leaf.key, leaf.value];
      return { kind: 2, hash: node.hash, pairs };
    }
    added.value = true;
    return { kind: 2, hash: node.hash, pairs: [...node.pairs, [leaf.key, leaf.value]] };
  }
  const bit = 1 << ((leaf.hash >>> shift) & MASK);
  const at = popcount(node.bitmap & (bit - 1));
  if ((node.bitmap & bit) === 0) {
    added.value = true;
    const slots = [...node.slots];
    slots.splice(at, 0, leaf);
    return { kind: 0, bitmap: node.bitmap | bit, slots };
  }
  const child = node.slots[at]!;
  const next = setIn(child, leaf, shift + BITS, added);
  if (next === child) return node;
  const slots = [...node.slots];
  slots[at] = next;
  return { kind: 0, bitmap: node.bitmap, slots };
}

function splitBucket<V>(bucket: Bucket<V>, leaf: Leaf<V>, shift: number): Slot<V> {
  const ia = (bucket.hash >>> shift) & MASK;
  const ib = (leaf.hash >>> shift) & MASK;
  if (ia === ib) return { kind: 0, bitmap: 1 << ia, slots: [splitBucket(bucket, leaf, shift + BITS)] };
  return { kind: 0, bitmap: (1 << ia) | (1 << ib), slots: ia < ib ? [bucket, leaf] : [leaf, bucket] };
}

/** The node without `key` (undefined when it is left empty); the same node when the key is absent. */
function deleteIn<V>(node: Slot<V>, hash: number, key: string, shift: number): Slot<V> | undefined {
  if (node.kind === 1) return node.key === key ? undefined : node;
  if (node.kind === 2) {
    if (node.hash !== hash) return node;
    const pairs = node.pairs.filter(([k]) => k !== key);
    if (pairs.length === node.pairs.length) return node;
    if (pairs.length === 1) return { kind: 1, hash, key: pairs[0]![0], value: pairs[0]![1] };
    return { kind: 2, hash, pairs };
  }
  const bit = 1 << ((hash >>> shift) & MASK);
  if ((node.bitmap & bit) === 0) return node;
  const at = popcount(node.bitmap & (bit - 1));
  const child = node.slots[at]!;
  const next = deleteIn(child, hash, key, shift + BITS);
  if (next === child) return node;
  if (next === undefined) {
    if (node.slots.length === 1) return undefined;
    const slots = [...node.slots];
    slots.splice(at, 1);
    const rest: Branch<V> = { kind: 0, bitmap: node.bitmap & ~bit, slots };
    // A branch left holding one leaf collapses into it (except at the root, which stays a branch).
    return shift > 0 && slots.length === 1 && slots[0]!.kind !== 0 ? slots[0] : rest;
  }
  const slots = [...node.slots];
  slots[at] = next;
  if (shift > 0 && slots.length === 1 && next.kind !== 0) return next;
  return { kind: 0, bitmap: node.bitmap, slots };
}

/** Every pair below `node`, depth first. A plain iterator with its own stack (no nested generators: listing a directory walks the whole map). */
function walk<V>(node: Slot<V>): IterableIterator<[string, V]> {
  const nodes: Slot<V>[] = [node];
  const next: number[] = [0];
  const it: IterableIterator<[string, V]> = {
    [Symbol.iterator]: () => it,
    next(): IteratorResult<[string, V]> {
      for (;;) {
        const top = nodes.length - 1;
        if (top < 0) return { done: true, value: undefined };
        const n = nodes[top]!;
        const i = next[top]!;
        if (n.kind === 1) {
          nodes.pop();
          next.pop();
          return { done: false, value: [n.key, n.value] };
        }
        const size = n.kind === 0 ? n.slots.length : n.pairs.length;
        if (i >= size) {
          nodes.pop();
          next.pop();
          continue;
        }
        next[top] = i + 1;
        if (n.kind === 2) return { done: false, value: [n.pairs[i]![0], n.pairs[i]![1]] };
        nodes.push(n.slots[i]!);
        next.push(0);
      }
    },
  };
  return it;
}

function each<V>(node: Slot<V>, fn: (value: V, key: string) => void): void {
  if (node.kind === 1) fn(node.value, node.key);
  else if (node.kind === 2) for (const [k, v] of node.pairs) fn(v, k);
  else for (const s of node.slots) each(s, fn);
}

/** An immutable map; `set` and `delete` return a new map sharing what did not change. */
export class PMap<V> implements Iterable<[string, V]> {
  static readonly #empty = new PMap<never>(EMPTY_BRANCH, 0);
  readonly #root: Branch<V>;
  readonly size: number;

  private constructor(root: Branch<V>, size: number) {
    this.#root = root;
    this.size = size;
  }

  static empty<V>(): PMap<V> {
    return PMap.#empty as PMap<V>;
  }

  static from<V>(pairs: Iterable<readonly [string, V]>): PMap<V> {
    let m = PMap.empty<V>();
    for (const [k, v] of pairs) m = m.set(k, v);
    return m;
  }

  get(key: string): V | undefined {
    return this.size === 0 ? undefined : getIn(this.#root, hashOf(key), key, 0);
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** `value` must not be undefined (an absent key reads as undefined). */
  set(key: string, value: V): PMap<V> {
    const added = { value: false };
    const root = setIn(this.#root, { kind: 1, hash: hashOf(key), key, value }, 0, added) as Branch<V>;
    return root === this.#root ? this : new PMap(root, this.size + (added.value ? 1 : 0));
  }

  delete(key: string): PMap<V> {
    const root = deleteIn(this.#root, hashOf(key), key, 0) as Branch<V> | undefined;
    if (root === this.#root) return this;
    return root === undefined ? PMap.empty() : new PMap(root, this.size - 1);
  }

  [Symbol.iterator](): Iterator<[string, V]> {
    return walk(this.#root);
  }

  entries(): IterableIterator<[string, V]> {
    return walk(this.#root);
  }

  *keys(): IterableIterator<string> {
    for (const [k] of walk(this.#root)) yield k;
  }

  *values(): IterableIterator<V> {
    for (const [, v] of walk(this.#root)) yield v;
  }

  /** Calls `fn` for every pair (faster than iterating, for whole-map scans). */
  forEach(fn: (value: V, key: string) => void): void {
    each(this.#root, fn);
  }

  /**
   * The keys whose values differ between `a` and `b` (by identity), with both values. Parts the
   * two maps share are skipped, so two maps a few changes apart compare in time of those changes.
   */
  static *differences<V>(a: PMap<V>, b: PMap<V>): Generator<[string, V | undefined, V | undefined]> {
    yield* diffNodes(a.#root, b.#root);
  }
}

function* diffNodes<V>(a: Slot<V> | undefined, b: Slot<V> | undefined): Generator<[string, V | undefined, V | undefined]> {
  if (a === b) return;
  if (a?.kind === 0 && b?.kind === 0) {
    for (let i = 0; i < 32; i++) {
      const bit = 1 << i;
      const x = a.bitmap & bit ? a.slots[popcount(a.bitmap & (bit - 1))] : undefined;
      const y = b.bitmap & bit ? b.slots[popcount(b.bitmap & (bit - 1))] : undefined;
      yield* diffNodes(x, y);
    }
    return;
  }
  const left = new Map(a === undefined ? [] : walk(a));
  const right = new Map(b === undefined ? [] : walk(b));
  for (const [k, v] of left) {
    const w = right.get(k);
    if (v !== w) yield [k, v, w];
  }
  for (const [k, w] of right) if (!left.has(k)) yield [k, undefined, w];
}

/** An immutable set of strings over PMap. */
export class PSet implements Iterable<string> {
  static readonly #empty = new PSet(PMap.empty<true>());
  readonly #map: PMap<true>;

  private constructor(map: PMap<true>) {
    this.#map = map;
  }

  static empty(): PSet {
    return PSet.#empty;
  }

  static from(items: Iterable<string>): PSet {
    let s = PSet.empty();
    for (const x of items) s = s.add(x);
    return s;
  }

  get size(): number {
    return this.#map.size;
  }

  has(key: string): boolean {
    return this.#map.get(key) !== undefined;
  }

  add(key: string): PSet {
    const m = this.#map.set(key, true);
    return m === this.#map ? this : new PSet(m);
  }

  delete(key: string): PSet {
    const m = this.#map.delete(key);
    return m === this.#map ? this : new PSet(m);
  }

  [Symbol.iterator](): Iterator<string> {
    return this.#map.keys();
  }

  /** Keys in exactly one of the two sets, with which one (shared parts skipped, as in PMap). */
  static *differences(a: PSet, b: PSet): Generator<[string, 'left' | 'right']> {
    for (const [k, x] of PMap.differences(a.#map, b.#map)) yield [k, x === undefined ? 'right' : 'left'];
  }
}
