/**
 * Static checks for the two usual shapes of catastrophic backtracking. JavaScript regexes cannot
 * be interrupted once they run, so grep refuses these patterns before reading any file.
 */

const BRACES = /\{(\d*)(,(\d*))?\}/y;

/** Whether the quantifier at `at` repeats without a small bound: `*`, `+`, `{n,}`, `{n,m}` with m > 1. */
function isUnbounded(source: string, at: number): boolean {
  const c = source[at];
  if (c === '*' || c === '+') return true;
  if (c !== '{') return false;
  BRACES.lastIndex = at;
  const m = BRACES.exec(source);
  return m !== null && m[2] !== undefined && (m[3] === '' || Number(m[3]) > 1);
}

/** Index of the `]` closing the class opened at `open` (the end of the source if none). */
function classEnd(source: string, open: number): number {
  let i = open + 1;
  for (; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
  return i;
}

/**
 * Star height above one — a repeated group that contains a repetition, such as `(a+)+` or
 * `(\w*\s?)*`. Returns the offending group, or undefined.
 */
export function nestedQuantifier(source: string): string | undefined {
  const open: Array<{ start: number; repeats: boolean }> = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      // Quantifier characters inside a class are literal.
      i = classEnd(source, i);
      continue;
    }
    if (c === '(') open.push({ start: i, repeats: false });
    else if (c === ')') {
      const group = open.pop();
      if (group === undefined) continue;
      if (isUnbounded(source, i + 1)) {
        if (group.repeats) return source.slice(group.start, i + 2);
        if (open.length > 0) open[open.length - 1]!.repeats = true;
      } else if (group.repeats && open.length > 0) open[open.length - 1]!.repeats = true;
    } else if (isUnbounded(source, i) && open.length > 0) open[open.length - 1]!.repeats = true;
  }
  return undefined;
}

interface Group {
  /** Index of `(`; the body starts after the group's prefix (`?:`, `?<name>`, ...). */
  readonly start: number;
  body: number;
  end: number;
  /** Top-level `|` positions inside the group. */
  readonly bars: number[];
  readonly parent: Group | undefined;
  /** A lookaround: zero width, never the first character of anything. */
  lookaround: boolean;
  repeated: boolean;
}

/** Splits the source into groups, with the position of every top-level alternation bar. */
function parseGroups(source: string): Group[] {
  const groups: Group[] = [];
  const stack: Group[] = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[') i = classEnd(source, i);
    else if (c === '(') {
      const g: Group = { start: i, body: i + 1, end: source.length, bars: [], parent: stack.at(-1), lookaround: false, repeated: false };
      const prefix = /^\?(?::|=|!|<=|<!|<[A-Za-z_$][\w$]*>)/.exec(source.slice(i + 1, i + 40));
      if (prefix) {
        g.body = i + 1 + prefix[0].length;
        g.lookaround = prefix[0] === '?=' || prefix[0] === '?!' || prefix[0] === '?<=' || prefix[0] === '?<!';
        i += prefix[0].length;
      }
      stack.push(g);
      groups.push(g);
    } else if (c === ')') {
      const g = stack.pop();
      if (g === undefined) continue;
      g.end = i;
      g.repeated = isUnbounded(source, i + 1);
    } else if (c === '|' && stack.length > 0) stack.at(-1)!.bars.push(i);
  }
  return groups;
}

/** The first atom's source text and where it ends, or undefined at the end of the text. */
function atomAt(source: string, i: number, end: number): { atom: string; next: number; zeroWidth: boolean } | undefined {
  if (i >= end) return undefined;
  const c = source[i]!;
  if (c === '^' || c === '$') return { atom: c, next: i + 1, zeroWidth: true };
  if (c === '[') {
    const close = classEnd(source, i);
    return { atom: source.slice(i, close + 1), next: close + 1, zeroWidth: false };
  }
  if (c === '\\') {
    const d = source[i + 1] ?? '';
    if (d === 'b' || d === 'B') return { atom: source.slice(i, i + 2), next: i + 2, zeroWidth: true };
    const long = /^\\(?:u\{[0-9A-Fa-f]+\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[pP]\{[^}]*\}|c[A-Za-z]|k<[^>]*>|\d+)/.exec(source.slice(i, i + 40));
    const len = long ? long[0].length : 2;
    return { atom: source.slice(i, i + len), next: i + len, zeroWidth: false };
  }
  const cp = source.codePointAt(i)!;
  const len = cp > 0xffff ? 2 : 1;
  return { atom: source.slice(i, i + len), next: i + len, zeroWidth: false };
}

/** Where a quantifier starting at `at` ends, and whether it allows zero repetitions. */
function quantifierAt(source: string, at: number): { next: number; optional: boolean } {
  const c = source[at];
  let next = at;
  let optional = false;
  if (c === '*' || c === '?') {
    next = at + 1;
    optional = true;
  } else if (c === '+') next = at + 1;
  else if (c === '{') {
    BRACES.lastIndex = at;
    const m = BRACES.exec(source);
    if (m !== null && m[1] !== '') {
      next = at + m[0].length;
      optional = Number(m[1]) === 0;
    }
  }
  if (next > at && source[next] === '?') next++;
  return { next, optional };
}

/** Atoms one of which starts any text the range [from, to) matches; 'any' when that cannot be told. */
function firstAtoms(source: string, from: number, to: number, groups: ReadonlyMap<number, Group>, depth = 0): string[] | 'any' {
  if (depth > 20) return 'any';
  const atoms: string[] = [];
  let i = from;
  for (;;) {
    if (i >= to) return atoms;
    let part: string[] | 'any';
    let next: number;
    let zeroWidth = false;
    const g = source[i] === '(' ? groups.get(i) : undefined;
    if (g !== undefined) {
      next = g.end + 1;
      if (g.lookaround) {
        part = [];
        zeroWidth = true;
      } else {
        part = [];
        const cuts = [g.body, ...g.bars.map((b) => b + 1)];
        const ends = [...g.bars, g.end];
        for (let k = 0; k < cuts.length && part !== 'any'; k++) {
          const sub = firstAtoms(source, cuts[k]!, ends[k]!, groups, depth + 1);
          part = sub === 'any' ? 'any' : [...part, ...sub];
        }
        // A group that can match the empty text lets the next atom start the match too.
        if (part !== 'any' && canBeEmpty(source, g, groups, depth)) zeroWidth = true;
      }
    } else {
      const a = atomAt(source, i, to);
      if (a === undefined) return atoms;
      if (a.atom.startsWith('\\k') || /^\\\d/.test(a.atom)) return 'any';
      next = a.next;
      zeroWidth = a.zeroWidth;
      part = a.zeroWidth ? [] : [a.atom];
    }
    if (part === 'any') return 'any';
    atoms.push(...part);
    const q = quantifierAt(source, next);
    i = q.next;
    if (!zeroWidth && !q.optional) return atoms;
  }
}

function canBeEmpty(source: string, g: Group, groups: ReadonlyMap<number, Group>, depth: number): boolean {
  const cuts = [g.body, ...g.bars.map((b) => b + 1)];
  const ends = [...g.bars, g.end];
  return cuts.some((from, k) => {
    // An alternative is empty-capable when every atom in it is optional or zero width; checked
    // cheaply: empty, or made only of atoms each followed by ?, * or {0,.
    let i = from;
    const to = ends[k]!;
    while (i < to) {
      const inner = source[i] === '(' ? groups.get(i) : undefined;
      let next: number;
      let zero = false;
      if (inner) {
        next = inner.end + 1;
        zero = inner.lookaround || (depth < 20 && canBeEmpty(source, inner, groups, depth + 1));
      } else {
        const a = atomAt(source, i, to);
        if (a === undefined) break;
        next = a.next;
        zero = a.zeroWidth;
      }
      const q = quantifierAt(source, next);
      if (!zero && !q.optional) return false;
      i = q.next;
    }
    return true;
  });
}

const BMP = 0x10000;

/** Compiled atoms and their member sets, shared by all the pairs of one pattern. */
interface AtomCache {
  readonly flags: string;
  readonly regexes: Map<string, RegExp | undefined>;
  readonly sets: Map<string, Uint32Array>;
}

function atomRegex(atom: string, cache: AtomCache): RegExp | undefined {
  if (cache.regexes.has(atom)) return cache.regexes.get(atom);
  let re: RegExp | undefined;
  try {
    re = new RegExp(`^(?:${atom})$`, cache.flags);
  } catch {
    re = undefined;
  }
  cache.regexes.set(atom, re);
  return re;
}

/** A plain character (not a class, an escape or `.`) is its own only member, up to case. */
function plain(atom: string): boolean {
  return !atom.startsWith('\\') && !atom.startsWith('[') && atom !== '.';
}

/** Whether two atoms can match a common character. */
function overlap(a: string, b: string, cache: AtomCache): boolean {
  const ra = atomRegex(a, cache);
  const rb = atomRegex(b, cache);
  if (ra === undefined || rb === undefined) return true;
  const caseless = cache.flags.includes('i');
  if (plain(a)) return rb.test(a) || (caseless && (rb.test(a.toLowerCase()) || rb.test(a.toUpperCase())));
  if (plain(b)) return ra.test(b) || (caseless && (ra.test(b.toLowerCase()) || ra.test(b.toUpperCase())));
  const sa = memberSet(a, ra, cache.sets);
  const sb = memberSet(b, rb, cache.sets);
  for (let w = 0; w < sa.length; w++) if ((sa[w]! & sb[w]!) !== 0) return true;
  return false;
}

/** The BMP characters an atom matches, as a bitmap (cached per atom). */
function memberSet(atom: string, re: RegExp, sets: Map<string, Uint32Array>): Uint32Array {
  let set = sets.get(atom);
  if (set === undefined) {
    set = new Uint32Array(BMP / 32);
    for (let cp = 0; cp < BMP; cp++) if (re.test(String.fromCharCode(cp))) set[cp >>> 5]! |= 1 << (cp & 31);
    sets.set(atom, set);
  }
  return set;
}

/** At most this many distinct classes are expanded to bitmaps, and this many pairs compared; past either, overlap is assumed. */
const MAX_SETS = 24;
const MAX_PAIRS = 100_000;

/**
 * A repeated choice whose alternatives can start with the same character, such as `(a|a)*`,
 * `(\w|_)+` or `(x|\d|[a-z])*`: a text can then be split into repetitions more than one way, and
 * a failing match tries every split. Returns the offending group, or undefined. The check errs on
 * the safe side: alternatives that share a first character but never match the same text
 * (`(ab|ac)*`) are refused too.
 */
export function overlappingAlternation(source: string, flags: string): string | undefined {
  const groups = parseGroups(source);
  const byStart = new Map(groups.map((g) => [g.start, g]));
  const cache: AtomCache = { flags: flags.replace(/[gym]/g, ''), regexes: new Map(), sets: new Map() };
  let pairs = 0;
  for (const g of groups) {
    if (g.bars.length === 0 || g.lookaround) continue;
    let repeated = false;
    for (let p: Group | undefined = g; p !== undefined && !repeated; p = p.parent) repeated = p.repeated;
    if (!repeated) continue;
    const cuts = [g.body, ...g.bars.map((b) => b + 1)];
    const ends = [...g.bars, g.end];
    const firsts = cuts.map((from, k) => firstAtoms(source, from, ends[k]!, byStart));
    const text = () => source.slice(g.start, quantifierAt(source, g.end + 1).next);
    // An alternative that starts with nothing (it matches only the empty text) overlaps none.
    const starting = firsts.filter((f) => f === 'any' || f.length > 0).length;
    if (firsts.includes('any')) {
      if (starting > 1) return text();
      continue;
    }
    // Without case folding a plain character overlaps only itself: a duplicate is found by
    // lookup, and only pairs involving a class, an escape or `.` are compared one by one.
    const caseless = cache.flags.includes('i');
    const owner = new Map<string, number>();
    const atoms: Array<{ alt: number; atom: string; exact: boolean }> = [];
    for (let alt = 0; alt < firsts.length; alt++) {
      for (const atom of new Set(firsts[alt] as string[])) {
        const exact = !caseless && plain(atom);
        if (exact) {
          const other = owner.get(atom);
          if (other !== undefined && other !== alt) return text();
          owner.set(atom, alt);
        }
        atoms.push({ alt, atom, exact });
      }
    }
    for (let i = 0; i < atoms.length; i++) {
      const a = atoms[i]!;
      if (a.exact) continue;
      for (let j = 0; j < atoms.length; j++) {
        const b = atoms[j]!;
        if (b.alt === a.alt || (!b.exact && j < i)) continue;
        if (cache.sets.size > MAX_SETS || ++pairs > MAX_PAIRS) return text();
        if (overlap(a.atom, b.atom, cache)) return text();
      }
    }
  }
  return undefined;
}
