import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildForChildren, findTemps, makeArea, runScript, treeDigest, type Area, type Build } from './helpers.js';

/**
 * Permission errors, checked as an unprivileged user: this machine and CI run as root, for whom
 * every permission check passes and such tests would pass vacuously. The operations run in a
 * child process with uid/gid 65534 (nobody).
 */

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

let area: Area;
let build: Build;

beforeAll(async () => {
  area = await makeArea('perm');
  if (!isRoot) return;
  build = buildForChildren();
  const r = (p: string) => join(area.root, p);
  await fsp.chmod(area.area, 0o755);
  await fsp.chmod(area.root, 0o755);
  // w/: a directory nobody may write, holding files nobody may not read or not write.
  await fsp.mkdir(r('w'));
  await fsp.chown(r('w'), NOBODY, NOBODY);
  await fsp.writeFile(r('w/unreadable.txt'), 'private\n', { mode: 0o600 });
  await fsp.writeFile(r('w/unwritable.txt'), 'read only\n', { mode: 0o644 });
  await fsp.writeFile(r('w/own.txt'), 'mine\n', { mode: 0o644 });
  await fsp.chown(r('w/own.txt'), NOBODY, NOBODY);
  // ro/: a directory nobody may not write, holding a file nobody owns and may write.
  await fsp.mkdir(r('ro'), { mode: 0o755 });
  await fsp.writeFile(r('ro/writable.txt'), 'writable file, read-only directory\n', { mode: 0o666 });
  await fsp.chown(r('ro/writable.txt'), NOBODY, NOBODY);
  await fsp.chmod(r('ro/writable.txt'), 0o666);
}, 120_000);

afterAll(async () => {
  await area.cleanup();
});

const script = (url: string, root: string) => `
  const { createLocalFs } = await import(${JSON.stringify(url)});
  const fs = createLocalFs({ root: ${JSON.stringify(root)} });
  const cases = [
    ['read an unreadable file', (t) => fs.readText(t), 'w/unreadable.txt'],
    ['stat an unreadable file', (t) => fs.stat(t), 'w/unreadable.txt'],
    ['edit an unreadable file', (t) => fs.editText(t, { oldString: 'private', newString: 'x' }), 'w/unreadable.txt'],
    ['write over an unreadable file', (t) => fs.writeText(t, 'x'), 'w/unreadable.txt'],
    ['write an unwritable file', (t) => fs.writeText(t, 'changed\\n'), 'w/unwritable.txt'],
    ['edit an unwritable file', (t) => fs.editText(t, { oldString: 'read only', newString: 'changed' }), 'w/unwritable.txt'],
    ['write in an unwritable directory', (t) => fs.writeText(t, 'changed\\n'), 'ro/writable.txt'],
    ['edit in an unwritable directory', (t) => fs.editText(t, { oldString: 'writable', newString: 'changed' }), 'ro/writable.txt'],
    ['remove from an unwritable directory', (t) => fs.remove(t), 'ro/writable.txt'],
    ['create in an unwritable directory', (t) => fs.writeText(t, 'new\\n'), 'ro/new.txt'],
    ['create a subdirectory in an unwritable directory', (t) => fs.writeText(t, 'new\\n'), 'ro/sub/new.txt'],
    ['list the unwritable directory (allowed)', async (t) => (await fs.listDir(t)).map((e) => e.name).join(','), 'ro'],
    ['read the unwritable file (allowed)', async (t) => (await fs.readText(t)).text, 'w/unwritable.txt'],
    ['write own file in a writable directory (allowed)', async (t) => (await fs.writeText(t, 'mine\\n')).operation, 'w/own.txt'],
  ];
  const out = [];
  for (const [label, op, path] of cases) {
    try {
      const value = await op(await fs.resolve(path));
      out.push({ label, ok: true, value: value === undefined ? null : value });
    } catch (err) {
      out.push({ label, ok: false, name: err?.name, code: err?.code, message: String(err?.message) });
    }
  }
  process.stdout.write(JSON.stringify({ uid: process.getuid(), out }));
`;

test.skipIf(!isRoot)('as uid 65534: FS_PERMISSION_DENIED and nothing changed', async () => {
  const before = await treeDigest(area.root, { atime: false });
  const res = await runScript(script(build.localUrl, area.root), { uid: NOBODY, gid: NOBODY, timeoutMs: 60_000 });
  expect(res.code, res.stderr).toBe(0);
  const { uid, out } = JSON.parse(res.stdout) as {
    uid: number;
    out: { label: string; ok: boolean; value?: unknown; name?: string; code?: string; message?: string }[];
  };
  expect(uid).toBe(NOBODY);
  const byLabel = Object.fromEntries(out.map((o) => [o.label, o]));
  const denied = [
    'read an unreadable file',
    'stat an unreadable file',
    'edit an unreadable file',
    'write over an unreadable file',
    'write an unwritable file',
    'edit an unwritable file',
    'write in an unwritable directory',
    'edit in an unwritable directory',
    'remove from an unwritable directory',
    'create in an unwritable directory',
    'create a subdirectory in an unwritable directory',
  ];
  for (const label of denied) {
    expect(byLabel[label], label).toMatchObject({ ok: false, name: 'FsError', code: 'FS_PERMISSION_DENIED' });
  }
  expect(byLabel['list the unwritable directory (allowed)']).toMatchObject({ ok: true, value: 'writable.txt' });
  expect(byLabel['read the unwritable file (allowed)']).toMatchObject({ ok: true, value: 'read only\n' });
  expect(byLabel['write own file in a writable directory (allowed)']).toMatchObject({ ok: true, value: 'update' });
  // The one allowed write rewrote own.txt with identical bytes; everything else is as it was.
  const after = await treeDigest(area.root, { atime: false });
  const strip = (d: string) => d.split('\n').filter((l) => !l.startsWith('w/own.txt ') && !l.startsWith('w ')).join('\n');
  expect(strip(after)).toBe(strip(before));
  expect(await fsp.readFile(join(area.root, 'w/own.txt'), 'utf8')).toBe('mine\n');
  expect(await findTemps(area.area)).toEqual([]);
  console.log(`permissions as uid ${uid}: ${out.map((o) => `${o.label} → ${o.ok ? 'ok' : o.code}`).join('; ')}`);
}, 120_000);
