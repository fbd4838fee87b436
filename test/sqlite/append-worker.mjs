// One process of the SQLite multi-process test: `count` unguarded appends (editText, no version)
// to one file, never retried here: an edit that fails is reported as a failure line.
import { isFsError } from '../../dist/seam/errors.js';
import { createSqliteFs } from '../../dist/backends/sqlite/index.js';

const [file, workspace, worker, count] = process.argv.slice(2);
const fs = createSqliteFs({ path: file, workspace });
const target = await fs.resolve('/shared/f0.txt');
const out = [];
for (let i = 0; i < Number(count); i++) {
  const token = `w${worker}-${i}`;
  try {
    const { version } = await fs.editText(target, { oldString: '\nEND', newString: `\n${token}\nEND` });
    out.push({ token, version });
  } catch (err) {
    out.push({ token, failed: isFsError(err) ? err.code : 'not an FsError', message: String(err?.message ?? err) });
  }
}
await fs.close();
process.stdout.write(out.map((r) => JSON.stringify(r)).join('\n') + '\n');
