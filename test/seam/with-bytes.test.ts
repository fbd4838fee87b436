import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';

const text = (bytes: Uint8Array | null | undefined) => (bytes == null ? bytes : Buffer.from(bytes).toString('utf8'));

describe('writeText and editText with withBytes', () => {
  it('return the bytes they replaced and published; without it, neither', async () => {
    const fs = createMemoryFs({ files: { '/w/a.txt': 'one\r\ntwo\r\n' }, cwd: '/w' });
    const a = await fs.resolve('a.txt');
    const edit = await fs.editText(a, { oldString: 'two', newString: 'TWO' }, undefined, { withBytes: true });
    expect([text(edit.replaced), text(edit.published)]).toEqual(['one\r\ntwo\r\n', 'one\r\nTWO\r\n']);
    const write = await fs.writeText(a, 'x\n', undefined, { withBytes: true });
    // The file's CRLF style is kept: published is what was stored.
    expect([text(write.replaced), text(write.published), write.size]).toEqual(['one\r\nTWO\r\n', 'x\r\n', 3]);
    const created = await fs.writeText(await fs.resolve('new.txt'), 'n', undefined, { withBytes: true });
    expect([created.operation, created.replaced, text(created.published)]).toEqual(['create', null, 'n']);
    const plain = await fs.editText(a, { oldString: 'x', newString: 'y' });
    expect(plain).not.toHaveProperty('replaced');
    expect(plain).not.toHaveProperty('published');
    await expect(fs.writeText(a, 'z', undefined, { withBytes: 'yes' as never })).rejects.toMatchObject({ code: 'FS_INVALID_ARGUMENT' });
  });
});
