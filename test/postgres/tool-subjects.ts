import type { SubjectFactory } from '../tools/subjects.js';
import { createPostgresFs } from '../../src/backends/postgres/index.js';
import type { PgQueryable } from '../../src/backends/postgres/index.js';
import { SERVER, newWorkspace, rowHooks, sharedPglite, sharedPool } from './helpers.js';

function subject(name: string, client: () => Promise<PgQueryable> | PgQueryable): SubjectFactory {
  return {
    name,
    async create() {
      const c = await client();
      const workspace = newWorkspace('tools');
      const fs = createPostgresFs({ client: c, workspace, root: '/ws' });
      await fs.provider.ready(); // the hooks write rows before the filesystem is first used
      const hooks = rowHooks(c, workspace);
      return {
        fs,
        base: '/ws',
        write: (path, content, options) => hooks.writeBytes(path, typeof content === 'string' ? Buffer.from(content) : content, options),
        remove: hooks.remove,
        read: hooks.readBytes,
        symlink: hooks.symlink,
        cleanup: hooks.drop,
      };
    },
  };
}

/** The tools' integration subjects over PostgreSQL: embedded PGlite always, the DSH_FS_TEST_PG server when set. */
export const postgresToolSubjects: readonly SubjectFactory[] = [
  subject('postgres (PGlite)', sharedPglite),
  ...(SERVER === undefined ? [] : [subject('postgres (server)', sharedPool)]),
];
