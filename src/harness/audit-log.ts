// The audit log's record, its query and the store interface; the in-memory store. The query's
// meaning lives here only: every store filters with `selectAudit`.
import { FsError, type FsErrorCode } from '../seam/index.js';

/** A path a call named, with its version just before and just after the call. */
export interface AuditPath {
  /** The canonical path (the target key). */
  readonly path: string;
  /** The version before the call; null when nothing was there; absent when it could not be read. */
  readonly before?: string | null;
  /** The version after the call, as `before`. */
  readonly after?: string | null;
}

/** One tool call. */
export interface AuditRecord {
  /** When the call started, as an ISO 8601 UTC timestamp (`toISOString`). */
  readonly time: string;
  /** A string owner as is; an object owner's `id` when it has a non-empty string one; else absent. */
  readonly owner?: string;
  readonly tool: string;
  /** The arguments, with contents replaced by `{ bytes, sha256 }` (see `redactArgs`). */
  readonly args: unknown;
  /** `ok`, or the error code of the failed call. */
  readonly outcome: 'ok' | FsErrorCode;
  readonly paths: readonly AuditPath[];
}

export interface AuditQuery {
  /** Records naming this path or a path below it (canonical, absolute). */
  readonly path?: string;
  readonly owner?: string;
  readonly tool?: string;
  /** Records at or after this time (ISO 8601, or a Date). */
  readonly since?: string | Date;
  /** Records before this time. */
  readonly until?: string | Date;
  /** The newest this many matching records (still oldest first). */
  readonly limit?: number;
}

/** Where audit records are kept. `append` resolves once the record is stored. */
export interface AuditLog {
  append(record: AuditRecord): Promise<void>;
  /** The matching records, oldest first. */
  query(query?: AuditQuery): Promise<AuditRecord[]>;
  /** Lets go of files or connections the log opened (a no-op when it opened none). */
  close?(): Promise<void>;
}

/** A time bound as the ISO string records carry, so bounds and records compare as strings. */
function bound(value: string | Date | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  if (Number.isNaN(ms)) throw new FsError('FS_INVALID_ARGUMENT', `${name} must be a date (ISO 8601), got ${JSON.stringify(String(value))}`);
  return new Date(ms).toISOString();
}

/** Checks a query and returns a predicate for one record. */
export function auditMatcher(query: AuditQuery = {}): (record: AuditRecord) => boolean {
  const since = bound(query.since, 'since');
  const until = bound(query.until, 'until');
  const { path, owner, tool } = query;
  const below = path === undefined ? undefined : path.endsWith('/') ? path : `${path}/`;
  return (r) =>
    (owner === undefined || r.owner === owner) &&
    (tool === undefined || r.tool === tool) &&
    (since === undefined || r.time >= since) &&
    (until === undefined || r.time < until) &&
    (path === undefined || r.paths.some((p) => p.path === path || p.path.startsWith(below!)));
}

/** The query applied to records in log order: the filter, then the limit (the newest kept). */
export function selectAudit(records: Iterable<AuditRecord>, query: AuditQuery = {}): AuditRecord[] {
  const limit = query.limit;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new FsError('FS_INVALID_ARGUMENT', `limit must be a non-negative integer, got ${String(limit)}`);
  }
  const match = auditMatcher(query);
  const out: AuditRecord[] = [];
  for (const r of records) if (match(r)) out.push(r);
  return limit === undefined ? out : limit === 0 ? [] : out.slice(-limit);
}

/** A record read back from storage, checked for the fields queries use (anything else is skipped). */
export function parseAuditRecord(value: unknown): AuditRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (typeof r.time !== 'string' || typeof r.tool !== 'string' || typeof r.outcome !== 'string' || !Array.isArray(r.paths)) return undefined;
  if (r.owner !== undefined && typeof r.owner !== 'string') return undefined;
  if (!r.paths.every((p) => typeof p === 'object' && p !== null && typeof (p as { path?: unknown }).path === 'string')) return undefined;
  return r as unknown as AuditRecord;
}

/** An audit log held in memory, for tests and short-lived harnesses. */
export function createMemoryAuditLog(): AuditLog & { readonly records: readonly AuditRecord[] } {
  const records: AuditRecord[] = [];
  return {
    records,
    async append(record) {
      records.push(record);
    },
    async query(query) {
      return selectAudit(records, query);
    },
  };
}
