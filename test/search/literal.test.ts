import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSearchPattern } from '../../src/search/index.js';
import { requiredLiteral } from '../../src/search/literal.js';

const atom = fc.constantFrom('a', 'b', 'c', 'é', '\\.', '.', '[ab]', '\\d', '(ab)', '(a|b)', '\\x61', '^', '$', '\\b', '\\n', 'x');
const quant = fc.constantFrom('', '', '', '*', '+', '?', '{2}', '{0,1}', '+?');
const pattern = fc.array(fc.tuple(atom, quant), { minLength: 1, maxLength: 6 }).map((parts) => parts.map(([a, q]) => a + q).join(''));
const subject = fc.stringMatching(/^[abcé.1x\n]{0,12}$/);

describe('requiredLiteral', () => {
  it('every string a pattern matches contains the literal it names (property)', () => {
    fc.assert(
      fc.property(fc.oneof(pattern, pattern.map((p) => `${p}|b`)), subject, (source, text) => {
        let re: RegExp;
        try {
          re = compileSearchPattern(source);
        } catch {
          return; // not a pattern grep accepts
        }
        const literal = requiredLiteral(re);
        if (literal === undefined || !re.test(text)) return;
        expect(text).toContain(Buffer.from(literal).toString('utf8'));
      }),
      { numRuns: 2000 },
    );
  });

  it('names the longest plain run, and nothing for case folding, alternation or escapes with payloads', () => {
    const lit = (p: string) => {
      const l = requiredLiteral(compileSearchPattern(p));
      return l === undefined ? undefined : Buffer.from(l).toString('utf8');
    };
    expect(lit('foo.*barbaz')).toBe('barbaz');
    expect(lit('a\\.b+c?')).toBe('a.b');
    expect(lit('(?i)needle')).toBeUndefined();
    expect(lit('cat|dog')).toBeUndefined();
    expect(lit('a\\x41bc')).toBeUndefined();
    expect(lit('x(abc)?yz')).toBe('yz');
  });
});
