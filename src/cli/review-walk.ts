import { createInterface } from 'node:readline';
import type { ReviewDecision, ReviewFile, ReviewHunk } from '../review/index.js';
import { colorsFor, type Colors } from './color.js';
import type { Io } from './io.js';

// The terminal walk of `dsh-fs review`, as `git add -p`: one question per hunk (or per file
// without lines); the decisions are applied together at the end.

const help = (target: string) => `y - accept this change (commit it to ${target})
n - reject this change (revert it in the sandbox)
r - reject this change with a reason the agent is told
s - skip: decide later
q - quit: apply the decisions taken so far
? - print this help
`;

/** Asks about every hunk of `files`; resolves to the decisions taken (none on an immediate quit). `target`: where accepted ones go. */
export async function walk(files: readonly ReviewFile[], io: Io, target = 'the folder'): Promise<ReviewDecision[]> {
  const input = io.stdin ?? process.stdin;
  const rl = createInterface({ input, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (question: string): Promise<string | undefined> => {
    io.stdout.write(question);
    const next = await lines.next();
    return next.done === true ? undefined : next.value.trim();
  };
  const c = colorsFor(io.stdout, 'auto', io.env);
  const decisions: ReviewDecision[] = [];
  const items = files.flatMap((file): { file: ReviewFile; hunk: ReviewHunk | undefined }[] => (file.hunks.length === 0 || file.kind !== 'text' ? [{ file, hunk: undefined }] : file.hunks.map((hunk) => ({ file, hunk }))));
  try {
    let shown: ReviewFile | undefined;
    for (let i = 0; i < items.length; i++) {
      const { file, hunk } = items[i]!;
      if (shown !== file) io.stdout.write(header(file, c));
      shown = file;
      io.stdout.write(hunk ? hunkText(hunk, c) : `${c.dim(`(${describe(file)})`)}\n`);
      const id = hunk?.id ?? file.id;
      const what = hunk ? 'this hunk' : 'this change';
      for (;;) {
        const answer = await ask(c.bold(`(${i + 1}/${items.length}) Decide ${what} [y,n,r,s,q,?]? `));
        if (answer === undefined || answer === 'q') return decisions;
        if (answer === 'y') decisions.push({ id, decision: 'accept' });
        else if (answer === 'n') decisions.push({ id, decision: 'reject' });
        else if (answer === 'r') {
          const reason = await ask('Reason (told to the agent): ');
          if (reason === undefined) return decisions;
          decisions.push({ id, decision: 'reject', ...(reason === '' ? {} : { reason }) });
        } else if (answer !== 's') {
          io.stdout.write(c.red(help(target)));
          continue;
        }
        break;
      }
    }
    return decisions;
  } finally {
    rl.close();
  }
}

function header(file: ReviewFile, c: Colors): string {
  const from = file.status === 'added' ? '/dev/null' : `a/${file.path}`;
  const to = file.status === 'deleted' ? '/dev/null' : `b/${file.path}`;
  return c.bold(`--- ${from}\n+++ ${to}\n`);
}

function describe(file: ReviewFile): string {
  const kind = file.kind === 'text' ? 'empty file' : file.kind === 'mode' ? 'mode change' : file.kind;
  return `${kind} ${file.status}: ${file.path}`;
}

function hunkText(h: ReviewHunk, c: Colors): string {
  const range = (start: number, n: number) => (n === 1 ? `${start}` : `${start},${n}`);
  const out = [c.cyan(`@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`)];
  for (const line of h.lines) out.push(line.startsWith('+') ? c.green(line) : line.startsWith('-') ? c.red(line) : line.startsWith('\\') ? c.dim(line) : line);
  return `${out.join('\n')}\n`;
}
