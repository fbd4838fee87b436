import { createMemoryProvider, type MemoryProvider } from '../../src/backends/memory/index.js';
import type { ConformanceSubject } from '../../src/conformance/index.js';
import {
  FsError,
  FsVersion,
  applyEdit,
  checkWriteIntent,
  createFs,
  crlfToLf,
  decodeText,
  encodeText,
  lineNumberAt,
  type FsCurrent,
  type FsEditOutcome,
  type FsEditRequest,
  type FsProvider,
  type FsTarget,
} from '../../src/seam/index.js';
import { volumeHooks } from './memory-subject.js';

/**
 * Deliberately broken providers, one bug each, built with the seam's createFs over a wrapper of
 * the memory provider. Each names the rule that must catch it.
 */
export interface Mutant {
  readonly name: string;
  /** The rule that names the bug. */
  readonly rule: string;
  readonly subject: () => ConformanceSubject;
}

const BASE = '/work';

function subjectOver(wrap: (base: MemoryProvider) => FsProvider): ConformanceSubject {
  const base = createMemoryProvider({ files: { [BASE]: null } });
  return { fs: createFs(wrap(base)), base: BASE, ...volumeHooks(base.volume) };
}

type EditFn = (
  decoded: { text: string; bom: boolean },
  edit: Required<FsEditRequest>,
  what: string,
) => { bytes: Uint8Array; replacements: number; lines: FsEditOutcome['lines'] };

/** A native editText that runs `fn` inside the provider's own locked write, as a remote backend would. */
function withNativeEdit(base: MemoryProvider, fn: EditFn): FsProvider {
  return {
    ...base,
    async editText(target, edit, guard, options) {
      const what = `cannot edit "${target.displayPath}"`;
      let outcome: Omit<FsEditOutcome, 'version'> | undefined;
      const done = await base.write(target, {
        ...options,
        ...(guard ? { intent: { kind: 'replaceIfVersion', version: guard.version } } : {}),
        produce: (current) => {
          if (current === undefined) throw new FsError('FS_NOT_FOUND', `${what}: not found`);
          const result = fn(decodeText(current.bytes, what), edit, what);
          outcome = { replacements: result.replacements, lines: result.lines };
          return result.bytes;
        },
      });
      return { version: done.version, ...outcome! };
    },
  };
}

function withBom(body: Uint8Array, bom: boolean): Uint8Array {
  if (!bom) return body;
  const out = new Uint8Array(body.byteLength + 3);
  out.set([0xef, 0xbb, 0xbf]);
  out.set(body, 3);
  return out;
}

/** The correct native edit: what every mutant below gets wrong in exactly one way. */
const correctEdit: EditFn = ({ text, bom }, { oldString, newString, replaceAll }, what) => {
  const result = applyEdit(text, oldString, newString, replaceAll);
  if (!result.ok) throw new FsError(result.error.code, `${what}: ${result.error.message}`);
  return { bytes: withBom(encodeText(result.text, false), bom), replacements: result.replacements, lines: result.lines };
};

export const control: Mutant = {
  name: 'control: a correct native edit over the memory provider',
  rule: '',
  subject: () => subjectOver((base) => withNativeEdit(base, correctEdit)),
};

export const mutants: readonly Mutant[] = [
  {
    name: 'versions from mtime and size, with a frozen clock',
    rule: 'V1',
    subject: () =>
      subjectOver((base) => {
        const vol = base.volume;
        const FROZEN = new Date('2020-01-01T00:00:00Z');
        const version = (key: string) => {
          const st = vol.statSync(key);
          return FsVersion(`mtime:${Number(st.mtimeMs)}:${Number(st.size)}`);
        };
        return {
          ...base,
          async stat(target, options) {
            const info = await base.stat(target, options);
            return info?.type === 'file' ? { ...info, version: version(target.targetKey) } : info;
          },
          async read(target, options) {
            const current = await base.read(target, options);
            return { ...current, version: version(target.targetKey) };
          },
          async write(target, { intent, produce, signal }) {
            const what = `cannot write "${target.displayPath}"`;
            const done = await base.write(target, {
              ...(signal ? { signal } : {}),
              produce: (current) => {
                const mine: FsCurrent | undefined = current && { bytes: current.bytes, version: version(target.targetKey) };
                checkWriteIntent(intent, mine, what);
                return produce(mine);
              },
            });
            vol.utimesSync(target.targetKey, FROZEN, FROZEN);
            return { ...done, version: version(target.targetKey) };
          },
          async remove(target, { intent, signal }) {
            const what = `cannot remove "${target.displayPath}"`;
            const exists = (await base.stat(target, { ...(signal ? { signal } : {}) })) !== undefined;
            if (intent) checkWriteIntent(intent, exists ? { bytes: new Uint8Array(), version: version(target.targetKey) } : undefined, what);
            await base.remove(target, { ...(signal ? { signal } : {}) });
          },
        };
      }),
  },
  {
    name: 'native edit replaces the first match without the ambiguity check',
    rule: 'E3',
    subject: () =>
      subjectOver((base) =>
        withNativeEdit(base, (decoded, edit, what) => {
          const result = applyEdit(decoded.text, edit.oldString, edit.newString, edit.replaceAll);
          const at = decoded.text.indexOf(edit.oldString);
          if (!result.ok && result.error.code === 'FS_AMBIGUOUS_EDIT' && at !== -1) {
            const text = decoded.text.slice(0, at) + edit.newString + decoded.text.slice(at + edit.oldString.length);
            const line = lineNumberAt(decoded.text, at);
            return { bytes: withBom(encodeText(text, false), decoded.bom), replacements: 1, lines: [{ start: line, end: line }] };
          }
          return correctEdit(decoded, edit, what);
        }),
      ),
  },
  {
    name: 'native edit rewrites the whole file with LF line endings',
    rule: 'L2',
    subject: () => subjectOver((base) => withNativeEdit(base, (decoded, edit, what) => correctEdit({ ...decoded, text: crlfToLf(decoded.text) }, edit, what))),
  },
  {
    name: 'native edit expands $ patterns through String.replace',
    rule: 'E4',
    subject: () =>
      subjectOver((base) =>
        withNativeEdit(base, (decoded, edit, what) =>
          // String.replace expands $&, $$, $` and $' in its replacement; here against old_string itself.
          correctEdit(decoded, { ...edit, newString: edit.oldString.replace(edit.oldString, edit.newString) }, what),
        ),
      ),
  },
  {
    name: 'no per-target lock: write awaits between the intent check and the publish',
    rule: 'G3',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async write(target: FsTarget, { intent, produce, signal }) {
          const what = `cannot write "${target.displayPath}"`;
          const opts = signal ? { signal } : {};
          let current: FsCurrent | undefined;
          try {
            current = await base.read(target, { ...opts, maxBytes: Infinity });
          } catch (err) {
            if (!(err instanceof FsError && err.code === 'FS_NOT_FOUND')) throw err;
          }
          checkWriteIntent(intent, current, what);
          const bytes = produce(current);
          await Promise.resolve(); // the window another writer slips through
          return base.write(target, { ...opts, produce: () => bytes });
        },
      })),
  },
  {
    name: 'non-atomic write: publishes the first half, then the rest',
    rule: 'G5',
    subject: () =>
      subjectOver((base) => ({
        ...base,
        async write(target: FsTarget, { intent, produce, signal }) {
          const opts = signal ? { signal } : {};
          let bytes: Uint8Array = new Uint8Array();
          await base.write(target, {
            ...opts,
            ...(intent ? { intent } : {}),
            produce: (current) => {
              bytes = produce(current);
              return bytes.subarray(0, bytes.byteLength >> 1);
            },
          });
          await new Promise((resolve) => setImmediate(resolve)); // a reader can land here
          return base.write(target, { ...opts, produce: () => bytes });
        },
      })),
  },
  {
    name: 'native edit drops the BOM',
    rule: 'L4',
    subject: () =>
      subjectOver((base) =>
        withNativeEdit(base, (decoded, edit, what) => correctEdit({ ...decoded, bom: false }, edit, what)),
      ),
  },
];
