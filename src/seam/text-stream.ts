// T1 on a stream of bytes, for files read without being held whole.
import { isUtf8 } from 'node:buffer';
import { FsError } from './errors.js';
import { firstInvalidUtf8, firstNul } from './text.js';

/**
 * T1 on a stream: every byte looked at is checked (no NUL, valid UTF-8, no UTF-16 BOM), with the
 * offset of the first bad byte; a sequence cut by a chunk boundary is carried to the next chunk.
 */
export class TextCheck {
  private carry: Uint8Array | undefined;
  offset = 0;
  constructor(private readonly what: string) {}

  /** The complete sequences of `chunk` (with what was carried), checked. */
  check(chunk: Uint8Array): Uint8Array {
    const bytes = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    let end = bytes.length;
    // Back off to the start of a sequence that may be incomplete (at most 3 bytes).
    for (let k = 1; k <= 3 && k <= bytes.length; k++) {
      const b = bytes[bytes.length - k]!;
      if ((b & 0xc0) === 0x80) continue;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (need > k) end = bytes.length - k;
      break;
    }
    const whole = bytes.subarray(0, end);
    // A copy (a Buffer's slice is a view): the chunk's memory may be reused (streamBytes `reuse`).
    this.carry = end < bytes.length ? Uint8Array.from(bytes.subarray(end)) : undefined;
    if (this.offset === 0 && whole.length >= 2 && ((whole[0] === 0xff && whole[1] === 0xfe) || (whole[0] === 0xfe && whole[1] === 0xff))) {
      this.fail('a UTF-16 byte order mark (only UTF-8 is supported)');
    }
    const nul = firstNul(whole);
    if (nul !== -1) this.fail(`a NUL byte at byte ${this.offset + nul} (binary file)`);
    if (!isUtf8(whole)) this.fail(`invalid UTF-8 at byte ${this.offset + firstInvalidUtf8(whole)}`);
    this.offset += whole.length;
    return whole;
  }

  finish(): void {
    if (this.carry !== undefined) this.fail(`invalid UTF-8 at byte ${this.offset}`);
  }

  private fail(found: string): never {
    throw new FsError('FS_NOT_TEXT', `${this.what}: not a UTF-8 text file: found ${found}`);
  }
}

