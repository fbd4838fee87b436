import type { SubjectFactory } from '../tools/subjects.js';
import { createSqliteFs } from '../../src/backends/sqlite/index.js';
import { otherWriter, tempSqlite } from './helpers.js';

/** The tools' integration subject over a SQLite file; the other writer is a second filesystem on it. */
export const sqliteToolSubject: SubjectFactory = {
  name: 'sqlite',
  async create() {
    const temp = await tempSqlite('tools');
    const fs = createSqliteFs({ path: temp.file, workspace: 'tools', cwd: '/ws' });
    await fs.mkdir(await fs.resolve('/ws'));
    const other = otherWriter(temp.file, 'tools');
    return {
      fs,
      base: '/ws',
      write: (path, content, options) => other.writeBytes(path, typeof content === 'string' ? Buffer.from(content) : content, options),
      remove: other.remove,
      read: other.readBytes,
      symlink: other.symlink,
      cleanup: async () => {
        await other.close();
        await fs.close();
        await temp.remove();
      },
    };
  },
};
