// grep of a large file on its bytes: when every match must contain a literal, only the lines
// holding its bytes are decoded and handed to the matcher; the lines between are counted on the
// bytes (SIMD), never decoded. The bytes are already checked as UTF-8 text, so a line holds the
// literal's bytes exactly when its decoded text holds the literal.
import { countLf } from '../seam/line-count.js';

const LF = 10;
const BOM = [0xef, 0xbb, 0xbf] as const;

/** The lines of a batch that may match: their text joined by LF (as splitLines cuts it back) and numbers. */
export interface Candidates {
  readonly text: string;
  /** False when the last line is the file's last and has no line break (its CR is then kept). */
  readonly brokenAfter: boolean;
  /** 1-based line number of the first line of `text`. */
  readonly first: number;
  /** The line number of each line of `text`; absent when they follow each other (the whole batch). */
  readonly numbers?: number[];
}

/**
 * Past this many candidate lines in a batch, the batch is decoded whole instead: a line at a
 * time costs more than decoding everything once the literal is on most lines.
 */
const MAX_CANDIDATES = 1024;

/** Thrown inside a batch with too many candidates to take them one by one. */
const DENSE = Symbol('dense');

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** Finds the lines holding `literal` in a file given as consecutive batches of whole lines. */
export class LiteralLines {
  /** Line number of the first line of the next batch. */
  private line = 1;
  private readonly literal: Buffer;
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });

  constructor(literal: Uint8Array) {
    this.literal = asBuffer(literal);
  }

  /**
   * The candidate lines of one batch: `parts` concatenated are whole lines, each ending with LF,
   * except that the last line of the file (`final`) may have none. Undefined when none holds the literal.
   */
  find(parts: readonly Uint8Array[], final: boolean): Candidates | undefined {
    const first = this.line;
    try {
      return this.lines(parts, final);
    } catch (err) {
      if (err !== DENSE) throw err;
      this.line = first;
      return this.whole(parts, final);
    }
  }

  private lines(parts: readonly Uint8Array[], final: boolean): Candidates | undefined {
    const texts: string[] = [];
    const numbers: number[] = [];
    let brokenAfter = true;
    const take = (bytes: Uint8Array, broken: boolean) => {
      // The decoder of a whole file drops a BOM at its start (T1): so does this, for line 1 only.
      const body = this.line === 1 && bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2] ? bytes.subarray(3) : bytes;
      texts.push(this.decoder.decode(body));
      numbers.push(this.line);
      brokenAfter = broken;
      if (texts.length > MAX_CANDIDATES) throw DENSE;
    };
    let carry: Buffer[] = []; // the start of a line that goes on into the next part
    for (const part of parts.map(asBuffer)) {
      let pos = 0;
      if (carry.length > 0) {
        const end = part.indexOf(LF);
        if (end === -1) {
          carry.push(part);
          continue;
        }
        const line = Buffer.concat([...carry, part.subarray(0, end)]);
        if (line.includes(this.literal)) take(line, true);
        this.line++;
        carry = [];
        pos = end + 1;
      }
      pos = this.scanPart(part, pos, take);
      if (pos < part.length) carry.push(part.subarray(pos));
    }
    if (carry.length > 0) {
      // Only the file's last line can lack its break.
      if (!final) throw new Error('a batch of lines ended inside a line');
      const line = Buffer.concat(carry);
      if (line.includes(this.literal)) take(line, false);
      this.line++;
    }
    return texts.length === 0 ? undefined : { text: texts.join('\n'), brokenAfter, first: numbers[0]!, numbers };
  }

  /** The whole batch decoded, as the generic path decodes it. */
  private whole(parts: readonly Uint8Array[], final: boolean): Candidates {
    const first = this.line;
    let all = Buffer.concat(parts);
    const broken = all[all.length - 1] === LF;
    this.line += countLf(all) + (broken ? 0 : 1);
    if (broken) all = all.subarray(0, -1);
    if (first === 1 && all[0] === BOM[0] && all[1] === BOM[1] && all[2] === BOM[2]) all = all.subarray(3);
    return { text: this.decoder.decode(all), brokenAfter: broken || !final, first };
  }

  /** Takes the lines of `part` from `pos` (a line start) that hold the literal; returns where the unfinished last line starts. */
  private scanPart(part: Buffer, pos: number, take: (bytes: Uint8Array, broken: boolean) => void): number {
    const lastLf = part.lastIndexOf(LF);
    if (lastLf < pos) return pos;
    for (let hit = part.indexOf(this.literal, pos); hit !== -1 && hit < lastLf; hit = part.indexOf(this.literal, pos)) {
      // `pos - 1` is a break (or the part's start), so the line holding the hit starts at or after it.
      const start = part.lastIndexOf(LF, hit) + 1;
      const end = part.indexOf(LF, hit);
      this.line += countLf(part, pos, start);
      take(part.subarray(start, end), true);
      this.line++;
      pos = end + 1;
    }
    this.line += countLf(part, pos, lastLf + 1);
    return lastLf + 1;
  }
}
