import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { FsTargetKey, contentVersion, expectHolds, observe, type FsExpect, type FsVersion } from '../../src/seam/index.js';

const codeOf = (err: unknown) => String((err as { code?: unknown }).code);

/** Two providers holding the same `/d`: these files with their modes, a link `l` to `a`, the directory's mode. */
function twins(files: readonly { name: string; text: string; mode: number }[], dirMode: number) {
  const pair = [createMemoryProvider({}), createMemoryProvider({})] as const;
  for (const { volume: vol } of pair) {
    vol.mkdirSync('/d');
    for (const f of files) {
      vol.writeFileSync(`/d/${f.name}`, f.text);
      vol.chmodSync(`/d/${f.name}`, f.mode);
    }
    vol.symlinkSync('a', '/d/l');
    vol.chmodSync('/d', dirMode);
  }
  return pair;
}

// modify changes a file on memfs's node directly; it must leave what memfs's own read and write
// calls would leave, and refuse what they refuse.
describe('memory modify', () => {
  it('in place leaves the volume as memfs read + writeFileSync would, creations too (property)', async () => {
    const file = fc.record({ name: fc.constantFrom('a', 'b', 'c'), text: fc.string({ maxLength: 8 }), mode: fc.constantFrom(0o644, 0o444, 0o200, 0o000) });
    const targets = fc.constantFrom('/d/a', '/d/b', '/d/l', '/d', '/d/n', '/d/m/n', '/e/n', '/d/a/n');
    const dirModes = fc.constantFrom(0o755, 0o555, 0o333, 0o644);
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(file, { maxLength: 3, selector: (f) => f.name }), targets, fc.string({ maxLength: 4 }), fc.nat(40), dirModes, async (files, at, tail, maxBytes, dirMode) => {
        const [ours, twin] = twins(files, dirMode);
        const change = (cur: { bytes: Uint8Array } | undefined) => Buffer.concat([cur?.bytes ?? new Uint8Array(), Buffer.from(tail)]);
        let got: string;
        try {
          const r = await ours.modify!({ targetKey: FsTargetKey(at), displayPath: at }, { maxBytes }, change);
          got = `ok ${r.ok && r.existed}`;
        } catch {
          got = 'refused'; // the seam words it (FsError); here only that it was refused
        }
        let want: string;
        try {
          const st = twin.volume.statSync(at);
          if (!st.isFile() || Number(st.size) > maxBytes) throw new Error('not plainly a file');
          twin.volume.writeFileSync(at, change({ bytes: twin.volume.readFileSync(at) as Buffer }));
          want = 'ok true';
        } catch (err) {
          want = codeOf(err) === 'ENOENT' ? 'ok false' : 'refused';
        }
        if (want === 'ok false') {
          // Created by modify, with the directories it lacks: memfs's mkdir -p and write calls.
          try {
            twin.volume.mkdirSync(at.slice(0, at.lastIndexOf('/')) || '/', { recursive: true });
            twin.volume.writeFileSync(at, change(undefined));
          } catch {
            want = 'refused';
          }
        }
        expect(got).toBe(want);
        for (const path of ['/d/a', '/d/b', '/d/c', '/d/n', '/d/m/n', '/e/n']) {
          const read = (vol: typeof ours.volume) => {
            if (!vol.existsSync(path)) return null;
            const st = vol.statSync(path);
            const content = st.isDirectory() ? 'a directory' : String(vol.readFileSync(path, 'latin1'));
            return [st.mode, st.uid, st.gid, st.nlink, st.size, content];
          };
          if (files.some((f) => `/d/${f.name}` === path && (f.mode & 0o400) === 0)) continue; // unreadable by either
          expect(read(ours.volume), path).toEqual(read(twin.volume));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('in place advances the modification time and keeps the mode', async () => {
    const p = createMemoryProvider({ files: { '/x.sh': 'echo 1\n' } });
    p.volume.chmodSync('/x.sh', 0o755);
    p.volume.utimesSync('/x.sh', 1, 1);
    const r = await p.modify!({ targetKey: FsTargetKey('/x.sh'), displayPath: '/x.sh' }, { maxBytes: 100 }, () => Buffer.from('echo 2\n'));
    expect(r.ok).toBe(true);
    const st = p.volume.statSync('/x.sh');
    expect(st.mtimeMs).toBeGreaterThan(1000);
    expect(st.mode & 0o777).toBe(0o755);
    expect(String(p.volume.readFileSync('/x.sh'))).toBe('echo 2\n');
  });
});

// swap of an existing file takes the same way: it must answer and leave what a read of the
// current file and memfs's writeFileSync would, refusals included.
describe('memory swap of an existing file', () => {
  it('answers and leaves the volume as a read, a comparison and writeFileSync would (property)', async () => {
    const file = fc.record({ name: fc.constantFrom('a', 'b'), text: fc.string({ maxLength: 6 }), mode: fc.constantFrom(0o644, 0o444, 0o200, 0o000, 0o755) });
    const expects = fc.constantFrom('any', 'absent', 'same', 'other');
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(file, { maxLength: 2, selector: (f) => f.name }), fc.constantFrom('/d/a', '/d/b', '/d/l'), expects, fc.string({ maxLength: 4 }), fc.constantFrom(0o755, 0o555, 0o333), async (files, at, kind, text, dirMode) => {
        const [ours, twin] = twins(files, dirMode);
        const versionOf = (s: string) => contentVersion(Buffer.from(s));
        const current = files.find((f) => `/d/${f.name}` === at)?.text;
        const expect_: FsExpect =
          kind === 'any' ? { kind: 'any' } : kind === 'absent' ? { kind: 'absent' } : { kind: 'present', version: versionOf(kind === 'same' ? (current ?? '') : 'something else') };
        const bytes = Buffer.from(text);
        let got: string;
        try {
          const r = await ours.swap({ targetKey: FsTargetKey(at), displayPath: at }, { expect: expect_, bytes });
          got = r.ok ? `ok ${r.existed} ${r.version}` : `lost ${JSON.stringify(r.current)}`;
        } catch {
          got = 'refused';
        }
        let want: string;
        try {
          // The twin: what the current file is (memfs's own read), the comparison, then writeFileSync.
          let before: { version: FsVersion } | undefined;
          try {
            const st = twin.volume.lstatSync(at);
            if (!st.isFile()) throw Object.assign(new Error('not a file'), { code: 'NOTFILE' });
            before = { version: contentVersion(twin.volume.readFileSync(at) as Buffer) };
          } catch (err) {
            if (codeOf(err) !== 'ENOENT') throw err;
          }
          if (!expectHolds(expect_, before)) want = `lost ${JSON.stringify(observe(before))}`;
          else {
            twin.volume.writeFileSync(at, bytes);
            want = `ok ${before !== undefined} ${contentVersion(bytes)}`;
          }
        } catch {
          want = 'refused';
        }
        // A name that is a link (or missing) is the seam's and the other way's business: compare only plain answers.
        if (at === '/d/l') return;
        expect(got).toBe(want);
        for (const path of ['/d/a', '/d/b']) {
          const read = (vol: typeof ours.volume) => {
            if (!vol.existsSync(path)) return null;
            const st = vol.statSync(path);
            return [st.mode, st.size, (st.mode & 0o400) === 0 ? null : String(vol.readFileSync(path, 'latin1'))];
          };
          expect(read(ours.volume), path).toEqual(read(twin.volume));
        }
      }),
      { numRuns: 200 },
    );
  });
});
