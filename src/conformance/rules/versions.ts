import fc from 'fast-check';
import { fileTextArb, textArb } from '../arbitraries.js';
import {
  bytesEqual,
  concatBytes,
  equal,
  notEqual,
  ok,
  rejects,
  seedFile,
  utf8,
  BOM,
  type Rule,
} from '../harness.js';

const sameSizeContentsArb = fc
  .integer({ min: 1, max: 6 })
  .chain((size) => fc.array(fc.string({ unit: fc.constantFrom('a', 'b', '\n'), minLength: size, maxLength: size }), { minLength: 2, maxLength: 8 }));

export const versionRules: Rule[] = [
  {
    id: 'V1',
    title: 'different bytes give different versions',
    async run(ctx) {
      const { fs } = ctx;
      await ctx.example('same-size rewrite in the same tick', async () => {
        const { target, version: v1 } = await seedFile(fs, `${ctx.dir()}/f.txt`, 'aaaa');
        const w2 = await fs.writeText(target, 'bbbb');
        notEqual(w2.version as string, v1, 'rewriting "aaaa" as "bbbb" must change the version');
        const w3 = await fs.writeBytes(target, utf8('abab'));
        notEqual(w3.version as string, w2.version, 'rewriting "bbbb" as "abab" must change the version');
        notEqual(w3.version as string, v1, '"abab" must not reuse the version of "aaaa"');
        equal((await fs.stat(target))?.version as string | undefined, w3.version, 'stat after the rewrites');
      });
      // Fixed positions past the first KiB: a biased draw may stay near the start on a short run.
      await ctx.example('a change after the first KiB, and in the last byte', async () => {
        const base = 'a'.repeat(96 * 1024);
        const { target, version: v1 } = await seedFile(fs, `${ctx.dir()}/f.txt`, base);
        let previous = v1;
        for (const at of [50_000, base.length - 1]) {
          const changed = utf8(base);
          changed[at] = 'x'.charCodeAt(0);
          const written = await fs.writeBytes(target, changed);
          notEqual(written.version as string, previous, `changing byte ${at} of ${base.length} must change the version`);
          notEqual(written.version as string, v1, `changing byte ${at} of ${base.length} must not give back the first version`);
          previous = written.version;
        }
      });
      await ctx.check(
        'a change anywhere in a large file, even after its first KiB',
        fc.asyncProperty(fc.integer({ min: 1, max: 96 * 1024 - 1 }), fc.constantFrom('x', '\n', 'é'), async (at, ch) => {
          const base = 'a'.repeat(96 * 1024);
          const { target, version: v1 } = await seedFile(fs, `${ctx.dir()}/f.txt`, base);
          const changed = utf8(base);
          changed.set(utf8(ch).subarray(0, 1), at);
          const w2 = await fs.writeBytes(target, changed);
          notEqual(w2.version as string, v1, `changing byte ${at} of ${base.length} must change the version`);
          equal((await fs.stat(target))?.version as string | undefined, w2.version, 'stat after the change');
        }),
        0.25,
      );
      await ctx.check(
        'rapid same-size rewrites',
        fc.asyncProperty(sameSizeContentsArb, async (contents) => {
          const target = await fs.resolve(`${ctx.dir()}/f.txt`);
          const seen = new Map<string, string>(); // version -> content
          for (const content of contents) {
            const out = await fs.writeBytes(target, utf8(content));
            const statted = (await fs.stat(target))?.version;
            for (const v of [out.version, statted]) {
              ok(v !== undefined, 'stat after a write found nothing');
              const before = seen.get(v);
              ok(before === undefined || before === content, `version ${v} was given to both ${JSON.stringify(before)} and ${JSON.stringify(content)}`);
              seen.set(v, content);
            }
          }
        }),
      );
      if (ctx.subject.outOfBand) {
        const oob = ctx.subject.outOfBand;
        await ctx.check(
          'out-of-band same-size rewrite that restores the mtime',
          fc.asyncProperty(sameSizeContentsArb, async (contents) => {
            const [first, second] = [contents[0]!, contents[1]!];
            fc.pre(first !== second);
            const path = `${ctx.dir()}/f.txt`;
            const { target, version: v1 } = await seedFile(fs, path, first);
            await oob.writeBytes(path, utf8(second), { keepMtime: true });
            const info = await fs.stat(target);
            ok(info !== undefined, 'the file vanished after an out-of-band rewrite');
            notEqual(info.version as string, v1, `rewriting ${JSON.stringify(first)} as ${JSON.stringify(second)} behind the seam with the old mtime must change the version`);
            const read = await fs.readText(target);
            equal(read.text, second, 'readText after the out-of-band rewrite');
            equal(read.version as string, info.version, 'readText and stat versions after the out-of-band rewrite');
            await rejects(
              fs.writeText(target, 'lost update', { kind: 'replaceIfVersion', version: v1 }),
              'FS_STALE_VERSION',
              'a write guarded by the version from before the out-of-band rewrite',
            );
          }),
          0.5,
        );
      }
    },
  },
  {
    id: 'V2',
    title: 'identical bytes keep the version',
    skipIf: (s) => (s.capabilities?.stableVersions === false ? 'capabilities.stableVersions is false' : undefined),
    async run(ctx) {
      const { fs } = ctx;
      const oob = ctx.subject.outOfBand;
      await ctx.check(
        'rewrite with the same bytes',
        fc.asyncProperty(fileTextArb, textArb, async ({ text, bom }, other) => {
          const path = `${ctx.dir()}/f.txt`;
          const bytes = concatBytes(bom ? BOM : new Uint8Array(), utf8(text));
          const { target, version } = await seedFile(fs, path, bytes);
          const again = await fs.writeBytes(target, bytes);
          equal(again.version as string, version, 'writeBytes with identical bytes');
          const read = await fs.readText(target);
          // A text that itself starts with U+FEFF after the BOM is written as carrying its own BOM.
          if (!read.text.startsWith('\uFEFF')) {
            const viaText = await fs.writeText(target, read.text);
            const { bytes: afterText } = await fs.readBytes(target, { maxBytes: bytes.byteLength + 16 });
            bytesEqual(afterText, bytes, 'writeText of the text just read (the file keeps its BOM and line endings)');
            equal(viaText.version as string, version, 'writeText of the text just read');
          }
          if (oob) {
            await oob.writeBytes(path, bytes);
            equal((await fs.stat(target))?.version as string | undefined, version, 'stat after an out-of-band rewrite of the same bytes (a touch)');
          }
          if (other !== text) {
            await fs.writeText(target, other);
            await fs.writeBytes(target, bytes);
            equal((await fs.stat(target))?.version as string | undefined, version, 'stat after changing the file and restoring its bytes');
          }
        }),
        0.5,
      );
    },
  },
  {
    id: 'V3',
    title: 'the version a mutation returns is the one stat reports',
    async run(ctx) {
      const { fs } = ctx;
      const stepArb = fc.oneof(
        fc.record({ op: fc.constant('text' as const), content: textArb }),
        fc.record({ op: fc.constant('bytes' as const), content: textArb }),
        fc.record({ op: fc.constant('edit' as const), content: textArb }),
      );
      await ctx.check(
        'write, writeBytes and edit',
        fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 6 }), async (steps) => {
          const target = await fs.resolve(`${ctx.dir()}/f.txt`);
          for (const step of steps) {
            let version: string;
            if (step.op === 'text') version = (await fs.writeText(target, step.content)).version;
            else if (step.op === 'bytes') version = (await fs.writeBytes(target, utf8(step.content))).version;
            else {
              // An edit that always applies: replace the whole, unique marker line.
              await fs.writeText(target, `${step.content}\n@@marker@@\n`);
              version = (await fs.editText(target, { oldString: '@@marker@@', newString: '@@edited@@' })).version;
            }
            const info = await fs.stat(target);
            equal(info?.version as string | undefined, version, `stat after ${step.op}`);
            equal((await fs.readText(target)).version as string, version, `readText after ${step.op}`);
            equal((await fs.readBytes(target, { maxBytes: 1 << 20 })).version as string, version, `readBytes after ${step.op}`);
          }
        }),
        0.5,
      );
    },
  },
  {
    id: 'V4',
    title: 'changes made outside the seam are seen by the next stat',
    skipIf: (s) => (s.outOfBand ? undefined : 'no outOfBand hooks'),
    async run(ctx) {
      const { fs } = ctx;
      const oob = ctx.subject.outOfBand!;
      await ctx.check(
        'out-of-band create, rewrite and remove',
        fc.asyncProperty(textArb, textArb, async (first, second) => {
          const path = `${ctx.dir()}/f.txt`;
          const target = await fs.resolve(path);
          equal(await fs.stat(target), undefined, 'stat of a fresh path');
          await oob.writeBytes(path, utf8(first));
          const created = await fs.stat(target);
          ok(created?.type === 'file', `stat after an out-of-band create: expected a file, got ${JSON.stringify(created)}`);
          equal(created.size, Buffer.byteLength(first), 'size after an out-of-band create');
          bytesEqual((await fs.readBytes(target, { maxBytes: 1 << 20 })).bytes, utf8(first), 'readBytes after an out-of-band create');
          await oob.writeBytes(path, utf8(second));
          const changed = await fs.stat(target);
          equal(changed?.size, Buffer.byteLength(second), 'size after an out-of-band rewrite');
          if (first !== second) notEqual(changed?.version as string | undefined, created.version, 'version after an out-of-band rewrite');
          const read = await fs.readBytes(target, { maxBytes: 1 << 20 });
          bytesEqual(read.bytes, utf8(second), 'readBytes after an out-of-band rewrite');
          equal(read.version as string, changed?.version, 'readBytes and stat versions after an out-of-band rewrite');
          await oob.remove(path);
          equal(await fs.stat(target), undefined, 'stat after an out-of-band remove');
          await rejects(fs.readText(target), 'FS_NOT_FOUND', 'readText after an out-of-band remove');
        }),
        0.5,
      );
    },
  },
];
