import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresFs } from '../../src/backends/postgres/index.js';
import { contentVersion } from '../../src/seam/index.js';
import { ensureBuilt } from '../cli/helpers.js';
import { SERVER, closeShared, newWorkspace, sharedPool } from './helpers.js';

const WORKER = fileURLToPath(new URL('./edit-worker.mjs', import.meta.url));
const PROCESSES = 4;
const EDITS = 250;
const FILES = 3;

interface Ack {
  file: string;
  token: string;
  guarded: boolean;
  base?: string;
  version: string;
  /** Append mode only: the code of an edit that failed. */
  failed?: string;
  message?: string;
}

function runWorker(workspace: string, worker: number, files = FILES, mode: 'mixed' | 'append' = 'mixed'): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const args = [WORKER, SERVER!, workspace, String(worker), String(EDITS), String(files), mode];
    execFile(process.execPath, args, { maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`worker ${worker} failed: ${err.message}\n${stderr}`));
      else resolve(stdout.trim().split('\n').map((line) => JSON.parse(line) as Ack));
    });
  });
}

const WHY_SKIPPED = SERVER === undefined ? ' (skipped: needs a real server; set DSH_FS_TEST_PG or run through scripts/ci-postgres.sh)' : '';

describe.runIf(SERVER !== undefined)(`postgres: many processes editing shared files${WHY_SKIPPED}`, () => {
  afterAll(closeShared);

  it(`${PROCESSES} processes × ${EDITS} guarded and unguarded edits: every acknowledged edit is present, in one version chain per file`, async () => {
    await ensureBuilt();
    const workspace = newWorkspace('multiprocess');
    const fs = createPostgresFs({ client: sharedPool(), workspace });
    const initial = 'START\nEND\n';
    for (let f = 0; f < FILES; f++) await fs.writeText(await fs.resolve(`/shared/f${f}.txt`), initial);

    const acks = (await Promise.all(Array.from({ length: PROCESSES }, (_, w) => runWorker(workspace, w)))).flat();
    expect(acks).toHaveLength(PROCESSES * EDITS);

    for (let f = 0; f < FILES; f++) {
      const file = `/shared/f${f}.txt`;
      const mine = acks.filter((a) => a.file === file);
      const lines = (await fs.readText(await fs.resolve(file))).text.split('\n');
      expect(lines[0]).toBe('START');
      const tokens = lines.slice(1, -2);
      // No update lost and none invented: the file holds exactly the acknowledged tokens, once each.
      expect([...tokens].sort()).toEqual(mine.map((a) => a.token).sort());
      // The order of the tokens is the order of the commits. Edit k turned the content with the
      // first k-1 tokens into the content with k: its version is that content's digest, and a
      // guarded edit's base is the previous one's, so the versions form one chain.
      const contentAfter = (k: number) => ['START', ...tokens.slice(0, k), 'END', ''].join('\n');
      const byToken = new Map(mine.map((a) => [a.token, a]));
      tokens.forEach((token, i) => {
        const ack = byToken.get(token)!;
        expect(ack.version, token).toBe(contentVersion(Buffer.from(contentAfter(i + 1))));
        if (ack.guarded) expect(ack.base, token).toBe(contentVersion(Buffer.from(contentAfter(i))));
      });
    }
  });

  it(`${PROCESSES} processes × ${EDITS} unguarded appends to one file: none fails, every line is there exactly once`, async () => {
    await ensureBuilt();
    const workspace = newWorkspace('multiprocess-append');
    const fs = createPostgresFs({ client: sharedPool(), workspace });
    const target = await fs.resolve('/shared/f0.txt');
    await fs.writeText(target, 'START\nEND\n');

    const started = performance.now();
    const acks = (await Promise.all(Array.from({ length: PROCESSES }, (_, w) => runWorker(workspace, w, 1, 'append')))).flat();
    const ms = performance.now() - started;
    const failed = acks.filter((a) => a.failed !== undefined);
    console.log(`${PROCESSES} × ${EDITS} unguarded appends to one file: ${ms.toFixed(0)} ms, ${failed.length} failed`);
    expect(failed.map((a) => `${a.token}: ${a.failed} ${a.message}`)).toEqual([]);
    expect(acks).toHaveLength(PROCESSES * EDITS);

    const lines = (await fs.readText(target)).text.split('\n');
    expect(lines[0]).toBe('START');
    expect(lines.slice(-2)).toEqual(['END', '']);
    const expected = Array.from({ length: PROCESSES }, (_, w) => Array.from({ length: EDITS }, (_, i) => `w${w}-${i}`)).flat();
    expect(lines.slice(1, -2).sort()).toEqual(expected.sort());
    // Each process's own appends land in the order it made them.
    for (let w = 0; w < PROCESSES; w++) {
      const mine = lines.filter((l) => l.startsWith(`w${w}-`));
      expect(mine).toEqual(Array.from({ length: EDITS }, (_, i) => `w${w}-${i}`));
    }
  });
});
