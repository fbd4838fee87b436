import fc from 'fast-check';
import type { FsTarget } from '../../seam/index.js';
import { equal, ok, utf8, type Rule } from '../harness.js';
import { plainDecode } from '../reference.js';

/**
 * S3: a provider that reads many files at once for searches (`searchReads`) answers each as a
 * read would: the file's bytes, null only for a text file without the bytes asked for, and
 * nothing for what is not a small file (a directory, a missing name, a file over the bound); the
 * bytes answered together stay within the total asked.
 */

const contentArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.string({ maxLength: 30 }).map(utf8),
  fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([a, b]) => utf8(`${a}foo${b}`)),
  fc.constant(new Uint8Array([0x66, 0x6f, 0x6f, 0x00])),
  fc.constant(new Uint8Array([0x61, 0xff, 0x0a])),
  fc.constant(new Uint8Array([0xff, 0xfe, 0x61, 0x00])),
);

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);
const holds = (bytes: Uint8Array, part: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(Buffer.from(part));

export const searchReadRules: readonly Rule[] = [
  {
    id: 'S3',
    title: 'searchReads answers as reads do',
    skipIf: (subject) => (typeof subject.fs.searchReads === 'function' ? undefined : 'the filesystem has no searchReads'),
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'random files (text with and without the bytes asked for, binary), a directory and missing names, in random order',
        fc.asyncProperty(
          fc.array(fc.tuple(contentArb, fc.boolean()), { minLength: 1, maxLength: 12 }),
          fc.integer({ min: 0, max: 40 }),
          fc.oneof(fc.integer({ min: 0, max: 120 }), fc.constant(1024)),
          fc.boolean(),
          fc.array(fc.integer(), { minLength: 14, maxLength: 14 }),
          async (files, maxBytes, maxTotalBytes, withContains, order) => {
            const dir = ctx.dir();
            const oob = ctx.subject.outOfBand;
            const written: { target: FsTarget; bytes: Uint8Array | undefined }[] = [];
            for (const [i, [bytes, behind]] of files.entries()) {
              const path = `${dir}/f${i}.txt`;
              if (oob && behind) await oob.writeBytes(path, bytes);
              else await fs.writeBytes(await fs.resolve(path), bytes);
              written.push({ target: await fs.resolve(path), bytes });
            }
            await fs.mkdir(await fs.resolve(`${dir}/sub`));
            written.push({ target: await fs.resolve(`${dir}/sub`), bytes: undefined });
            written.push({ target: await fs.resolve(`${dir}/missing.txt`), bytes: undefined });
            const shuffled = written.map((w, i) => [order[i]!, w] as const).sort((a, b) => a[0] - b[0]).map(([, w]) => w);
            const contains = utf8('foo');
            const answers = await fs.searchReads!(
              shuffled.map((w) => w.target),
              withContains ? { maxBytes, maxTotalBytes, contains } : { maxBytes, maxTotalBytes },
            );
            equal(answers.length, shuffled.length, 'one answer per target');
            const total = answers.reduce((n, a) => n + (a instanceof Uint8Array ? a.byteLength : 0), 0);
            ok(total <= maxTotalBytes, `the answers hold ${total} bytes together, over maxTotalBytes ${maxTotalBytes}`);
            for (const [i, { target, bytes }] of shuffled.entries()) {
              const answer = answers[i];
              if (answer === undefined) continue;
              const name = target.displayPath;
              ok(bytes !== undefined, `${name} is no file, yet it was answered`);
              if (answer === null) {
                ok(withContains, `${name} answered null without bytes to look for`);
                ok(plainDecode(bytes) !== undefined && !holds(bytes, contains), `${name} answered null, but it is not text without "foo"`);
                continue;
              }
              ok(answer.byteLength <= maxBytes, `${name} answered with ${answer.byteLength} bytes, over maxBytes ${maxBytes}`);
              ok(sameBytes(answer, bytes), `${name} answered with bytes other than it holds`);
              const read = await fs.readBytes(target, { maxBytes: 1024, unversioned: true });
              ok(sameBytes(answer, read.bytes), `${name}: the answer is not what a read gives`);
            }
          },
        ),
        0.5,
      );
      // And every time, a total smaller than the files asked for together.
      const dir = ctx.dir('total');
      const targets: FsTarget[] = [];
      for (const name of ['a', 'b', 'c']) {
        const target = await fs.resolve(`${dir}/${name}.txt`);
        await fs.writeBytes(target, utf8('0123456789\n'));
        targets.push(target);
      }
      const answers = await fs.searchReads!(targets, { maxBytes: 1024, maxTotalBytes: 15 });
      const total = answers.reduce((n, a) => n + (a instanceof Uint8Array ? a.byteLength : 0), 0);
      ok(total <= 15, `three files of 11 bytes, maxTotalBytes 15: the answers hold ${total} bytes together`);
    },
  },
];
