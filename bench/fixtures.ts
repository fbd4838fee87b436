import { MiB } from './lib.js';

export interface TextFixture {
  readonly text: string;
  /** Lines in the text (it ends with a line break). */
  readonly lines: number;
  /** A string that occurs exactly once, on a line near the middle. */
  readonly marker: string;
}

const WORDS = ['const', 'value', 'result', 'items', 'config', 'return', 'await', 'index', 'buffer', 'handler', 'options', 'state'];

/**
 * Source-like ASCII text of about `bytes` bytes: lines of 10–70 characters (average ~40), some
 * indented, some blank, with one unique marker line in the middle. Deterministic.
 */
export function sourceText(bytes: number, marker: string): TextFixture {
  const parts: string[] = [];
  let size = 0;
  let lines = 0;
  let seed = 0x2545f491;
  const rand = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  let markerPlaced = false;
  while (size < bytes) {
    let line: string;
    if (!markerPlaced && size >= bytes / 2) {
      line = `  const checkpoint = "${marker}";`;
      markerPlaced = true;
    } else if (rand() < 0.08) line = '';
    else {
      const indent = '  '.repeat(Math.floor(rand() * 4));
      const n = 2 + Math.floor(rand() * 7);
      const words: string[] = [];
      for (let w = 0; w < n; w++) words.push(WORDS[Math.floor(rand() * WORDS.length)]!);
      line = `${indent}${words.join(' ')} ${lines};`;
    }
    parts.push(line, '\n');
    size += line.length + 1;
    lines++;
  }
  const text = parts.join('');
  if (text.indexOf(marker) !== text.lastIndexOf(marker)) throw new Error('fixture marker is not unique');
  return { text, lines, marker };
}

/**
 * The 1 MiB runs come first and warm every code path, so the 64 MiB runs need no warm-up round.
 * Only 64 MiB runs start from a full collection (so one run's garbage is not collected inside the
 * next one's timing): after a collection V8 gives pages back, and a run of a few milliseconds
 * then mostly measures taking them again.
 */
export const SIZES = [
  { label: '1 MiB', bytes: 1 * MiB, reps: 15, warmup: 2, collectFirst: false },
  { label: '64 MiB', bytes: 64 * MiB, reps: 3, warmup: 0, collectFirst: true },
] as const;
