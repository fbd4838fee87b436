// One process of the multi-process tests. Prints one JSON line per edit.
//
// mode "mixed": `count` read-modify-write edits on shared files of one workspace, alternately
// guarded (read, then edit at that version; a stale guard is read again) and unguarded.
// mode "append": `count` unguarded appends (editText, no version) to one file, never retried here:
// an edit that fails is reported as a failure line, since only an abort or a deadline may stop one.
import pg from 'pg';
import { isFsError } from '../../dist/seam/errors.js';
import { createPostgresFs } from '../../dist/backends/postgres/index.js';

const [connectionString, workspace, worker, count, files, mode = 'mixed'] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString, max: 2 });
const fs = createPostgresFs({ client: pool, workspace });
const out = [];
for (let i = 0; i < Number(count); i++) {
  const target = await fs.resolve(`/shared/f${i % Number(files)}.txt`);
  const token = `w${worker}-${i}`;
  const edit = { oldString: '\nEND', newString: `\n${token}\nEND` };
  if (mode === 'append') {
    try {
      const { version } = await fs.editText(target, edit);
      out.push({ file: target.targetKey, token, guarded: false, version });
    } catch (err) {
      out.push({ file: target.targetKey, token, failed: isFsError(err) ? err.code : 'not an FsError', message: String(err?.message ?? err) });
    }
    continue;
  }
  const guarded = i % 2 === 0;
  for (;;) {
    try {
      if (guarded) {
        const { version: base } = await fs.readText(target);
        const { version } = await fs.editText(target, edit, { version: base });
        out.push({ file: target.targetKey, token, guarded, base, version });
      } else {
        const { version } = await fs.editText(target, edit);
        out.push({ file: target.targetKey, token, guarded, version });
      }
      break;
    } catch (err) {
      // Stale: another process won; read again and retry. Anything else is a failure of the test.
      if (!isFsError(err, 'FS_STALE_VERSION')) throw err;
    }
  }
}
await pool.end();
process.stdout.write(out.map((r) => JSON.stringify(r)).join('\n') + '\n');
