import { describe, expect, it } from 'vitest';
import { relativeInside } from '../../src/seam/path.js';

describe('relativeInside', () => {
  it("is '' for the path itself, the rest below it, undefined outside; whole segments compare", () => {
    expect(relativeInside('/a/b', '/a/b')).toBe('');
    expect(relativeInside('/', '/')).toBe('');
    expect(relativeInside('/a/b', '/a/b/c/d')).toBe('c/d');
    expect(relativeInside('/', '/x')).toBe('x');
    expect(relativeInside('/a/b', '/a/bc')).toBeUndefined();
    expect(relativeInside('/a/b', '/a')).toBeUndefined();
    expect(relativeInside('/a', '/a/..state')).toBe('..state');
  });
});
