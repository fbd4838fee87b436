import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { findTemps, runScript, treeDigest } from '../local/helpers.js';
import { buildPackageForChildren } from './children.js';
import { tempDir } from './subjects.js';
import { tally } from './tally.js';

/**
 * Permissions at the tool layer, as an unprivileged user: CI runs as root, for whom every check
 * passes, so the calls run in a child process with uid/gid 65534 (nobody), through the real
 * harness, policy and tools, over the local provider and over an overlay on it. Unreadable and
 * unwritable files and directories give FS_PERMISSION_DENIED (or a refusal of the policy before
 * any I/O), nothing on disk changes, no temp file is left, and an overlay keeps a change it could
 * not commit. test/local/permissions.test.ts covers the provider's own calls.
 */

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

interface Outcome {
  readonly label: string;
  readonly ok: boolean;
  readonly code: string | null;
  readonly text: string;
}

const script = (urls: Record<string, string>, root: string) => `
  const { createHarness } = await import(${JSON.stringify(urls.index)});
  const { createObservationPolicy } = await import(${JSON.stringify(urls.policy)});
  const { fsTools, searchTools } = await import(${JSON.stringify(urls.tools)});
  const { createLocalFs } = await import(${JSON.stringify(urls.local)});
  const { createOverlayFs } = await import(${JSON.stringify(urls.overlay)});
  const root = ${JSON.stringify(root)};
  const p = (rel) => root + '/' + rel;
  const out = [];
  const harness = (fs) => createHarness({ fs, cwd: root, plugins: [createObservationPolicy(), fsTools(), searchTools()] });
  const call = async (label, ctx, tool, args) => {
    const r = await ctx.tools.execute(tool, args, { owner: 'agent' });
    out.push({ label, ok: !r.isError, code: r.error ? r.error.code : null, text: r.text.slice(0, 300) });
  };
  const direct = async (label, fn) => {
    try { await fn(); out.push({ label, ok: true, code: null, text: '' }); }
    catch (e) { out.push({ label, ok: false, code: e && e.code ? e.code : 'not an FsError: ' + e, text: String(e && e.message) }); }
  };

  const local = createLocalFs({ root });
  const t = harness(local);
  await call('read an unreadable file', t, 'read', { file_path: p('secret.txt') });
  await call('write over an unreadable file', t, 'write', { file_path: p('secret.txt'), content: 'x' });
  await call('edit an unreadable file (never read)', t, 'edit', { file_path: p('secret.txt'), old_string: 'secret', new_string: 'x' });
  await call('read a read-only file', t, 'read', { file_path: p('ro.txt') });
  await call('write a read-only file', t, 'write', { file_path: p('ro.txt'), content: 'changed\\n' });
  await call('edit a read-only file', t, 'edit', { file_path: p('ro.txt'), old_string: 'read only', new_string: 'changed' });
  await call('read in an unsearchable directory', t, 'read', { file_path: p('locked/inner.txt') });
  await call('create in an unsearchable directory', t, 'write', { file_path: p('locked/new.txt'), content: 'x' });
  await call('read in an unlistable directory', t, 'read', { file_path: p('unlisted/known.txt') });
  await call('create in an unlistable directory', t, 'write', { file_path: p('unlisted/new.txt'), content: 'x' });
  await call('read in a read-only directory', t, 'read', { file_path: p('rodir/file.txt') });
  await call('edit in a read-only directory', t, 'edit', { file_path: p('rodir/file.txt'), old_string: 'writable', new_string: 'changed' });
  await call('create in a read-only directory', t, 'write', { file_path: p('rodir/new.txt'), content: 'x' });
  await call('create a directory in a read-only directory', t, 'write', { file_path: p('rodir/sub/new.txt'), content: 'x' });
  await call('read a root file in a writable directory', t, 'read', { file_path: p('wdir/rofile.txt') });
  await call('write a root file in a writable directory', t, 'write', { file_path: p('wdir/rofile.txt'), content: 'changed\\n' });
  await direct('list an unlistable directory', async () => local.listDir(await local.resolve(p('unlisted'))));
  await direct('list an unsearchable directory', async () => local.listDir(await local.resolve(p('locked'))));
  await call('grep over the tree', t, 'grep', { pattern: 'x' });
  await call('glob over the tree', t, 'glob', { pattern: '**/*' });
  await call('read own file (allowed)', t, 'read', { file_path: p('wdir/mine.txt') });
  await call('edit own file in own directory (allowed)', t, 'edit', { file_path: p('wdir/mine.txt'), old_string: 'mine', new_string: 'still mine' });

  const overlay = await createOverlayFs({ lower: createLocalFs({ root }) });
  const o = harness(overlay);
  await call('overlay: read an unreadable file', o, 'read', { file_path: p('secret.txt') });
  await call('overlay: create in an unsearchable directory', o, 'write', { file_path: p('locked/new.txt'), content: 'x' });
  await call('overlay: read a read-only file', o, 'read', { file_path: p('ro.txt') });
  await call('overlay: edit a read-only file (in the upper)', o, 'edit', { file_path: p('ro.txt'), old_string: 'read only', new_string: 'changed' });
  await call('overlay: create in a read-only directory (in the upper)', o, 'write', { file_path: p('rodir/new.txt'), content: 'x' });
  const result = await overlay.commit();
  const pending = (await overlay.changes()).map((c) => c.path);
  process.stdout.write(JSON.stringify({ uid: process.getuid(), out, commit: result, pending }));
`;

export function describePermissions(): void {
  describe('permissions as an unprivileged user (uid 65534)', () => {
    if (!isRoot) tally.skipped.push('permissions: not running as root, so no child can switch to uid 65534');

    test.skipIf(!isRoot)('tools over local and overlay: FS_PERMISSION_DENIED, nothing changed', async () => {
      const build = buildPackageForChildren();
      const { dir, cleanup } = await tempDir('perm');
      try {
        chmodSync(dir, 0o755);
        const root = join(dir, 'root');
        const r = (rel: string) => join(root, rel);
        mkdirSync(root, { mode: 0o755 });
        chmodSync(root, 0o755);
        writeFileSync(r('secret.txt'), 'secret\n', { mode: 0o600 });
        writeFileSync(r('ro.txt'), 'read only\n', { mode: 0o644 });
        mkdirSync(r('locked'), { mode: 0o700 });
        writeFileSync(r('locked/inner.txt'), 'inner\n', { mode: 0o644 });
        mkdirSync(r('unlisted'), { mode: 0o711 });
        chmodSync(r('unlisted'), 0o711);
        writeFileSync(r('unlisted/known.txt'), 'known\n', { mode: 0o644 });
        mkdirSync(r('rodir'), { mode: 0o755 });
        writeFileSync(r('rodir/file.txt'), 'writable file\n');
        chownSync(r('rodir/file.txt'), NOBODY, NOBODY);
        chmodSync(r('rodir/file.txt'), 0o666);
        mkdirSync(r('wdir'), { mode: 0o755 });
        chownSync(r('wdir'), NOBODY, NOBODY);
        writeFileSync(r('wdir/rofile.txt'), 'root file\n', { mode: 0o644 });
        writeFileSync(r('wdir/mine.txt'), 'mine\n', { mode: 0o644 });
        chownSync(r('wdir/mine.txt'), NOBODY, NOBODY);
        const before = await treeDigest(root, { atime: false });

        const urls = {
          index: build.url('src/index.ts'),
          policy: build.url('src/policy/index.ts'),
          tools: build.url('src/tools/index.ts'),
          local: build.url('src/backends/local/index.ts'),
          overlay: build.url('src/backends/overlay/index.ts'),
        };
        const res = await runScript(script(urls, root), { uid: NOBODY, gid: NOBODY, timeoutMs: 120_000 });
        expect(res.code, res.stderr).toBe(0);
        const report = JSON.parse(res.stdout) as {
          uid: number;
          out: Outcome[];
          commit: { committed: string[]; conflicts: unknown[]; failed: { path: string; code: string }[] };
          pending: string[];
        };
        expect(report.uid).toBe(NOBODY);
        const by = Object.fromEntries(report.out.map((o) => [o.label, o]));
        const expectOutcome = (label: string, ok: boolean, code: string | null) => {
          tally.permissionCases++;
          const o = by[label];
          if (o === undefined || o.ok !== ok || o.code !== code) tally.permissionViolations++;
          expect(o, label).toMatchObject({ ok, code });
        };
        const DENIED = 'FS_PERMISSION_DENIED';
        expectOutcome('read an unreadable file', false, DENIED);
        expectOutcome('write over an unreadable file', false, DENIED);
        // The policy refuses before any I/O: the file was never read in this session.
        expectOutcome('edit an unreadable file (never read)', false, 'FS_NOT_OBSERVED');
        expectOutcome('read a read-only file', true, null);
        expectOutcome('write a read-only file', false, DENIED);
        expectOutcome('edit a read-only file', false, DENIED);
        expectOutcome('read in an unsearchable directory', false, DENIED);
        expectOutcome('create in an unsearchable directory', false, DENIED);
        // The provider opens a file's directory (O_RDONLY) to anchor it, which needs read
        // permission: a traverse-only directory (0711) is refused, although a read by path would pass.
        expectOutcome('read in an unlistable directory', false, DENIED);
        expectOutcome('create in an unlistable directory', false, DENIED);
        expectOutcome('read in a read-only directory', true, null);
        // Writing replaces the file through a temp in its directory: a file one may write (this
        // one is nobody's, mode 0666) still needs a writable directory.
        expectOutcome('edit in a read-only directory', false, DENIED);
        expectOutcome('create in a read-only directory', false, DENIED);
        expectOutcome('create a directory in a read-only directory', false, DENIED);
        expectOutcome('read a root file in a writable directory', true, null);
        expectOutcome('write a root file in a writable directory', false, DENIED);
        expectOutcome('list an unlistable directory', false, DENIED);
        expectOutcome('list an unsearchable directory', false, DENIED);
        expectOutcome('read own file (allowed)', true, null);
        expectOutcome('edit own file in own directory (allowed)', true, null);
        expectOutcome('overlay: read an unreadable file', false, DENIED);
        expectOutcome('overlay: create in an unsearchable directory', false, DENIED);
        expectOutcome('overlay: read a read-only file', true, null);
        expectOutcome('overlay: edit a read-only file (in the upper)', true, null);
        expectOutcome('overlay: create in a read-only directory (in the upper)', true, null);
        // The search tools skip or refuse what they cannot read, with a structured result either way.
        for (const label of ['grep over the tree', 'glob over the tree']) {
          const o = by[label]!;
          expect(o.ok || o.code === DENIED, `${label}: ${o.text}`).toBe(true);
        }
        // The overlay's commit is refused for both changes, which it keeps.
        expect(report.commit.committed).toEqual([]);
        expect(report.commit.conflicts).toEqual([]);
        expect(report.commit.failed.map((f) => [f.path, f.code])).toEqual([
          [r('ro.txt'), DENIED],
          [r('rodir/new.txt'), DENIED],
        ]);
        expect(report.pending).toEqual([r('ro.txt'), r('rodir/new.txt')]);
        tally.permissionCases += 2;

        // Nothing changed but the one file nobody owns and edited (and its directory).
        const after = await treeDigest(root, { atime: false });
        const strip = (d: string) => d.split('\n').filter((l) => !l.startsWith('wdir/mine.txt ') && !l.startsWith('wdir ')).join('\n');
        if (strip(after) !== strip(before)) tally.permissionViolations++;
        expect(strip(after)).toBe(strip(before));
        expect(readFileSync(r('wdir/mine.txt'), 'utf8')).toBe('still mine\n');
        expect(await findTemps(dir)).toEqual([]);
        console.log(`permissions as uid ${report.uid}: ${report.out.map((o) => `${o.label} → ${o.ok ? 'ok' : o.code}`).join('; ')}; overlay commit failed: ${report.commit.failed.map((f) => f.code).join(', ')}`);
      } finally {
        await cleanup();
      }
    }, 300_000);
  });
}
