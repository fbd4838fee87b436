import { expect, test } from 'vitest';
import { createMemoryProvider } from '../../src/backends/memory/provider.js';
import { createFs, withExecutable } from '../../src/seam/index.js';

test('a provider without setExecutable: the seam answers FS_UNSUPPORTED and changes nothing', async () => {
  const { setExecutable: _omitted, ...bare } = createMemoryProvider({ files: { '/a.sh': 'x\n' } });
  const fs = createFs(bare);
  const target = await fs.resolve('/a.sh');
  await expect(fs.setExecutable!(target, true)).rejects.toMatchObject({ name: 'FsError', code: 'FS_UNSUPPORTED' });
  expect((await fs.stat(target))?.executable).toBe(false);
});

test('withExecutable copies read bits to execute bits, and clears all of them', () => {
  expect(withExecutable(0o644, true)).toBe(0o755);
  expect(withExecutable(0o640, true)).toBe(0o750);
  expect(withExecutable(0o600, true)).toBe(0o700);
  expect(withExecutable(0o200, true)).toBe(0o300);
  expect(withExecutable(0o755, false)).toBe(0o644);
  expect(withExecutable(0o4755, false)).toBe(0o4644);
});
