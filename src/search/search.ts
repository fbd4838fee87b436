/*
 * Search over the `FileSystem` contract. These are free functions, not methods: they need
 * nothing but `resolve`, `contains`, `stat`, `walk`, `readText` and `streamText`, so every provider (a third-party one
 * included) gets them without writing search code, and the contract stays small. Because every
 * access goes through the contract, an overlay's view is what is searched (whiteouts hidden,
 * upper files included) and a rooted provider's confinement applies to every path.
 */

export { MAX_RECORDED_SKIPS, VCS_DIRECTORIES, type SearchSkip, type SkipCounts } from './shared.js';
export { DEFAULT_GLOB_LIMIT, DEFAULT_MAX_ENTRIES, glob, type GlobMatch, type GlobOptions, type GlobResult } from './glob.js';
export {
  DEFAULT_GREP_MAX_FILE_BYTES,
  DEFAULT_GREP_MAX_FILES,
  DEFAULT_GREP_MAX_LINE_BYTES,
  DEFAULT_GREP_MAX_MATCHES,
  grep,
  type GrepMatch,
  type GrepOptions,
  type GrepResult,
} from './grep.js';
export { compileSearchPattern, cutUtf8 } from './pattern.js';
export { gitignoreRulesAbove, readIgnoreFile } from './ignore-files.js';
