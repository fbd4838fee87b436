// Properties every AuditLog store must have: records come back whole and in order, and a query is
// the filter of every record by the query's rules (written here independently of selectAudit).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AuditLog, AuditQuery, AuditRecord } from '../../src/harness/audit-log.js';

const PATHS = ['/', '/a', '/a/b', '/ab', '/c/d.txt'];
const TIMES = [0, 1, 2, 3, 4].map((d) => Date.UTC(2026, 11, 3, 12, d));
const iso = fc.constantFrom(...TIMES).map((ms) => new Date(ms).toISOString());
const version = fc.constantFrom<string | null>(null, 'sha256:one', 'sha256:two');

export const auditRecord: fc.Arbitrary<AuditRecord> = fc.record(
  {
    time: iso,
    owner: fc.constantFrom('agent-7', 'agent-8', 'mcp-session-1'),
    tool: fc.constantFrom('read', 'write', 'edit', 'delete', 'move'),
    args: fc.record({ file_path: fc.constantFrom('a', 'b'), content: fc.record({ bytes: fc.nat(), sha256: fc.constantFrom('00', 'ff') }) }),
    outcome: fc.constantFrom('ok', 'FS_NOT_FOUND', 'FS_STALE_VERSION') as fc.Arbitrary<AuditRecord['outcome']>,
    paths: fc.array(
      fc.record({ path: fc.constantFrom(...PATHS.slice(1)), before: version, after: version }, { requiredKeys: ['path'] }),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: ['time', 'tool', 'args', 'outcome', 'paths'] },
);

export const auditQuery: fc.Arbitrary<AuditQuery> = fc.record(
  {
    path: fc.constantFrom(...PATHS),
    owner: fc.constantFrom('agent-7', 'agent-8', 'nobody'),
    tool: fc.constantFrom('read', 'write', 'edit'),
    since: iso,
    until: iso,
    limit: fc.nat({ max: 6 }),
  },
  { requiredKeys: [] },
);

/** The query's rules, stated once more for the test. */
export function modelQuery(all: readonly AuditRecord[], q: AuditQuery): AuditRecord[] {
  const under = (p: string) => q.path === '/' || p === q.path || p.startsWith(`${q.path}/`);
  const out = all.filter(
    (r) =>
      (q.owner === undefined || r.owner === q.owner) &&
      (q.tool === undefined || r.tool === q.tool) &&
      (q.since === undefined || Date.parse(r.time) >= Date.parse(String(q.since))) &&
      (q.until === undefined || Date.parse(r.time) < Date.parse(String(q.until))) &&
      (q.path === undefined || r.paths.some((p) => under(p.path))),
  );
  return q.limit === undefined ? out : out.slice(out.length - Math.min(q.limit, out.length));
}

/** The store properties, for a store made fresh by `make` (its records are only those appended). */
export function describeAuditLogKit(name: string, make: () => Promise<AuditLog>, runs = 30): void {
  describe(`${name}: an AuditLog store`, () => {
    it('gives back every record appended, whole and in order', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(auditRecord, { maxLength: 12 }), async (records) => {
          const log = await make();
          try {
            for (const r of records) await log.append(r);
            expect(await log.query()).toEqual(records);
          } finally {
            await log.close?.();
          }
        }),
        { numRuns: runs },
      );
    });

    it('answers a query with the filter of all its records by that query', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(auditRecord, { maxLength: 12 }), fc.array(auditQuery, { minLength: 1, maxLength: 4 }), async (records, queries) => {
          const log = await make();
          try {
            for (const r of records) await log.append(r);
            const all = await log.query();
            for (const q of queries) expect(await log.query(q)).toEqual(modelQuery(all, q));
          } finally {
            await log.close?.();
          }
        }),
        { numRuns: runs },
      );
    });
  });
}
