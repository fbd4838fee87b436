import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type FileSystem, type ToolResult } from '../../src/index.js';
import { createObservationPolicy } from '../../src/policy/index.js';
import { createMemoryFs } from '../../src/backends/memory/index.js';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { fsTools, type EditValue, type ReadValue, type WriteValue } from '../../src/tools/index.js';
import { makeArea, type Area } from '../local/helpers.js';

// Files over a small text limit take the streaming paths (V7) that files of gigabytes take.
const LIMIT = 1000;
const lines = (n: number, eol = '\n') => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join(eol) + eol;

let area: Area | undefined;
afterEach(async () => {
  await area?.cleanup();
  area = undefined;
});

interface Subject {
  readonly name: string;
  make(files: Record<string, string>): Promise<{ fs: FileSystem; base: string; bytes(name: string): Promise<string> }>;
}

const SUBJECTS: Subject[] = [
  {
    name: 'memory',
    async make(files) {
      const fs = createMemoryFs({ files, cwd: '/', maxTextBytes: LIMIT });
      return { fs, base: '', bytes: async (n) => Buffer.from((await createReader(fs, n)).bytes).toString('utf8') };
    },
  },
  {
    name: 'local',
    async make(files) {
      area = await makeArea('large');
      for (const [n, t] of Object.entries(files)) await fsp.writeFile(join(area.root, n), t);
      const root = area.root;
      return { fs: createLocalFs({ root, maxTextBytes: LIMIT }), base: `${root}/`, bytes: (n) => fsp.readFile(join(root, n), 'utf8') };
    },
  },
  {
    name: 'overlay over local',
    async make(files) {
      area = await makeArea('large');
      for (const [n, t] of Object.entries(files)) await fsp.writeFile(join(area.root, n), t);
      const root = area.root;
      const fs = await createOverlayFs({ lower: createLocalFs({ root }), maxTextBytes: LIMIT });
      return { fs, base: `${root}/`, bytes: async (n) => Buffer.from((await createReader(fs, `${root}/${n}`)).bytes).toString('utf8') };
    },
  },
];

async function createReader(fs: FileSystem, path: string) {
  const t = await fs.resolve(path);
  const s = await fs.streamBytes(t);
  const parts: Uint8Array[] = [];
  for await (const c of s.chunks) parts.push(c);
  return { bytes: Buffer.concat(parts), version: s.version };
}

describe.each(SUBJECTS)('files over the text limit over $name (V7)', (subject) => {
  async function setup(files: Record<string, string>) {
    const s = await subject.make(files);
    const ctx = createHarness({ fs: s.fs, cwd: s.base === '' ? '/' : s.base, plugins: [createObservationPolicy(), fsTools()] });
    const tools = {
      read: (file_path: string, extra: object = {}) => ctx.tools.execute('read', { file_path, ...extra }, { owner: 'a' }) as Promise<ToolResult<ReadValue>>,
      edit: (file_path: string, old_string: string, new_string: string) =>
        ctx.tools.execute('edit', { file_path, old_string, new_string }, { owner: 'a' }) as Promise<ToolResult<EditValue>>,
      write: (file_path: string, content: string) => ctx.tools.execute('write', { file_path, content }, { owner: 'a' }) as Promise<ToolResult<WriteValue>>,
    };
    return { ...s, tools, path: (n: string) => `${s.base === '' ? '/' : s.base}${n}` };
  }

  it('reads a window anywhere, saying "at least" when it stopped counting', async () => {
    const s = await setup({ 'big.txt': lines(500) });
    const start = await s.tools.read(s.path('big.txt'), { limit: 2 });
    expect(!start.isError && start.value.lines).toEqual([
      { number: 1, text: 'line 1' },
      { number: 2, text: 'line 2' },
    ]);
    expect(!start.isError && start.value.totalLinesAtLeast).toBe(true);
    expect(!start.isError && start.text).toContain('Showing lines 1-2 of at least');
    const end = await s.tools.read(s.path('big.txt'), { offset: 499 });
    expect(!end.isError && end.value.lines.map((l) => l.text)).toEqual(['line 499', 'line 500']);
    expect(!end.isError && end.text).toContain('End of file - total 500 lines');
    const past = await s.tools.read(s.path('big.txt'), { offset: 501 });
    expect(past.isError && past.error.code).toBe('FS_INVALID_ARGUMENT');
  });

  it('edits uniquely in one pass, keeping CRLF; a second match is FS_AMBIGUOUS_EDIT and changes nothing', async () => {
    const s = await setup({ 'big.txt': lines(300, '\r\n') });
    await s.tools.read(s.path('big.txt'), { limit: 1 });
    const done = await s.tools.edit(s.path('big.txt'), 'line 150\nline 151', 'changed\nhere');
    expect(!done.isError && done.value.lines).toEqual([{ start: 150, end: 151 }]);
    expect(await s.bytes('big.txt')).toBe(lines(300, '\r\n').replace('line 150\r\nline 151', 'changed\r\nhere'));
    const before = await s.bytes('big.txt');
    const twice = await s.tools.edit(s.path('big.txt'), 'line 2', 'x');
    expect(twice.isError && twice.error.code).toBe('FS_AMBIGUOUS_EDIT');
    expect(await s.bytes('big.txt')).toBe(before);
  });

  it('writes over an observed large file with its line endings; answers the policy first when not observed', async () => {
    const s = await setup({ 'big.txt': lines(300, '\r\n'), 'other.txt': lines(300) });
    const blind = await s.tools.write(s.path('other.txt'), 'new\n');
    expect(blind.isError && blind.error.code).toBe('FS_NOT_OBSERVED');
    const edit = await s.tools.edit(s.path('other.txt'), 'line 1\n', 'x\n');
    expect(edit.isError && edit.error.code).toBe('FS_NOT_OBSERVED');
    await s.tools.read(s.path('big.txt'), { limit: 1 });
    const done = await s.tools.write(s.path('big.txt'), 'a\nb\n');
    expect(!done.isError && done.value.operation).toBe('update');
    expect(await s.bytes('big.txt')).toBe('a\r\nb\r\n');
  });

  it('the seam answers a guarded write over a large file with the intent first', async () => {
    const s = await setup({ 'big.txt': lines(300) });
    const t = await s.fs.resolve(s.path('big.txt'));
    await expect(s.fs.writeText(t, 'x', { kind: 'createIfAbsent' })).rejects.toMatchObject({ code: 'FS_NOT_OBSERVED' });
    await expect(s.fs.writeText(t, 'x', { kind: 'replaceIfVersion', version: 'sha256:nope' as never })).rejects.toMatchObject({ code: 'FS_STALE_VERSION' });
    await expect(s.fs.editText(t, { oldString: 'line 7\n', newString: 'x' }, { version: 'sha256:nope' as never })).rejects.toMatchObject({
      code: 'FS_STALE_VERSION',
    });
  });
});
