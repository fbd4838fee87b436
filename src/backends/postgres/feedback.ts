/**
 * The reasons of rejected hunks for a sandbox kept in PostgreSQL, rows of `dsh_fs_review_feedback`:
 * a review on any machine reaches the agent served by another.
 */
import { isFeedback } from '../../review/feedback.js';
import type { FeedbackStore, ReviewFeedback } from '../../review/types.js';
import { FsError } from '../../seam/index.js';
import { Db, type PgQueryable } from './client.js';
import { FEEDBACK, ensureSchema } from './schema.js';

export interface PostgresFeedbackOptions {
  /** As for createPostgresFs: a `pg` Pool (recommended), a `pg` Client, or PGlite. */
  readonly client: PgQueryable;
  /** The sandbox whose agent hears the reasons. */
  readonly sandbox: string;
}

/** `take` deletes and returns in one statement, so an item is handed over once. */
export function createPostgresFeedback(options: PostgresFeedbackOptions): FeedbackStore {
  const { sandbox } = options;
  if (typeof sandbox !== 'string' || sandbox === '') throw new FsError('FS_INVALID_ARGUMENT', 'sandbox must be a non-empty string');
  if (typeof options.client?.query !== 'function') throw new FsError('FS_INVALID_ARGUMENT', 'client must have a query(text, values) method');
  const db = new Db(options.client);
  let schema: Promise<void> | undefined;
  const ready = () =>
    (schema ??= ensureSchema(db).catch((err) => {
      schema = undefined;
      throw err;
    }));
  const where = `the review feedback of sandbox "${sandbox}"`;
  return {
    async add(items) {
      if (items.length === 0) return;
      await ready();
      await db.session(`cannot save ${where}`, undefined, (q) =>
        q(`INSERT INTO ${FEEDBACK} (sandbox, item) SELECT $1, unnest($2::text[])`, [sandbox, items.map((i) => JSON.stringify(i))]),
      );
    },
    async pending() {
      await ready();
      return parsed(await db.session(`cannot read ${where}`, undefined, (q) => q(`SELECT seq, item FROM ${FEEDBACK} WHERE sandbox = $1 ORDER BY seq`, [sandbox])));
    },
    async take() {
      await ready();
      const rows = await db.session(`cannot take ${where}`, undefined, (q) => q(`DELETE FROM ${FEEDBACK} WHERE sandbox = $1 RETURNING seq, item`, [sandbox]));
      return parsed([...rows].sort((a, b) => Number(a.seq) - Number(b.seq)));
    },
  };
}

function parsed(rows: readonly { item?: unknown }[]): ReviewFeedback[] {
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
