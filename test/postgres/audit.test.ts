import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresAuditLog, type PgQueryable } from '../../src/backends/postgres/index.js';
import { describeAuditLogKit } from '../harness/audit-kit.js';
import { SERVER, closeShared, newWorkspace, sharedPglite, sharedPool } from './helpers.js';

const client = async (): Promise<PgQueryable> => (SERVER === undefined ? sharedPglite() : sharedPool());
afterAll(closeShared);

describeAuditLogKit('PostgreSQL', async () => createPostgresAuditLog({ client: await client(), workspace: newWorkspace('audit'), sandbox: 'sb' }), 15);

describe('the PostgreSQL audit log', () => {
  it('is a table keyed by workspace and sandbox; allSandboxes reads every one of the workspace', { timeout: 60_000 }, async () => {
    const c = await client();
    const ws = newWorkspace('audit-keys');
    const rec = (tool: string, owner?: string) => ({ time: '2026-12-03T00:00:00.000Z', ...(owner ? { owner } : {}), tool, args: { n: 1 }, outcome: 'ok' as const, paths: [{ path: '/a', before: null, after: 'sha256:x' }] });
    const a = createPostgresAuditLog({ client: c, workspace: ws, sandbox: 'a' });
    const direct = createPostgresAuditLog({ client: c, workspace: ws });
    await a.append(rec('one', 'agent-7'));
    await direct.append(rec('two'));
    await createPostgresAuditLog({ client: c, workspace: newWorkspace('other'), sandbox: 'a' }).append(rec('three'));
    expect(await a.query()).toEqual([rec('one', 'agent-7')]);
    expect((await direct.query()).map((r) => r.tool)).toEqual(['two']);
    const all = createPostgresAuditLog({ client: c, workspace: ws, allSandboxes: true });
    expect((await all.query()).map((r) => r.tool)).toEqual(['one', 'two']);
    expect((await all.query({ owner: 'agent-7' })).map((r) => r.tool)).toEqual(['one']);
    const { rows } = await c.query(`SELECT workspace, sandbox, owner, tool, outcome FROM dsh_fs_audit WHERE workspace = $1 ORDER BY seq`, [ws]);
    expect(rows).toEqual([
      { workspace: ws, sandbox: 'a', owner: 'agent-7', tool: 'one', outcome: 'ok' },
      { workspace: ws, sandbox: '', owner: null, tool: 'two', outcome: 'ok' },
    ]);
  });
});
