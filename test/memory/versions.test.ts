import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { contentVersion } from '../../src/seam/index.js';

// The memory provider keeps a file's version while its memfs node's storage, size and
// modification time are the very same (src/backends/memory/versions.ts). Whatever changes a
// file, through the contract or on the volume directly (V4), the next version must be the digest
// of the bytes there now: a descriptor's write of as many bytes as it replaces, in the same
// millisecond, is the change a kept version could miss.
type Step =
  | { readonly kind: 'write'; readonly text: string }
  | { readonly kind: 'edit'; readonly text: string }
  | { readonly kind: 'volume-write'; readonly text: string }
  | { readonly kind: 'volume-append'; readonly text: string }
  | { readonly kind: 'fd-write'; readonly at: number; readonly text: string }
  | { readonly kind: 'truncate'; readonly size: number }
  | { readonly kind: 'utimes' }
  | { readonly kind: 'swap-names' };

const text = fc.string({ unit: fc.constantFrom('a', 'b', 'M', '\n'), minLength: 1, maxLength: 12 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), text }),
  fc.record({ kind: fc.constant('edit' as const), text }),
  fc.record({ kind: fc.constant('volume-write' as const), text }),
  fc.record({ kind: fc.constant('volume-append' as const), text }),
  fc.record({ kind: fc.constant('fd-write' as const), at: fc.nat({ max: 20 }), text }),
  fc.record({ kind: fc.constant('truncate' as const), size: fc.nat({ max: 24 }) }),
  fc.constant({ kind: 'utimes' as const }),
  fc.constant({ kind: 'swap-names' as const }),
);

describe('memory: kept versions', () => {
  it('every version read is the digest of the bytes there, whatever changed them (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        const fs = createMemoryFs({ files: { '/a.txt': 'MARK one\n', '/b.txt': 'MARK two\n' } });
        const vol = fs.provider.volume;
        const a = await fs.resolve('/a.txt');
        const check = async () => {
          const bytes = vol.readFileSync('/a.txt') as Buffer;
          const want = contentVersion(bytes);
          expect((await fs.stat(a))?.version).toBe(want);
          expect((await fs.readBytes(a, { maxBytes: 1 << 20 })).version).toBe(want);
          expect((await fs.provider.read(a, { maxBytes: 1 << 20, shared: true })).version).toBe(want);
        };
        await check();
        for (const s of steps) {
          if (s.kind === 'write') await fs.writeText(a, s.text);
          else if (s.kind === 'edit') {
            // Bytes zero-filled by a truncation or a write past the end are no text: no edit then.
            const now = Buffer.from((await fs.readBytes(a, { maxBytes: 1 << 20 })).bytes).toString('latin1');
            if (s.text !== 'M' && !now.includes('\0') && now.includes('M') && now.indexOf('M') === now.lastIndexOf('M')) await fs.editText(a, { oldString: 'M', newString: s.text });
          } else if (s.kind === 'volume-write') vol.writeFileSync('/a.txt', s.text);
          else if (s.kind === 'volume-append') vol.appendFileSync('/a.txt', s.text);
          else if (s.kind === 'fd-write') {
            const fd = vol.openSync('/a.txt', 'r+');
            vol.writeSync(fd, Buffer.from(s.text), 0, s.text.length, s.at);
            vol.closeSync(fd);
          } else if (s.kind === 'truncate') vol.truncateSync('/a.txt', s.size);
          else if (s.kind === 'utimes') vol.utimesSync('/a.txt', 1, 1);
          else {
            vol.renameSync('/a.txt', '/c.txt');
            vol.renameSync('/b.txt', '/a.txt');
            vol.renameSync('/c.txt', '/b.txt');
          }
          await check();
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a write through a descriptor of as many bytes as it replaces, at once after a read, changes the version', async () => {
    const fs = createMemoryFs({ files: { '/f.txt': 'abcdef' } });
    const vol = fs.provider.volume;
    const t = await fs.resolve('/f.txt');
    const before = (await fs.stat(t))!.version;
    const fd = vol.openSync('/f.txt', 'r+');
    vol.writeSync(fd, Buffer.from('XY'), 0, 2, 1);
    vol.closeSync(fd);
    const after = (await fs.readText(t)).version;
    expect(after).not.toBe(before);
    expect(after).toBe(contentVersion(Buffer.from('aXYdef')));
  });
});
