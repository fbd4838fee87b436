import { describe, expect, it } from 'vitest';
import { createMemoryFs } from '../../src/backends/memory/index.js';

describe('rename onto itself', () => {
  it('settles (the per-name lock is taken once) and leaves the name usable', async () => {
    const fs = createMemoryFs({ files: { '/p/a': 'x' }, cwd: '/p' });
    const t = await fs.resolve('/p/a');
    const { version } = await fs.readText(t);
    // Before the fix this never settled, and every later call on the name waited behind it.
    await expect(fs.rename(t, t, { expect: version, replace: version })).resolves.toBeUndefined();
    await expect(fs.rename(t, t, { expect: 'sha256:other' as never })).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    await fs.writeText(t, 'y');
    expect((await fs.readText(t)).text).toBe('y');
  });
});
