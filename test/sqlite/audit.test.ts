import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAuditLog } from '../../src/backends/sqlite/index.js';
import { describeAuditLogKit } from '../harness/audit-kit.js';
import { tempSqlite } from './helpers.js';

const files: { remove(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(files.map((f) => f.remove()));
});

let n = 0;
describeAuditLogKit('SQLite', async () => {
  const t = await tempSqlite('audit');
  files.push(t);
  return createSqliteAuditLog({ path: t.file, workspace: `ws${n++}`, sandbox: 'sb' });
});

describe('the SQLite audit log', () => {
  it('keeps each workspace and sandbox apart; allSandboxes reads every one of the workspace', async () => {
    const t = await tempSqlite('audit-keys');
    files.push(t);
    const rec = (tool: string) => ({ time: '2026-12-03T00:00:00.000Z', tool, args: {}, outcome: 'ok' as const, paths: [] });
    const a = createSqliteAuditLog({ path: t.file, workspace: 'w', sandbox: 'a' });
    const direct = createSqliteAuditLog({ path: t.file, workspace: 'w' });
    const other = createSqliteAuditLog({ path: t.file, workspace: 'v', sandbox: 'a' });
    await a.append(rec('one'));
    await direct.append(rec('two'));
    await other.append(rec('three'));
    expect((await a.query()).map((r) => r.tool)).toEqual(['one']);
    expect((await direct.query()).map((r) => r.tool)).toEqual(['two']);
    const all = createSqliteAuditLog({ path: t.file, workspace: 'w', allSandboxes: true });
    expect((await all.query()).map((r) => r.tool)).toEqual(['one', 'two']);
    for (const log of [a, direct, other, all]) await log.close?.();
  });
});
