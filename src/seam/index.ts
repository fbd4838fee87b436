export * from './types.js';
export { FsError, FS_ERROR_CODES, isFsError, toFsError, throwIfAborted, type FsErrorCode } from './errors.js';
export { createFs, depthFirst, isRealSubdirectory, DEFAULT_MAX_TEXT_BYTES, type CreateFsOptions } from './fs.js';
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
  type Eol,
  type DecodedText,
} from './text.js';
export { KeyedMutex } from './lock.js';
export { DEFAULT_MATCH_TIMEOUT_MS } from './regex-worker.js';
export { contentVersion, contentHasher, type ContentHasher } from './version.js';
export { resolveLinks, checkWriteIntent, compareNames, MAX_SYMLINK_HOPS, type LinkReader, type NodeKind } from './resolve.js';
export {
  glob,
  grep,
  gitignoreRulesAbove,
  readIgnoreFile,
  createGlobFsAdapter,
  compileSearchPattern,
  cutUtf8,
  SeamStats,
  SeamDirent,
  VCS_DIRECTORIES,
  DEFAULT_GLOB_LIMIT,
  DEFAULT_MAX_ENTRIES,
  DEFAULT_GREP_MAX_MATCHES,
  DEFAULT_GREP_MAX_LINE_BYTES,
  DEFAULT_GREP_MAX_FILE_BYTES,
  DEFAULT_GREP_MAX_FILES,
  type GlobOptions,
  type GlobMatch,
  type GlobResult,
  type GlobFsAdapter,
  type GrepOptions,
  type GrepMatch,
  type GrepResult,
  type SearchSkip,
  type SkipCounts,
} from './search.js';
export {
  globToRegExp,
  matchGlob,
  parseGitignore,
  isIgnored,
  comparePaths,
  relativeTo,
  type GlobMatchOptions,
  type IgnoreRule,
} from './glob-match.js';
export { expectHolds, observe, checkRename, checkRmdir, type RenameSide } from './swap.js';
