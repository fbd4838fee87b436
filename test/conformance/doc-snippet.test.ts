import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test, vi } from 'vitest';
import type { ConformanceSubject } from '../../src/conformance/index.js';

// docs/conformance.md's example, extracted and run as written: it registers the whole suite over
// a stand-in backend (doc-backend.ts, imported as its './my-backend.js'), and the subject it
// builds is checked here too, so an example that drifts from the kit fails.

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const captured = vi.hoisted(() => ({ factories: [] as Array<() => ConformanceSubject | Promise<ConformanceSubject>> }));

vi.mock('dsh-fs/conformance', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/conformance/index.js')>();
  return {
    ...real,
    describeConformance: (...args: Parameters<typeof real.describeConformance>) => {
      captured.factories.push(args[1]);
      return real.describeConformance(...args);
    },
  };
});

/** The fenced example under "Running it for your backend", the one that names its test file. */
function snippet(): string {
  const doc = readFileSync(join(REPO, 'docs/conformance.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Running it for your backend'));
  const block = /```ts\n(\/\/ my-backend\.conformance\.test\.ts\n[\s\S]*?)```/.exec(section);
  if (block === null) throw new Error('docs/conformance.md: the example "// my-backend.conformance.test.ts" is missing');
  return block[1]!;
}

const dir = mkdtempSync(join(tmpdir(), 'dsh-fs-doc-snippet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'my-backend.conformance.ts'), snippet());
writeFileSync(join(dir, 'my-backend.ts'), `export * from ${JSON.stringify(join(REPO, 'test/conformance/doc-backend.ts'))};\n`);
// Registers the example's describe block, with one test per rule, as in a backend author's file.
await import(join(dir, 'my-backend.conformance.ts'));

test('the example registers one suite, whose subject has the provider behind its fs and working hooks', async () => {
  expect(captured.factories).toHaveLength(1);
  const subject = await captured.factories[0]!();
  try {
    expect(subject.provider).toBeDefined();
    const { fs, provider, base } = subject;
    const target = await fs.resolve(`${base}/a.txt`);
    await fs.writeText(target, 'through the seam\n');
    expect(new TextDecoder().decode((await provider!.read(target, { maxBytes: 100 })).bytes)).toBe('through the seam\n');
    expect(new TextDecoder().decode(await subject.outOfBand!.readBytes!(`${base}/a.txt`))).toBe('through the seam\n');
    await subject.outOfBand!.writeBytes(`${base}/b.txt`, new TextEncoder().encode('behind it\n'));
    expect((await fs.readText(await fs.resolve(`${base}/b.txt`))).text).toBe('behind it\n');
    await subject.setup!.symlink!(`${base}/b.txt`, `${base}/link`);
    expect((await fs.resolve(`${base}/link`)).targetKey).toBe((await fs.resolve(`${base}/b.txt`)).targetKey);
    await subject.outOfBand!.remove(`${base}/b.txt`);
    expect(await fs.stat(await fs.resolve(`${base}/b.txt`))).toBeUndefined();
  } finally {
    await subject.cleanup?.();
  }
});
