import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/backends/local/provider.js';
import { createFs } from '../../src/seam/fs.js';
import { contentVersion } from '../../src/seam/version.js';
import { makeArea, type Area } from '../local/helpers.js';

// An edit or a write of a file over the text limit opens it as a stream first; when the guard
// refuses (the file is not the version the caller read), that stream is closed at once, not left
// for garbage collection to close.
let area: Area;
beforeAll(async () => {
  area = await makeArea('large-refused');
  writeFileSync(join(area.root, 'big.txt'), 'a line of a large file\n'.repeat(400));
});
afterAll(() => area.cleanup());

const openFds = () => readdirSync('/proc/self/fd').length;

it('a guarded edit and a guarded write of a large file, refused as stale, leave no descriptor open', async () => {
  const fs = createFs(createLocalProvider({ root: area.root }), { maxTextBytes: 1024 });
  const t = await fs.resolve(join(area.root, 'big.txt'));
  const stale = { kind: 'replaceIfVersion', version: contentVersion(Buffer.from('what the file held before')) } as const;
  const before = openFds();
  for (let i = 0; i < 5; i++) {
    await expect(fs.editText(t, { oldString: 'a line', newString: 'one line', replaceAll: true }, stale)).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    await expect(fs.writeText(t, 'new content\n', stale)).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
  }
  expect(openFds()).toBe(before);
});
