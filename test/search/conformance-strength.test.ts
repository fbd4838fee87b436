import { describe, expect, it } from 'vitest';
import { RULES, runConformance, type ConformanceSubject } from '../../src/conformance/index.js';
import { textProblem, type FileSystem, type FsTextStream } from '../../src/seam/index.js';
import { memorySubject } from '../conformance/memory-subject.js';

/** S1 and S2 fail for providers that list, stat or stream wrongly: each mutant is caught. */

const only = (ids: string[]) => ({ skip: RULES.map((r) => r.id).filter((id) => !ids.includes(id)), numRuns: 20 });

function mutant(mutate: (fs: FileSystem) => Partial<FileSystem>): () => ConformanceSubject {
  return () => {
    const subject = memorySubject();
    const fs = subject.fs;
    return { ...subject, fs: { ...fs, cwd: fs.cwd, ...mutate(fs) } };
  };
}

async function statuses(factory: () => ConformanceSubject, ids: string[]) {
  const results = await runConformance(factory, only(ids));
  return Object.fromEntries(results.filter((r) => ids.includes(r.id)).map((r) => [r.id, r.status]));
}

describe('S1 and S2 catch broken providers', () => {
  it('the memory provider passes both', async () => {
    expect(await statuses(mutant(() => ({})), ['S1', 'S2'])).toEqual({ S1: 'pass', S2: 'pass' });
  });

  it('a listing that hides its last entry', async () => {
    const hiding = mutant((fs) => ({ listDir: async (t, o) => (await fs.listDir(t, o)).slice(0, -1) }));
    expect(await statuses(hiding, ['S1', 'S2'])).toEqual({ S1: 'fail', S2: 'fail' });
  });

  it('a listing that reports files as "other"', async () => {
    const untyped = mutant((fs) => ({
      listDir: async (t, o) => (await fs.listDir(t, o)).map((e) => (e.type === 'file' ? { ...e, type: 'other' as const } : e)),
    }));
    expect(await statuses(untyped, ['S1', 'S2'])).toEqual({ S1: 'fail', S2: 'fail' });
  });

  it('a walk that hides an entry', async () => {
    // glob no longer stats static patterns (it walks their directory), so a blind `stat` is no
    // longer search's to catch (the P rules do); a walk that loses an entry is.
    const hiding = mutant((fs) => ({
      async *walk(t, o) {
        for await (const e of fs.walk(t, o)) if (!e.name.endsWith('.md')) yield e;
      },
    }));
    expect(await statuses(hiding, ['S1'])).toEqual({ S1: 'fail' });
  });

  it('a stream that loses a final line without a line break', async () => {
    const lossy = mutant((fs) => ({
      async streamText(t, o): Promise<FsTextStream> {
        const { text, ...rest } = await fs.readText(t, o);
        const cut = text.includes('\n') ? text.slice(0, text.lastIndexOf('\n') + 1) : text;
        return { ...rest, chunks: (async function* () { yield cut; })() };
      },
    }));
    expect(await statuses(lossy, ['S2'])).toEqual({ S2: 'fail' });
  });
});

describe('S3 catches a searchReads that answers other than reads', () => {
  /** searchReads by reading each file: right by construction, then broken one way at a time. */
  const reading = (
    fs: FileSystem,
    wrong?: (answer: Uint8Array | null | undefined, bytes: Uint8Array | undefined) => Uint8Array | null | undefined,
    total = true,
  ) =>
    ({
      searchReads: async (targets, query) => {
        let room = total ? query.maxTotalBytes : Infinity;
        const answers = [];
        for (const t of targets) {
          const bytes = await fs.readBytes(t, { maxBytes: 1 << 20, unversioned: true }).then((r) => r.bytes, () => undefined);
          const text = bytes !== undefined && textProblem(bytes) === undefined;
          const right =
            bytes === undefined || bytes.byteLength > query.maxBytes || bytes.byteLength > room
              ? undefined
              : query.contains !== undefined && text && !Buffer.from(bytes).includes(Buffer.from(query.contains))
                ? null
                : bytes;
          if (right instanceof Uint8Array) room -= right.byteLength;
          answers.push(wrong ? wrong(right, bytes) : right);
        }
        return answers;
      },
    }) satisfies Partial<FileSystem>;

  it('passes a searchReads that reads, and is skipped without one', async () => {
    expect(await statuses(mutant((fs) => reading(fs)), ['S3'])).toEqual({ S3: 'pass' });
    expect(await statuses(mutant(() => ({})), ['S3'])).toEqual({ S3: 'skip' });
  });

  it('fails one that passes over files holding the bytes asked for', async () => {
    expect(await statuses(mutant((fs) => reading(fs, (a) => (a === undefined ? a : null))), ['S3'])).toEqual({ S3: 'fail' });
  });

  it('fails one that answers a file over maxBytes with its first bytes', async () => {
    expect(await statuses(mutant((fs) => reading(fs, (a, bytes) => a ?? bytes?.subarray(0, 1))), ['S3'])).toEqual({ S3: 'fail' });
  });

  it('fails one that holds more than maxTotalBytes', async () => {
    expect(await statuses(mutant((fs) => reading(fs, undefined, false)), ['S3'])).toEqual({ S3: 'fail' });
  });
});
