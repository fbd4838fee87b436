import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { createSqliteFs } from '../../src/backends/sqlite/index.js';
import { ensureBuilt } from '../cli/helpers.js';
import { tempSqlite } from './helpers.js';

const WORKER = fileURLToPath(new URL('./append-worker.mjs', import.meta.url));
const PROCESSES = 4;
const EDITS = 250;

interface Ack {
  token: string;
  version?: string;
  failed?: string;
  message?: string;
}

function runWorker(file: string, worker: number): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [WORKER, file, 'shared', String(worker), String(EDITS)], { maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`worker ${worker} failed: ${err.message}\n${stderr}`));
      else resolve(stdout.trim().split('\n').map((line) => JSON.parse(line) as Ack));
    });
  });
}

it(`sqlite: ${PROCESSES} processes × ${EDITS} unguarded appends to one file in one SQLite file: none fails, every line is there exactly once`, async () => {
  await ensureBuilt();
  const temp = await tempSqlite('multiprocess');
  const fs = createSqliteFs({ path: temp.file, workspace: 'shared' });
  try {
    const target = await fs.resolve('/shared/f0.txt');
    await fs.writeText(target, 'START\nEND\n');

    const acks = (await Promise.all(Array.from({ length: PROCESSES }, (_, w) => runWorker(temp.file, w)))).flat();
    expect(acks.filter((a) => a.failed !== undefined).map((a) => `${a.token}: ${a.failed} ${a.message}`)).toEqual([]);
    expect(acks).toHaveLength(PROCESSES * EDITS);

    const lines = (await fs.readText(target)).text.split('\n');
    expect(lines[0]).toBe('START');
    expect(lines.slice(-2)).toEqual(['END', '']);
    const expected = Array.from({ length: PROCESSES }, (_, w) => Array.from({ length: EDITS }, (_, i) => `w${w}-${i}`)).flat();
    expect(lines.slice(1, -2).sort()).toEqual(expected.sort());
    // Each process's own appends land in the order it made them.
    for (let w = 0; w < PROCESSES; w++) {
      expect(lines.filter((l) => l.startsWith(`w${w}-`))).toEqual(Array.from({ length: EDITS }, (_, i) => `w${w}-${i}`));
    }
  } finally {
    await fs.close();
    await temp.remove();
  }
}, 120_000);
