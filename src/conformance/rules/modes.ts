import fc from 'fast-check';
import type { FileSystem, FsTarget } from '../../seam/index.js';
import { equal, ok, rejects, seedFile, utf8, type Rule } from '../harness.js';
import { textArb } from '../arbitraries.js';

/** One step on a file whose executable bit the model tracks. */
type ModeOp =
  | { readonly kind: 'set'; readonly executable: boolean }
  | { readonly kind: 'writeText'; readonly text: string }
  | { readonly kind: 'writeBytes'; readonly text: string }
  | { readonly kind: 'rename' };

const modeOpArb: fc.Arbitrary<ModeOp> = fc.oneof(
  { weight: 3, arbitrary: fc.boolean().map((executable) => ({ kind: 'set' as const, executable })) },
  { weight: 1, arbitrary: textArb.map((text) => ({ kind: 'writeText' as const, text })) },
  { weight: 1, arbitrary: textArb.map((text) => ({ kind: 'writeBytes' as const, text })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rename' as const }) },
);

/** stat and the parent's listing both report `expected` (a listing may leave the field out only without stats). */
async function expectMode(fs: FileSystem, file: FsTarget, dir: FsTarget, expected: boolean, what: string): Promise<void> {
  const info = await fs.stat(file);
  equal(info?.executable, expected, `${what}: stat's executable`);
  const entry = (await fs.listDir(dir)).find((e) => e.target.targetKey === file.targetKey || e.target.displayPath === file.displayPath);
  ok(entry !== undefined, `${what}: the file is listed`);
  equal(entry.executable, expected, `${what}: listDir's executable`);
}

export const modeRules: Rule[] = [
  {
    id: 'X1',
    title: 'setExecutable sets and clears the executable bit of a file: stat and listings report it, its bytes and version stay, and writes and renames keep it',
    skipIf: (subject) => (subject.capabilities?.executable ? undefined : 'the subject keeps no executable bit (capability `executable`)'),
    async run(ctx) {
      const { fs } = ctx;
      await ctx.check(
        'a model of the bit over mode changes, writes and renames',
        fc.asyncProperty(fc.array(modeOpArb, { minLength: 1, maxLength: 8 }), async (ops) => {
          const dirPath = ctx.dir();
          const dir = await fs.resolve(dirPath);
          const homes = [await fs.resolve(`${dirPath}/run.sh`), await fs.resolve(`${dirPath}/moved.sh`)];
          let at = 0;
          const seeded = await seedFile(fs, homes[0]!.displayPath, '#!/bin/sh\n');
          let version = seeded.version as string;
          let executable = false;
          await expectMode(fs, homes[0]!, dir, false, 'a new file');
          for (const [i, op] of ops.entries()) {
            const here = homes[at]!;
            const what = `step ${i} (${op.kind}${op.kind === 'set' ? ` ${op.executable}` : ''})`;
            if (op.kind === 'set') {
              await fs.setExecutable!(here, op.executable);
              executable = op.executable;
              equal((await fs.stat(here))?.version as string | undefined, version, `${what}: the version is the bytes', so it stays`);
            } else if (op.kind === 'writeText') {
              version = (await fs.writeText(here, op.text)).version;
            } else if (op.kind === 'writeBytes') {
              version = (await fs.writeBytes(here, utf8(op.text))).version;
            } else {
              at = 1 - at;
              await fs.rename(here, homes[at]!);
            }
            await expectMode(fs, homes[at]!, dir, executable, what);
          }
        }),
        0.5,
      );
      await ctx.example('an executable file rewritten by writeText, writeBytes and editText', async () => {
        const dirPath = ctx.dir('kept');
        const dir = await fs.resolve(dirPath);
        const file = await seedFile(fs, `${dirPath}/tool.sh`, '#!/bin/sh\r\necho one\r\n');
        await fs.setExecutable!(file.target, true);
        await fs.writeText(file.target, '#!/bin/sh\necho two\n');
        await expectMode(fs, file.target, dir, true, 'after writeText');
        await fs.writeBytes(file.target, utf8('#!/bin/sh\necho three\n'));
        await expectMode(fs, file.target, dir, true, 'after writeBytes');
        await fs.editText(file.target, { oldString: 'three', newString: 'four' });
        await expectMode(fs, file.target, dir, true, 'after editText');
      });
      await ctx.example('what cannot have the bit', async () => {
        const dir = ctx.dir('refused');
        const absent = await fs.resolve(`${dir}/absent.sh`);
        await rejects(fs.setExecutable!(absent, true), 'FS_NOT_FOUND', 'setExecutable of an absent file');
        const sub = await fs.resolve(`${dir}/sub`);
        await fs.mkdir(sub);
        await rejects(fs.setExecutable!(sub, true), 'FS_NOT_REGULAR_FILE', 'setExecutable of a directory');
        const file = await seedFile(fs, `${dir}/a.sh`, 'x\n');
        await rejects(fs.setExecutable!(file.target, 'yes' as unknown as boolean), 'FS_INVALID_ARGUMENT', 'setExecutable with a non-boolean');
        equal((await fs.stat(file.target))?.executable, false, 'a file after a refused change');
      });
    },
  },
];
