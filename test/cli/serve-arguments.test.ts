import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, project, removeTemps, serve } from './helpers.js';

afterAll(removeTemps);

describe('dsh-fs serve over stdio', () => {
  it('refuses an argument named __proto__ as the registry refuses any unknown key', { timeout: 600_000 }, async () => {
    await ensureBuilt();
    const p = await project({ 'a.txt': 'one\n' });
    const s = await serve(['--root', p.root, '--state', p.state]);
    try {
      // JSON.parse gives an own key named __proto__, which JSON.stringify sends on the wire.
      const r = await s.call('read', JSON.parse('{"file_path":"a.txt","__proto__":{"offset":1}}'));
      expect(r.isError).toBe(true);
      expect(r.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Error: invalid arguments for read: unknown argument "__proto__"/) }]);
    } finally {
      await s.close();
    }
  });
});
