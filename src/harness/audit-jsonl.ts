// An audit log in a JSON-lines file: one record per line, appended and flushed one at a time.
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FsError, KeyedMutex, toFsError } from '../seam/index.js';
import { parseAuditRecord, selectAudit, type AuditLog, type AuditRecord } from './audit-log.js';

/** The log's file name in an overlay's state directory. */
export const AUDIT_FILE = 'audit.jsonl';

export interface JsonlAuditLogOptions {
  /** The file (created with its directory when missing). */
  readonly file: string;
}

/**
 * Each append writes one line with a single write to a file opened for appending, then flushes it
 * to disk before it resolves: a crash loses at most the line being written. A torn last line (a
 * crash mid-write) is skipped on reading, and the next append starts a new line after it, so the
 * records before it are never lost. Several processes may append to one file.
 */
export function createJsonlAuditLog(options: JsonlAuditLogOptions): AuditLog & { readonly file: string } {
  const file = options?.file;
  if (typeof file !== 'string' || file === '') throw new FsError('FS_INVALID_ARGUMENT', 'createJsonlAuditLog needs { file }');
  const serial = new KeyedMutex();
  return {
    file,
    append: (record) => serial.run('', () => appendLine(file, record)),
    async query(query) {
      return selectAudit(await readRecords(file), query);
    },
  };
}

async function appendLine(file: string, record: AuditRecord): Promise<void> {
  const line = `${JSON.stringify(record)}\n`;
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const handle = await open(file, 'a+', 0o600);
    try {
      const { size } = await handle.stat();
      let torn = false;
      if (size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        torn = last[0] !== 0x0a;
      }
      await handle.write(torn ? `\n${line}` : line);
      await handle.datasync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw toFsError(err, `cannot append to the audit log "${file}"`);
  }
}

/** Every whole record in the file, in order; a line that is not one (a torn tail) is skipped. */
export async function readRecords(file: string): Promise<AuditRecord[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw toFsError(err, `cannot read the audit log "${file}"`);
  }
  const out: AuditRecord[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const record = parseAuditRecord(value);
    if (record !== undefined) out.push(record);
  }
  return out;
}
