import { FsError, isFsError, type FsVersion } from '../seam/index.js';
import { diffFields, type DiffFields } from './diff.js';
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
        let outcome;
        try {
          // The seam hands back the bytes it replaced and published: the diff needs no read of its own.
          outcome = await call.fs.writeText(target, args.content, intent, { withBytes: true, ...(signal ? { signal } : {}) });
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
          ...(outcome.published ? diffFields(target.displayPath, outcome.replaced ?? undefined, outcome.published) : {}),
        };
      } catch (err) {
        throw withRemedy(err, `cannot write "${args.file_path}"`);
      }
    },
  };
}
