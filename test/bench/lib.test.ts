import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sourceText } from '../../bench/fixtures.js';
import { checkRows, formatTable, formatValue, interleave, median, row, summarise, type BenchRow } from '../../bench/lib.js';

describe('median', () => {
  it('is the middle of the sorted values, whatever their order', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, min: -1e9, max: 1e9 }), { minLength: 1, maxLength: 50 }), (xs) => {
        const s = [...xs].sort((a, b) => a - b);
        const m = median(xs);
        const expected = s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
        // Numeric equality: which of -0 and 0 sorts first depends on the input order.
        expect(m === expected, `${m} vs ${expected}`).toBe(true);
        expect(median([...xs].reverse()) === m).toBe(true);
      }),
    );
  });

  it('refuses an empty sample', () => {
    expect(() => median([])).toThrow(RangeError);
  });

  it('summarises min, max and count', () => {
    expect(summarise([5, 1, 3])).toEqual({ median: 3, min: 1, max: 5, reps: 3 });
  });
});

describe('interleave', () => {
  it('runs every variant warmup + reps times, rotating the order, with before() ahead of each run', async () => {
    const log: string[] = [];
    const t = await interleave(
      { a: () => void log.push('a'), b: () => void log.push('b'), c: () => void log.push('c') },
      { reps: 3, warmup: 1, before: (k) => void log.push(`before ${k}`) },
    );
    const runs = log.filter((l) => !l.startsWith('before'));
    expect(runs).toEqual(['a', 'b', 'c', 'b', 'c', 'a', 'c', 'a', 'b', 'a', 'b', 'c']);
    log.forEach((l, i) => {
      if (!l.startsWith('before')) expect(log[i - 1]).toBe(`before ${l}`);
    });
    expect([t.a.reps, t.b.reps, t.c.reps]).toEqual([3, 3, 3]);
  });

  it('times with the clock, dropping warm-up runs, dividing by ops and multiplying by scale', async () => {
    let now = 0;
    let cost = 0;
    // Each run of x "takes" 2, 4, 6, … ms on the fake clock.
    const t = await interleave({ x: () => void (now += cost += 2) }, { reps: 3, warmup: 1, ops: 4, scale: 1000, clock: () => now });
    expect(t.x).toEqual({ median: 1500, min: 1000, max: 2000, reps: 3 });
  });
});

describe('row', () => {
  it('computes the ratio to the baseline and judges a ratio goal', () => {
    const f = { section: 's', case: 'c', subject: 'x', unit: 'ms' as const };
    const slow = row(f, 30, { name: 'b', timing: 20 }, { text: '≤ 1.5×', maxRatio: 1.5 });
    expect(slow.ratio).toBe(1.5);
    expect(slow.met).toBe(true);
    const slower = row(f, 31, { name: 'b', timing: 20 }, { text: '≤ 1.5×', maxRatio: 1.5 });
    expect(slower.met).toBe(false);
    expect(row(f, 31, { name: 'b', timing: 20 }).met).toBeUndefined();
  });

  it('judges an added-cost goal by the difference, and records it', () => {
    const f = { section: 's', case: 'c', subject: 'x', unit: 'µs/op' as const };
    const r = row(f, summarise([40, 45, 50]), { name: 'raw', timing: summarise([20, 25, 30]) }, { text: '≤ +20', maxDelta: 20 });
    expect(r.delta).toBe(20);
    expect(r.met).toBe(true);
    expect(r.reps).toBe(3);
    expect(r.minRatio).toBe(2);
    expect(row(f, 46, { name: 'raw', timing: summarise([20]) }).minRatio).toBeUndefined();
    expect(row(f, 46, { name: 'raw', timing: 25 }, { text: '≤ +20', maxDelta: 20 }).met).toBe(false);
  });
});

describe('formatTable', () => {
  it('prints one aligned line per row plus a header and a rule', () => {
    const rows: BenchRow[] = [
      row({ section: 'read', case: '1 MiB', subject: 'read tool', unit: 'ms' }, 12.345, { name: 'readFile', timing: 10 }, { text: '≤ 1.5×', maxRatio: 1.5 }),
      row({ section: 'scale', case: '100,000 files', subject: 'heap', unit: 'B/file', note: 'gc' }, 1800, { name: 'memfs', timing: 1000 }, { text: '≤ 1.5×', maxRatio: 1.5 }),
    ];
    const lines = formatTable(rows).split('\n');
    expect(lines).toHaveLength(4);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
    expect(lines[2]).toContain('12.3 ms');
    expect(lines[2]).toContain('1.23×');
    expect(lines[2]).toContain('met');
    expect(lines[3]).toContain('MISSED');
    expect(lines[3]).toContain('heap (gc)');
  });

  it('formats values with precision by magnitude', () => {
    expect(formatValue(1234.5, 'ms')).toBe('1235 ms');
    expect(formatValue(12.34, 'ms')).toBe('12.3 ms');
    expect(formatValue(1.234, 'µs/op')).toBe('1.23 µs/op');
    expect(formatValue(0.1234, 'ms')).toBe('0.123 ms');
  });
});

describe('checkRows', () => {
  const good = { section: 'search', case: '10,000 files', subject: 'glob', unit: 'ms', value: 12 };

  it('passes well-formed rows through', () => {
    expect(checkRows('search', [good])).toEqual([good]);
  });

  it.each([
    ['not an array', { rows: [] }],
    ['a missing value', [{ ...good, value: undefined }]],
    ['an unknown unit', [{ ...good, unit: 'seconds' }]],
    ['a non-finite value', [{ ...good, value: Number.NaN }]],
    ['a null row', [null]],
  ])('rejects %s', (_, rows) => {
    expect(() => checkRows('search', rows)).toThrow(TypeError);
  });
});

describe('sourceText fixture', () => {
  it('reaches the size, counts its lines and holds the marker exactly once, near the middle', () => {
    fc.assert(
      fc.property(fc.integer({ min: 200, max: 200_000 }), (bytes) => {
        const fx = sourceText(bytes, 'UNIQUE_MARKER');
        expect(fx.text.length).toBeGreaterThanOrEqual(bytes);
        expect(fx.text.endsWith('\n')).toBe(true);
        expect(fx.text.split('\n').length - 1).toBe(fx.lines);
        const at = fx.text.indexOf('UNIQUE_MARKER');
        expect(at).toBeGreaterThan(0);
        expect(fx.text.indexOf('UNIQUE_MARKER', at + 1)).toBe(-1);
        expect(Math.abs(at - fx.text.length / 2)).toBeLessThan(fx.text.length / 4);
      }),
      { numRuns: 30 },
    );
  });
});
