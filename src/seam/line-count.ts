// Counting line breaks in bytes: a gigabyte holds some ten million of them, so one indexOf per
// break (a native call each) costs most of a second. A tiny WebAssembly function compares 16
// bytes at a time (SIMD); the bytes are copied into its memory a window at a time.

const LF = 10;
/** Bytes per copy into the module's memory (its 4 pages). */
const WINDOW = 4 * 65536;

// The module, spelled out. Text format of its one function:
//   (func $count (param $p i32) (param $end i32) (result i32)
//     (local $stop i32) (local $acc v128) (local $total v128)
//     end = p + len
//     block  loop
//       br_if 1 (p >= end)
//       stop = min(p + 4080, end)            ;; 255 steps: a byte lane of $acc cannot overflow
//       acc = 0
//       loop  acc -= i8x16.eq(v128.load(p), splat(10)); p += 16; br_if 0 (p < stop)  end
//       total += widen(widen(acc))           ;; pairwise sums to 4 x i32
//       br 0
//     end  end
//     total[0] + total[1] + total[2] + total[3])
// `len` is a multiple of 16; the caller counts the rest.
const SIMD = 0xfd;
const [LOCAL_GET, LOCAL_SET, LOCAL_TEE, I32_CONST, I32_ADD, I32_LT_U, I32_GE_U, SELECT] = [0x20, 0x21, 0x22, 0x41, 0x6a, 0x49, 0x4f, 0x1b];
const [BLOCK, LOOP, BR, BR_IF, END, VOID] = [0x02, 0x03, 0x0c, 0x0d, 0x0b, 0x40];
const V128_LOAD = [SIMD, 0x00, 4, 0]; // align 2^4, offset 0
const V128_ZERO = [SIMD, 0x0c, ...new Array<number>(16).fill(0)];
const [I8X16_SPLAT, I8X16_EQ, I8X16_SUB] = [[SIMD, 0x0f], [SIMD, 0x23], [SIMD, 0x71]];
const [I16X8_WIDEN_U, I32X4_WIDEN_U, I32X4_ADD] = [[SIMD, 0x7d], [SIMD, 0x7f], [SIMD, 0xae, 0x01]];
const lane = (i: number) => [LOCAL_GET, 4, SIMD, 0x1b, i]; // i32x4.extract_lane of $total
const [P, END_, STOP, ACC, TOTAL] = [0, 1, 2, 3, 4];

const body = [
  ...[0x02, 0x01, 0x7f, 0x02, 0x7b], // locals: 1 i32, 2 v128
  ...[LOCAL_GET, END_, LOCAL_GET, P, I32_ADD, LOCAL_SET, END_],
  ...[BLOCK, VOID, LOOP, VOID],
  ...[LOCAL_GET, P, LOCAL_GET, END_, I32_GE_U, BR_IF, 1],
  ...[LOCAL_GET, P, I32_CONST, 0xf0, 0x1f, I32_ADD, LOCAL_TEE, STOP, LOCAL_GET, END_, LOCAL_GET, STOP, LOCAL_GET, END_, I32_LT_U, SELECT, LOCAL_SET, STOP],
  ...[...V128_ZERO, LOCAL_SET, ACC],
  ...[LOOP, VOID],
  ...[LOCAL_GET, ACC, LOCAL_GET, P, ...V128_LOAD, I32_CONST, LF, ...I8X16_SPLAT, ...I8X16_EQ, ...I8X16_SUB, LOCAL_SET, ACC],
  ...[LOCAL_GET, P, I32_CONST, 16, I32_ADD, LOCAL_TEE, P, LOCAL_GET, STOP, I32_LT_U, BR_IF, 0],
  END,
  ...[LOCAL_GET, TOTAL, LOCAL_GET, ACC, ...I16X8_WIDEN_U, ...I32X4_WIDEN_U, ...I32X4_ADD, LOCAL_SET, TOTAL],
  ...[BR, 0, END, END],
  ...[...lane(0), ...lane(1), I32_ADD, ...lane(2), I32_ADD, ...lane(3), I32_ADD],
  END,
];
const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
const name = (s: string) => [s.length, ...Buffer.from(s, 'latin1')];
const MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
  ...section(1, [1, 0x60, 2, 0x7f, 0x7f, 1, 0x7f]), // type: (i32, i32) -> i32
  ...section(3, [1, 0]), // one function of that type
  ...section(5, [1, 0x00, WINDOW / 65536]), // one memory of fixed pages
  ...section(7, [2, ...name('memory'), 0x02, 0, ...name('count'), 0x00, 0]),
  ...section(10, [1, ...leb(body.length), ...body]),
]);

function leb(n: number): number[] {
  const out: number[] = [];
  do {
    const b = n & 0x7f;
    n >>>= 7;
    out.push(n === 0 ? b : b | 0x80);
  } while (n !== 0);
  return out;
}

interface Simd {
  readonly memory: Uint8Array;
  count(p: number, len: number): number;
}

/** The compiled module, or null where WebAssembly SIMD is not available. */
let simd: Simd | null | undefined;

/** The part of the WebAssembly global used here (the project's type libraries do not declare it). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { memory: { buffer: ArrayBuffer }; count: Simd['count'] } };
}

function load(): Simd | null {
  try {
    const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;
    const { memory, count } = new wasm.Instance(new wasm.Module(MODULE)).exports;
    return { memory: new Uint8Array(memory.buffer), count };
  } catch {
    return null;
  }
}

/** Whether the SIMD module runs here (Node 16.4+ has WebAssembly SIMD). */
export function simdLineCount(): boolean {
  simd ??= load();
  return simd !== null;
}

/** Line feeds (0x0A) in `bytes[from..to)`. */
export function countLf(bytes: Uint8Array, from = 0, to = bytes.length): number {
  if (to - from < 256) return countLfPlain(bytes, from, to);
  const s = (simd ??= load());
  if (s === null) return countLfPlain(bytes, from, to);
  let n = 0;
  for (let at = from; at < to; at += WINDOW) {
    const len = Math.min(WINDOW, to - at);
    const whole = len & ~15;
    s.memory.set(bytes.subarray(at, at + whole), 0);
    n += s.count(0, whole) + countLfPlain(bytes, at + whole, at + len);
  }
  return n;
}

/** The same, a byte at a time: short ranges, and where SIMD is missing. */
export function countLfPlain(bytes: Uint8Array, from = 0, to = bytes.length): number {
  let n = 0;
  for (let i = from; i < to; i++) if (bytes[i] === LF) n++;
  return n;
}
