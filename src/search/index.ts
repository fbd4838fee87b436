export {
  glob,
  grep,
  compileSearchPattern,
  cutUtf8,
  VCS_DIRECTORIES,
  DEFAULT_MAX_ENTRIES,
  type GlobOptions,
  type GlobMatch,
  type GlobResult,
  type GrepOptions,
  type GrepMatch,
  type GrepResult,
  type SearchSkip,
  type SkipCounts,
} from './search.js';

export { compileGlob, globToRegExp, matchGlob, parseGitignore, isIgnored, type GlobMatchOptions, type IgnoreRule } from './dialect.js';
export { comparePaths, relativeTo } from './paths.js';
export { walkFrom, type WalkItem, type WalkerOptions, type WalkerSkip, type Walker } from './walker.js';

