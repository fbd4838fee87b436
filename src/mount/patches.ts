/** One written range: `len` bytes at file offset `at`, held in `buf` (which may have room to grow). */
interface Extent {
  at: number;
  buf: Uint8Array;
  len: number;
  /** Handed to a publish under way: changed only by copying (the publish streams these bytes). */
  shared: boolean;
}

/** Written ranges as a publish sees them: fixed while it streams. */
export type PatchView = readonly { readonly at: number; readonly bytes: Uint8Array }[];

/**
 * The ranges a program wrote to a large open file, over the bytes of the published file: sorted,
 * never overlapping. A write touching existing ranges merges with them, so a program writing in
 * order keeps one range, grown by doubling (not quadratic in small writes).
 */
export class Patches {
  #list: Extent[] = [];
  /** Bytes written and not yet published (what the mount holds for the file). */
  bytes = 0;

  get empty(): boolean {
    return this.#list.length === 0;
  }

  write(at: number, data: Uint8Array): void {
    const end = at + data.length;
    const i = this.#firstEndingAtOrAfter(at);
    let j = i;
    while (j < this.#list.length && this.#list[j]!.at <= end) j++;
    if (i === j) {
      this.#list.splice(i, 0, { at, buf: new Uint8Array(data), len: data.length, shared: false });
      this.bytes += data.length;
      return;
    }
    const first = this.#list[i]!;
    const last = this.#list[j - 1]!;
    const start = Math.min(at, first.at);
    const stop = Math.max(end, last.at + last.len);
    const reuse = first.at === start && !first.shared && first.buf.length >= stop - start;
    let into = first;
    if (!reuse) {
      // Room to grow when the range extends the first one (a program writing in order); a copy
      // made because a publish holds the range takes only what it needs.
      const room = first.at === start && !first.shared ? Math.max(stop - start, first.buf.length * 2) : stop - start;
      into = { at: start, buf: new Uint8Array(room), len: 0, shared: false };
    }
    for (let k = i; k < j; k++) {
      const x = this.#list[k]!;
      this.bytes -= x.len;
      if (x !== into) into.buf.set(x.buf.subarray(0, x.len), x.at - start);
    }
    into.buf.set(data, at - start);
    into.len = stop - start;
    this.bytes += into.len;
    this.#list.splice(i, j - i, into);
  }

  /** The file is cut at `size`: what was written beyond is gone. */
  truncate(size: number): void {
    while (this.#list.length > 0) {
      const x = this.#list[this.#list.length - 1]!;
      if (x.at >= size) {
        this.#list.pop();
        this.bytes -= x.len;
      } else {
        if (x.at + x.len > size) {
          this.bytes -= x.at + x.len - size;
          x.len = size - x.at;
        }
        break;
      }
    }
  }

  /** Copies what was written in [pos, pos + into.length) over `into` (which holds the bytes beneath). */
  overlay(into: Uint8Array, pos: number): void {
    const end = pos + into.length;
    for (let k = this.#firstEndingAtOrAfter(pos + 1); k < this.#list.length; k++) {
      const x = this.#list[k]!;
      if (x.at >= end) break;
      const lo = Math.max(x.at, pos);
      const hi = Math.min(x.at + x.len, end);
      if (lo < hi) into.set(x.buf.subarray(lo - x.at, hi - x.at), lo - pos);
    }
  }

  /** The ranges as they are now, for a publish; later writes copy rather than change them. */
  snapshot(): PatchView {
    return this.#list.map((x) => {
      x.shared = true;
      return { at: x.at, bytes: x.buf.subarray(0, x.len) };
    });
  }

  clear(): void {
    this.#list = [];
    this.bytes = 0;
  }

  /** Index of the first range ending at or after `pos` (touching it counts). */
  #firstEndingAtOrAfter(pos: number): number {
    let lo = 0;
    let hi = this.#list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const x = this.#list[mid]!;
      if (x.at + x.len < pos) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
