import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createLocalFs, type LocalFileSystem } from '../../src/backends/local/index.js';
import { isTempName } from '../../src/backends/local/provider.js';
import { codeOf } from '../support/code-of.js';
import { makeArea, type Area } from './helpers.js';

// The temp-name pattern is reserved: no path a caller can give names such a file, so sweepTemps,
// which removes every old file of that pattern, can never remove a file a caller created.

const HEX = '0123456789abcdef0123456789abcdef';
const FORGED = `.z.${HEX}.dsh-tmp`;
const OLD = new Date('2001-01-01T00:00:00Z');

/** Every regular file under `dir` with its bytes, hidden and temp names included, by relative path. */
async function filesUnder(dir: string, prefix = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
    const rel = prefix === '' ? e.name : `${prefix}/${e.name}`;
    if (e.isDirectory()) Object.assign(out, await filesUnder(join(dir, e.name), rel));
    else if (e.isFile()) out[rel] = await fsp.readFile(join(dir, e.name), 'latin1');
  }
  return out;
}

/** Ages every file and directory under `dir`, as if the caller had written them long ago. */
async function ageAll(dir: string): Promise<void> {
  for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await ageAll(p);
    if (!e.isSymbolicLink()) await fsp.utimes(p, OLD, OLD);
  }
}

describe('temp names are reserved', () => {
  let area: Area;
  let fs: LocalFileSystem;
  beforeEach(async () => {
    area = await makeArea('temps');
    fs = createLocalFs({ root: area.root });
  });
  afterEach(() => area.cleanup());

  test(`"${FORGED}" cannot be created, written, renamed onto or addressed, and sweepTemps never removes a caller's file`, async () => {
    expect(isTempName(FORGED)).toBe(true);
    expect(await codeOf(fs.resolve(FORGED))).toBe('FS_INVALID_ARGUMENT');
    expect(await codeOf(fs.resolve(`d/${FORGED}/x.txt`))).toBe('FS_INVALID_ARGUMENT');
    expect(await codeOf(fs.resolve(join(area.root, FORGED)))).toBe('FS_INVALID_ARGUMENT');
    const plain = await fs.resolve('plain.txt');
    await fs.writeText(plain, 'mine\n');
    await ageAll(area.root);
    expect(await fs.sweepTemps()).toEqual([]);
    expect(await filesUnder(area.root)).toEqual({ 'plain.txt': 'mine\n' });
  });

  test('a link whose target is a reserved name is refused, so nothing is written there', async () => {
    await fsp.symlink(FORGED, join(area.root, 'alias'));
    await fsp.mkdir(join(area.root, 'd'));
    await fsp.symlink(`../${FORGED}`, join(area.root, 'd', 'up'));
    for (const path of ['alias', 'd/up']) {
      expect(await codeOf(fs.resolve(path)), path).toBe('FS_INVALID_ARGUMENT');
    }
    expect(await filesUnder(area.root)).toEqual({});
  });

  test('a target whose key names a reserved name is refused by every operation', async () => {
    const forged = { targetKey: join(area.root, FORGED), displayPath: FORGED } as unknown as Awaited<ReturnType<typeof fs.resolve>>;
    const other = await fs.resolve('other.txt');
    await fs.writeText(other, 'o\n');
    const ops: Array<[string, () => Promise<unknown>]> = [
      ['writeText', () => fs.writeText(forged, 'x')],
      ['writeBytes', () => fs.writeBytes(forged, new Uint8Array([1]))],
      ['mkdir', () => fs.mkdir(forged)],
      ['rename onto', () => fs.rename(other, forged)],
      ['rename from', () => fs.rename(forged, other, { replace: true })],
      ['readText', () => fs.readText(forged)],
      ['stat', () => fs.stat(forged)],
      ['remove', () => fs.remove(forged)],
    ];
    for (const [name, op] of ops) expect(await codeOf(op()), name).toBe('FS_INVALID_ARGUMENT');
    expect(await filesUnder(area.root)).toEqual({ 'other.txt': 'o\n' });
  });

  test('the root itself may have a reserved name; only names below it are refused', async () => {
    const odd = join(area.area, `.r.${HEX}.dsh-tmp`);
    await fsp.mkdir(odd);
    const inOdd = createLocalFs({ root: odd });
    const t = await inOdd.resolve('a.txt');
    await inOdd.writeText(t, 'a\n');
    expect((await inOdd.readText(t)).text).toBe('a\n');
    expect(await codeOf(inOdd.resolve(FORGED))).toBe('FS_INVALID_ARGUMENT');
  });
});

// Names a caller might give: plain ones, the reserved pattern itself, and near misses of it.
const hex32 = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));
const stem = fc.string({ maxLength: 6, unit: fc.constantFrom('a', 'z', '.', '-', ' ', 'é', '\n') });
const segment = fc.oneof(
  fc.constantFrom('a', 'b.txt', '.hidden', 'x.dsh-tmp', '.dsh-tmp'),
  fc.tuple(stem, hex32).map(([s, h]) => `.${s}.${h}.dsh-tmp`),
  fc.tuple(stem, hex32).map(([s, h]) => `${s}.${h}.dsh-tmp`),
  fc.tuple(stem, hex32).map(([s, h]) => `.${s}.${h.toUpperCase()}.dsh-tmp`),
  fc.tuple(stem, hex32).map(([s, h]) => `.${s}.${h.slice(1)}.dsh-tmp`),
  fc.tuple(stem, hex32).map(([s, h]) => `.${s}.${h}.dsh-tmp.bak`),
);
const path = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('/'));
const command = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), path, text: fc.string({ maxLength: 8 }) }),
  fc.record({ kind: fc.constant('bytes' as const), path, text: fc.string({ maxLength: 8 }) }),
  fc.record({ kind: fc.constant('mkdir' as const), path }),
  fc.record({ kind: fc.constant('rename' as const), path, to: path }),
);

describe('sweepTemps and caller paths', () => {
  test('no path a caller can write makes sweepTemps remove a file the caller created', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 8 }), async (commands) => {
        const area = await makeArea('sweep-prop');
        try {
          const fs = createLocalFs({ root: area.root });
          for (const c of commands) {
            try {
              const target = await fs.resolve(c.path);
              if (c.kind === 'write') await fs.writeText(target, c.text);
              else if (c.kind === 'bytes') await fs.writeBytes(target, Buffer.from(c.text));
              else if (c.kind === 'mkdir') await fs.mkdir(target);
              else await fs.rename(target, await fs.resolve(c.to), { replace: true });
            } catch (err) {
              // Refusals are fine (a reserved name, a file in the way); anything but an FsError is not.
              expect((err as { name?: string }).name).toBe('FsError');
            }
          }
          await ageAll(area.root);
          const before = await filesUnder(area.root);
          expect(await fs.sweepTemps()).toEqual([]);
          expect(await filesUnder(area.root)).toEqual(before);
        } finally {
          await area.cleanup();
        }
      }),
      { numRuns: Number(process.env.DSH_FS_CONFORMANCE_RUNS ?? 60) },
    );
  }, 120_000);
});
