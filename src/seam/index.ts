export * from './types.js';
export { FsError, FS_ERROR_CODES, isFsError, toFsError, throwIfAborted, type FsErrorCode } from './errors.js';
export { textStreamOf } from './fs-read.js';
export { createFs, depthFirst, isRealSubdirectory, listOrSkip, narrowing, treeWalk, walkBatches, DEFAULT_MAX_TEXT_BYTES, type CreateFsOptions, type FetchedTree } from './fs.js';
export { applyEdit, editBytes, nearMatchHint, type EditResult, type BytesEdit } from './edit.js';
export { MAX_PATH_SEGMENTS, canonicalPath, isWithin } from './path.js';
export {
  decodeText,
  encodeText,
  textForWrite,
  textProblem,
  hasUtf8Bom,
  countEols,
  dominantEol,
  crlfToLf,
  withEol,
  lineNumberAt,
  splitLines,
  lineBreaks,
  encodeKeepingBom,
  type Eol,
  type DecodedText,
} from './text.js';
export { KeyedMutex } from './lock.js';
export { createChangeHub, reportChanges, type ChangeHub } from './feed-report.js';
export { DEFAULT_WATCH_BUFFER } from './fs-watch.js';
export { contentVersion, contentHasher, directoryVersion, type ContentHasher } from './version.js';
export { inListingOrder, inWalkOrder } from './listing.js';
export { resolveLinks, checkWriteIntent, compareNames, MAX_SYMLINK_HOPS, type LinkReader, type NodeKind } from './resolve.js';
export { expectHolds, observe, checkRename, checkRmdir, checkNotRoot, type RenameSide } from './swap.js';
export { withExecutable, isExecutableMode } from './modes.js';
export type { FsQuota } from './quota.js';
