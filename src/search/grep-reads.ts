import type { FileSystem, FsSearchReadQuery } from '../seam/index.js';
import type { FileItem } from './grep-files.js';

/**
 * grep's files with their contents read ahead in bulk, where the filesystem reads many small
 * files at once (`searchReads`, e.g. on worker threads): runs of the walk are gathered into
 * requests of up to REQUEST_FILES files, and up to DEPTH requests are out while earlier files
 * are matched. The walk, its order, and everything done with a file are as without it.
 */
export interface ReadItem extends FileItem {
  /** Its bytes as a read would give them; null: text without the pattern's literal (no match). */
  readonly given?: Uint8Array | null;
}

/**
 * The first request is small, so that reads start while the walk goes on and a search that
 * stops at its first matches reads little ahead; each next one is four times larger.
 */
const FIRST_REQUEST_FILES = 64;
const REQUEST_FILES = 1024;
/** What one request's answers hold at most: a search holds no more than DEPTH times this ahead. */
export const REQUEST_BYTES = 4 * 1024 * 1024;
/** Requests out at once: one per read worker and one more, so none waits between two. */
const DEPTH = 3;

export async function* readAhead(
  fs: FileSystem,
  runs: AsyncGenerator<FileItem[]>,
  asked: Omit<FsSearchReadQuery, 'maxTotalBytes'>,
  signal: AbortSignal,
): AsyncGenerator<ReadItem[]> {
  // One shape for every search's query (a spread gave each search's a map of its own, and the
  // provider's optimized reads were thrown away at the next search).
  const query: FsSearchReadQuery = { maxBytes: asked.maxBytes, maxTotalBytes: REQUEST_BYTES, contains: asked.contains };
  const reads = fs.searchReads!;
  const out: Promise<ReadItem[]>[] = [];
  let ended = false;
  let wanted = FIRST_REQUEST_FILES;
  // The walk's runs (a directory's files each) cut to the size of requests.
  let pending: FileItem[] = [];
  const gather = async (): Promise<FileItem[]> => {
    while (pending.length < wanted && !ended) {
      const next = await runs.next();
      if (next.done === true) ended = true;
      else for (const file of next.value) pending.push(file);
    }
    const files = pending.length <= wanted ? pending : pending.slice(0, wanted);
    pending = pending.length <= wanted ? [] : pending.slice(wanted);
    wanted = Math.min(REQUEST_FILES, wanted * 4);
    return files;
  };
  const request = (files: FileItem[]): Promise<ReadItem[]> =>
    reads(files.map((f) => f.target), query, { signal }).then(
      (answers) => files.map((file, i) => (answers[i] === undefined ? file : { path: file.path, target: file.target, size: file.size, given: answers[i] })),
      // Any failure of the bulk read: each file is read the usual way, which reports its own.
      () => files,
    );
  try {
    for (;;) {
      while ((!ended || pending.length > 0) && out.length < DEPTH) {
        const files = await gather();
        if (files.length > 0) out.push(request(files));
      }
      const head = out.shift();
      if (head === undefined) return;
      yield await head;
    }
  } finally {
    // No read of this search goes on after it returned.
    await Promise.allSettled(out);
    await runs.return(undefined);
  }
}
