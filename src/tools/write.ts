import { FsError, isFsError, textForWrite, type FsVersion, type FsWriteIntent } from '../seam/index.js';
import { diffFields, readBefore, type Before, type DiffFields } from './diff.js';
import type { Tool } from '../harness/index.js';
import { shownPath } from '../harness/tools.js';
import { WRITE_DESCRIPTION, createWriteSchema, type WriteArgs } from './schemas.js';
import { withRemedy } from './errors.js';
import { writeOutputSchema } from './outputs.js';

export interface WriteValue extends DiffFields {
  readonly path: string;
  readonly operation: 'create' | 'update';
  /** The version the file has now. */
  readonly version: FsVersion;
  /** Bytes stored (after keeping the file's BOM and CRLF style). */
  readonly bytes: number;
}

export function renderWrite(value: WriteValue): string {
  const verb = value.operation === 'create' ? 'Created' : 'Updated';
  return `${verb} "${shownPath(value.path)}" (${value.bytes} byte${value.bytes === 1 ? '' : 's'}).`;
}

export function createWriteTool(): Tool<WriteArgs, WriteValue> {
  return {
    name: 'write',
    title: 'Write file',
    // Writing the same content again changes nothing more.
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    outputSchema: writeOutputSchema,
    description: WRITE_DESCRIPTION,
    schema: createWriteSchema(),
    render: renderWrite,
    async execute(args, call) {
      try {
        const { signal } = call;
        const target = await call.fs.resolve(args.file_path, { cwd: call.cwd, ...(signal ? { signal } : {}) });
        const intent = await call.events.writeIntent(target, call.owner);
        // For the diff: a guarded create has nothing before it; otherwise the bytes being replaced.
        const before: Before = intent?.kind === 'createIfAbsent' ? 'absent' : await readBefore(call, target);
        let outcome;
        try {
          outcome = await call.fs.writeText(target, args.content, intent, signal ? { signal } : {});
        } catch (err) {
          // A guarded create found a file: say so in terms of this session.
          if (isFsError(err, 'FS_NOT_OBSERVED') && intent?.kind === 'createIfAbsent') {
            throw new FsError('FS_NOT_OBSERVED', `cannot overwrite "${target.displayPath}": the file exists and has not been read in this session`, { cause: err });
          }
          throw err;
        }
        call.events.observed(target, { kind: 'present', version: outcome.version }, call.owner);
        return {
          path: target.displayPath,
          operation: outcome.operation,
          version: outcome.version,
          bytes: outcome.size,
          ...writeDiff(target.displayPath, before, intent, outcome.operation, args.content),
        };
      } catch (err) {
        throw withRemedy(err, `cannot write "${args.file_path}"`);
      }
    },
  };
}

/** The diff of a write, when what it replaced is known exactly (the bytes at the guard's version, or nothing). */
function writeDiff(path: string, before: Before, intent: FsWriteIntent | undefined, operation: 'create' | 'update', content: string): DiffFields {
  // A create found nothing there, so it wrote the content as given.
  if (operation === 'create') return diffFields(path, undefined, textForWrite(content, undefined));
  if (before === undefined || before === 'absent') return {};
  // Guarded, the write succeeded only if the file was at the guard's version: the bytes read are
  // those exactly when their version is it. Unguarded (no policy), the read is the best known.
  if (intent?.kind === 'replaceIfVersion' && before.version !== intent.version) return {};
  return diffFields(path, before.bytes, textForWrite(content, before.bytes));
}
