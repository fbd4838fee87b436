import { FsError } from '../seam/index.js';
import { describeType } from '../seam/path.js';
import { compileGlob } from './dialect.js';
import { nestedQuantifier, overlappingAlternation } from './regex-safety.js';

/**
 * A regular expression for grep from a pattern string: Unicode mode when the pattern allows it,
 * else the legacy syntax (so `\-` or a lone `{` still work); a leading `(?i)`, `(?s)` or `(?m)`
 * becomes the flag. Invalid: FS_INVALID_ARGUMENT.
 */
export function compileSearchPattern(pattern: string): RegExp {
  if (typeof pattern !== 'string') {
    throw new FsError('FS_INVALID_ARGUMENT', `pattern must be a string, got ${describeType(pattern)}`);
  }
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([ims]+)\)/.exec(source);
  if (inline) {
    flags = [...new Set(inline[1])].join('');
    source = source.slice(inline[0].length);
  }
  const quote = JSON.stringify(pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern);
  const nested = nestedQuantifier(source);
  if (nested !== undefined) {
    throw new FsError(
      'FS_INVALID_ARGUMENT',
      `pattern ${quote} repeats a group that itself repeats (${nested}); ` +
        'such patterns can take exponential time on a single line. Simplify it, e.g. "(a+)+" to "a+"',
    );
  }
  let regex: RegExp;
  try {
    regex = new RegExp(source, `${flags}u`);
  } catch {
    try {
      regex = new RegExp(source, flags);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new FsError('FS_INVALID_ARGUMENT', `invalid regular expression ${JSON.stringify(pattern)}: ${detail}`);
    }
  }
  const overlapping = overlappingAlternation(source, regex.flags);
  if (overlapping !== undefined) {
    throw new FsError(
      'FS_INVALID_ARGUMENT',
      `pattern ${quote} repeats a choice whose alternatives can start with the same character (${overlapping}); ` +
        'such patterns can take exponential time on a single line. Make the alternatives distinct, e.g. "(\\w|_)+" to "\\w+"',
    );
  }
  return regex;
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes, never inside a character. */
export function cutUtf8(text: string, maxBytes: number): { text: string; cut: boolean } {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, 'utf8') <= maxBytes) return { text, cut: false };
  // Each UTF-16 unit is at least one byte, so the first maxBytes units cover the cut point.
  let head = text.slice(0, maxBytes);
  if (head.length > 0 && isHighSurrogate(head.charCodeAt(head.length - 1))) head = head.slice(0, -1);
  const bytes = Buffer.from(head, 'utf8');
  if (bytes.byteLength <= maxBytes) return { text: head, cut: true };
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), cut: true };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export function includeMatcher(include: string): (relative: string, name: string) => boolean {
  let re: RegExp;
  try {
    re = compileGlob(include, { dot: true });
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new FsError('FS_INVALID_ARGUMENT', `invalid include glob ${JSON.stringify(include)}: ${detail}`);
  }
  return include.includes('/') ? (relative) => re.test(relative) : (_relative, name) => re.test(name);
}

export function patternQuote(re: RegExp): string {
  const source = re.source;
  return JSON.stringify(source.length > 200 ? `${source.slice(0, 200)}…` : source);
}

export function statelessRegExp(regex: RegExp): RegExp {
  if (!(regex instanceof RegExp)) {
    throw new FsError('FS_INVALID_ARGUMENT', `regex must be a RegExp or a string, got ${describeType(regex)}`);
  }
  // `g` and `y` make test() stateful across lines.
  return regex.global || regex.sticky ? new RegExp(regex.source, regex.flags.replace(/[gy]/g, '')) : regex;
}
