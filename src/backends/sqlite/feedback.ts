/**
 * The reasons of rejected hunks for a sandbox kept in the SQLite file, rows of
 * `dsh_fs_review_feedback`: a review in one process reaches the agent served by another.
 */
import { isFeedback } from '../../review/feedback.js';
import type { FeedbackStore, ReviewFeedback } from '../../review/types.js';
import { FsError } from '../../seam/errors.js';
import { openSqlite, type Row } from './db.js';
import { FEEDBACK } from './schema.js';

export interface SqliteFeedbackOptions {
  /** The SQLite file of the sandbox. */
  readonly path: string;
  /** The sandbox whose agent hears the reasons. */
  readonly sandbox: string;
}

/** Each call is one transaction; `take` reads and deletes in the same one, so an item is handed over once. */
export function createSqliteFeedback(options: SqliteFeedbackOptions): FeedbackStore & { close(): Promise<void> } {
  const { sandbox } = options;
  if (typeof sandbox !== 'string' || sandbox === '') throw new FsError('FS_INVALID_ARGUMENT', 'sandbox must be a non-empty string');
  const db = openSqlite(options.path, 'dsh-fs/sqlite');
  const where = `the review feedback of sandbox "${sandbox}" in ${db.file}`;
  const select = `SELECT seq, item FROM ${FEEDBACK} WHERE sandbox = ? ORDER BY seq`;
  return {
    add: (items) =>
      db.transaction(`cannot save ${where}`, (sql) => {
        for (const item of items) sql.run(`INSERT INTO ${FEEDBACK} (sandbox, item) VALUES (?, ?)`, [sandbox, JSON.stringify(item)]);
      }),
    pending: async () => parsed(await db.transaction(`cannot read ${where}`, (sql) => sql.all(select, [sandbox]), { readOnly: true })),
    take: async () =>
      parsed(
        await db.transaction(`cannot take ${where}`, (sql) => {
          const rows = sql.all(select, [sandbox]);
          if (rows.length > 0) sql.run(`DELETE FROM ${FEEDBACK} WHERE sandbox = ? AND seq <= ?`, [sandbox, rows[rows.length - 1]!.seq]);
          return rows;
        }),
      ),
    close: () => db.close(),
  };
}

function parsed(rows: readonly Row[]): ReviewFeedback[] {
  const out: ReviewFeedback[] = [];
  for (const row of rows) {
    try {
      const item: unknown = JSON.parse(String(row.item));
      if (isFeedback(item)) out.push(item);
    } catch {
      // A damaged row is no feedback, not a failed tool call.
    }
  }
  return out;
}
