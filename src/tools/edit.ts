import { FsError, crlfToLf, type FsLineRange, type FsVersion } from '../seam/index.js';
import { diffFields, type DiffFields } from './diff.js';
import type { Tool } from '../harness/index.js';
import { shownPath } from '../harness/tools.js';
import { EDIT_DESCRIPTION, createEditSchema, quickEditArgs, type EditArgs } from './schemas.js';
import { withRemedy } from './errors.js';
import { editOutputSchema } from './outputs.js';
import { applyEdits } from './multi-edit.js';

export interface EditValue extends DiffFields {
  readonly path: string;
  /** The version the file has now. */
  readonly version: FsVersion;
  readonly replacements: number;
  readonly replaceAll: boolean;
  /** Where each replacement landed in the edited file (1-based, inclusive). */
  readonly lines: readonly FsLineRange[];
  /** How many edits of an `edits` list were applied (absent for one old_string/new_string pair). */
  readonly edits?: number;
}

const MAX_LISTED_RANGES = 20;

export function renderEdit(value: EditValue): string {
  const n = value.replacements;
  const merged = mergeRanges(value.lines);
  const ranges = merged.slice(0, MAX_LISTED_RANGES).map((r) => (r.start === r.end ? `${r.start}` : `${r.start}-${r.end}`));
  const more = merged.length > MAX_LISTED_RANGES ? `, … (${merged.length - MAX_LISTED_RANGES} more)` : '';
  const single = merged.length === 1 && merged[0]!.start === merged[0]!.end;
  const where = `${single ? 'line' : 'lines'} ${ranges.join(', ')}${more}`;
  const edits = value.edits === undefined ? '' : ` (${value.edits} edit${value.edits === 1 ? '' : 's'})`;
  return `Edited "${shownPath(value.path)}"${edits}: ${n} replacement${n === 1 ? '' : 's'}; changed ${where}.`;
}

/** Replacements that share a line are shown once: `replace_all` on one long line is "line 1". */
function mergeRanges(lines: readonly FsLineRange[]): FsLineRange[] {
  const out: FsLineRange[] = [];
  for (const r of lines) {
    const last = out.at(-1);
    if (last !== undefined && r.start <= last.end) out[out.length - 1] = { start: last.start, end: Math.max(last.end, r.end) };
    else out.push(r);
  }
  return out;
}

export function createEditTool(): Tool<EditArgs, EditValue> {
  return {
    name: 'edit',
    title: 'Edit file',
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    outputSchema: editOutputSchema,
    description: EDIT_DESCRIPTION,
    schema: createEditSchema(),
    quickParse: quickEditArgs,
    render: renderEdit,
    async execute(args, call) {
      try {
        if (args.edits != null) {
          const done = await applyEdits(call, args.file_path, args.edits);
          return { ...done, replaceAll: args.edits.some((e) => e.replace_all === true), edits: args.edits.length };
        }
        const pair = { old_string: args.old_string!, new_string: args.new_string! }; // the schema requires both without edits
        // Refused before the policy is asked, so a no-op never reads as "read it first".
        if (crlfToLf(pair.old_string) === crlfToLf(pair.new_string)) {
          throw new FsError('FS_INVALID_ARGUMENT', 'old_string and new_string are identical; there is nothing to change');
        }
        const { signal } = call;
        const target = await call.fs.resolve(args.file_path, { cwd: call.cwd, ...(signal ? { signal } : {}) });
        const guard = await call.events.editIntent(target, call.owner);
        const request = { oldString: pair.old_string, newString: pair.new_string, replaceAll: args.replace_all === true };
        // The seam hands back the bytes it replaced and published (both decoded as text by the
        // edit): the diff needs no read and no text check of its own.
        const outcome = await call.fs.editText(target, request, guard, { withBytes: true, ...(signal ? { signal } : {}) });
        call.events.observed(target, { kind: 'present', version: outcome.version }, call.owner);
        return {
          path: target.displayPath,
          version: outcome.version,
          replacements: outcome.replacements,
          replaceAll: args.replace_all === true,
          lines: outcome.lines,
          ...(outcome.replaced && outcome.published ? diffFields(target.displayPath, outcome.replaced, outcome.published, true) : {}),
        };
      } catch (err) {
        throw withRemedy(err, `cannot edit "${args.file_path}"`);
      }
    },
  };
}
