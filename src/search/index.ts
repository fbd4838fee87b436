export {
  glob,
  grep,
  compileSearchPattern,
  gitignoreRulesAbove,
  readIgnoreFile,
  cutUtf8,
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
  type GrepOptions,
  type GrepMatch,
  type GrepResult,
  type SearchSkip,
  type SkipCounts,
} from './search.js';
export { createGlobFsAdapter, SeamStats, SeamDirent, type GlobFsAdapter } from './fast-glob-adapter.js';
export { compileGlob, globToRegExp, matchGlob, parseGitignore, isIgnored, type GlobMatchOptions, type IgnoreRule } from './dialect.js';
export { comparePaths, relativeTo } from './paths.js';
export { walkFrom, type WalkItem, type WalkerOptions, type WalkerSkip, type Walker } from './walker.js';
export { DEFAULT_MATCH_TIMEOUT_MS } from './regex-worker.js';
