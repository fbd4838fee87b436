import { hash } from 'node:crypto';
import { open, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createHarness, type HarnessContext } from '../src/harness/index.js';
import { createObservationPolicy } from '../src/policy/index.js';
import type { FileSystem } from '../src/seam/index.js';
import { fsTools } from '../src/tools/index.js';

/** Alternates between two markers, so repeated edits of one file always have a unique match. */
export const markerOf = (flip: number) => `MARK_${flip % 2 === 0 ? 'A' : 'B'}`;

/** ~1 KiB of source-like text with one marker line in the middle. */
export function smallFile(i: number): string {
  const lines: string[] = [];
  for (let l = 0; lines.join('\n').length < 960; l++) {
    lines.push(l === 12 ? `  const flag = ${markerOf(0)}; // file ${i}` : `  const v${l} = compute(${i}, ${l}); // step ${l}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `fs` behind the full tool stack: zod validation, the observation policy, execute, render. */
export function toolHarness(fs: FileSystem): HarnessContext {
  return createHarness({ fs, plugins: [createObservationPolicy(), fsTools()] });
}

/** What a tool without any safety does: read, find, write in place. */
export async function naiveEdit(path: string, from: string, to: string): Promise<void> {
  const text = await readFile(path, 'utf8');
  const at = text.indexOf(from);
  if (at === -1) throw new Error(`naive edit: "${from}" not found`);
  await writeFile(path, text.slice(0, at) + to + text.slice(at + from.length));
}

/**
 * The same edit with the safety the local provider promises, hand-written with plain Node: a
 * digest of the old bytes (the version check), a temp file in the same directory opened
 * exclusively, fsync, rename over the target, fsync of the directory.
 */
export async function safeEdit(path: string, from: string, to: string): Promise<string> {
  const bytes = await readFile(path);
  const version = hash('sha256', bytes, 'base64url');
  const text = bytes.toString('utf8');
  const at = text.indexOf(from);
  if (at === -1) throw new Error(`safe edit: "${from}" not found`);
  const out = Buffer.from(text.slice(0, at) + to + text.slice(at + from.length));
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fh = await open(tmp, 'wx', 0o644);
  try {
    await fh.writeFile(out);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  return version;
}

/** Lines `offset`..`offset + limit - 1` the plain way: read everything, split, slice. */
export async function naiveWindow(path: string, offset: number, limit: number): Promise<string[]> {
  return (await readFile(path, 'utf8')).split('\n').slice(offset - 1, offset - 1 + limit);
}
