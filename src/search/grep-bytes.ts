// grep of a large file on its bytes: when every match must contain a literal, only the lines
// holding its bytes are decoded and handed to the matcher; the lines between are counted on the
// bytes (SIMD), never decoded. The bytes are already checked as UTF-8 text, so a line holds the
// literal's bytes exactly when its decoded text holds the literal.
import { countLf } from '../seam/line-count.js';

const LF = 10;
const BOM = [0xef, 0xbb, 0xbf] as const;

/** The lines that may match: their text joined by LF (as splitLines cuts it back) and numbers. */
export interface Candidates {
  readonly text: string;
  /** False when the last line is the file's last and has no line break (its CR is then kept). */
  readonly brokenAfter: boolean;
  /** 1-based line number of the first line of `text`. */
  readonly first: number;
  /** The line number of each line of `text`. */
  readonly numbers: number[];
}

/**
 * Past this many candidate lines in one part, its lines are decoded all at once instead: a line
 * at a time costs more than decoding everything once the literal is on most lines.
 */
const MAX_CANDIDATES = 256;

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const startsWithBom = (b: Uint8Array) => b[0] === BOM[0] && b[1] === BOM[1] && b[2] === BOM[2];

/**
 * Finds the lines holding `literal` in a file fed part by part. A part is used only while it is
 * fed (its memory may be reused after): the open line at its end is copied.
 */
export class LiteralLines {
  /** Number of the line that starts at the open bytes. */
  private line = 1;
  private open: Buffer[] = [];
  private openBytes = 0;
  private texts: string[] = [];
  private numbers: number[] = [];
  private brokenAfter = true;
  private readonly literal: Buffer;
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });

  constructor(literal: Uint8Array) {
    this.literal = asBuffer(literal);
  }

  /** Bytes of the line not yet ended by a break. */
  get pending(): number {
    return this.openBytes;
  }

  feed(part: Uint8Array): void {
    const p = asBuffer(part);
    const lastLf = p.lastIndexOf(LF);
    if (lastLf === -1) return this.keep(p);
    let pos = 0;
    if (this.openBytes > 0) {
      pos = p.indexOf(LF) + 1;
      this.closeOpen(p.subarray(0, pos - 1), true);
    }
    this.scan(p, pos, lastLf);
    if (lastLf + 1 < p.length) this.keep(p.subarray(lastLf + 1));
  }

  /** The file ended: its last line, when no break ends it. */
  end(): void {
    if (this.openBytes > 0) this.closeOpen(Buffer.alloc(0), false);
  }

  /** The candidates found since the last call. */
  take(): Candidates | undefined {
    if (this.numbers.length === 0) return undefined;
    const found = { text: this.texts.join('\n'), brokenAfter: this.brokenAfter, first: this.numbers[0]!, numbers: this.numbers };
    this.texts = [];
    this.numbers = [];
    return found;
  }

  private keep(bytes: Buffer): void {
    this.open.push(Buffer.from(bytes));
    this.openBytes += bytes.length;
  }

  private closeOpen(rest: Buffer, broken: boolean): void {
    const line = Buffer.concat([...this.open, rest]);
    if (line.includes(this.literal)) this.add(line, 1, broken);
    this.line++;
    this.open = [];
    this.openBytes = 0;
  }

  /** Adds `count` whole lines as one text. The decoder of a whole file drops a BOM at its start (T1): so does this. */
  private add(bytes: Uint8Array, count: number, broken: boolean): void {
    this.texts.push(this.decoder.decode(this.line === 1 && startsWithBom(bytes) ? bytes.subarray(3) : bytes));
    for (let i = 0; i < count; i++) this.numbers.push(this.line + i);
    this.brokenAfter = broken;
  }

  /** Takes the lines of `p[pos..lastLf]` (whole lines, `pos` at a line start) that hold the literal. */
  private scan(p: Buffer, pos: number, lastLf: number): void {
    const [from, line, texts, numbers] = [pos, this.line, this.texts.length, this.numbers.length];
    let taken = 0;
    for (let hit = p.indexOf(this.literal, pos); hit !== -1 && hit < lastLf; hit = p.indexOf(this.literal, pos)) {
      if (++taken > MAX_CANDIDATES) {
        // Most lines hold it: all of them, decoded at once.
        [this.line, this.texts.length, this.numbers.length] = [line, texts, numbers];
        this.add(p.subarray(from, lastLf), countLf(p, from, lastLf) + 1, true);
        this.line += countLf(p, from, lastLf + 1);
        return;
      }
      // `pos - 1` is a break (or the part's start), so the line holding the hit starts at or after it.
      const start = p.lastIndexOf(LF, hit) + 1;
      const end = p.indexOf(LF, hit);
      this.line += countLf(p, pos, start);
      this.add(p.subarray(start, end), 1, true);
      this.line++;
      pos = end + 1;
    }
    this.line += countLf(p, pos, lastLf + 1);
  }
}
