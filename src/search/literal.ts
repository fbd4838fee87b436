/**
 * A literal every match of a grep pattern contains, so a store can be asked which files hold it
 * (`searchCandidates`). Conservative: undefined whenever that is not plainly so (an alternation, case folding, a
 * literal across lines or one the T1 decoder could produce from other bytes).
 */

const PUNCTUATION = new Set([...'\\^$.|?*+()[]{}/-,:=!<>#&~\'"@%`;_ ']);
const MAX_LITERAL_BYTES = 1024;
/** Escapes that stand for one character of a class (or a position) and carry nothing after them. */
const CLASS_ESCAPES = 'dDwWsSbBnrtfv0';

export function requiredLiteral(re: RegExp): Uint8Array | undefined {
  // Case folding, and the `v` mode's nested classes, are beyond this reading of the pattern.
  if (re.flags.includes('i') || re.flags.includes('v')) return undefined;
  const source = re.source;
  const runs: string[] = [];
  let run = '';
  let depth = 0;
  const end = () => {
    if (run !== '') runs.push(run);
    run = '';
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    let literal: string | undefined;
    if (c === '\\') {
      const next = source[i + 1];
      i++;
      if (next !== undefined && PUNCTUATION.has(next)) literal = next;
      // An escape with a payload (\x41, \u{…}, \p{…}, \k<…>, \1, octal \01): not read, no literal at all.
      else if (next === undefined || !CLASS_ESCAPES.includes(next) || (next === '0' && /[0-9]/.test(source[i + 1] ?? ''))) return undefined;
    } else if (c === '[') {
      // A class: skipped whole (escapes inside included).
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
    } else if (c === '{') {
      // A counted quantifier ({2}, {0,1}): its digits are no literal.
      const counted = /^\{\d+(,\d*)?\}/.exec(source.slice(i));
      if (counted) i += counted[0].length - 1;
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|') return undefined;
    else if (!'.^$*+?{}'.includes(c)) literal = c;
    // A quantifier after this token: `*`, `?` and `{` may make it absent; `+` keeps one.
    const q = source[i + 1];
    const optional = q === '*' || q === '?' || q === '{';
    if (literal !== undefined && depth === 0 && !optional) {
      run += literal;
      if (q === '+') end();
    } else end();
  }
  end();
  const best = runs.reduce((a, b) => (Buffer.byteLength(b) > Buffer.byteLength(a) ? b : a), '');
  if (best === '' || /[\r\n\uFEFF\uFFFD]|[\uD800-\uDFFF]/.test(best)) return undefined;
  const bytes = Buffer.from(best, 'utf8');
  return bytes.byteLength > MAX_LITERAL_BYTES ? undefined : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
