import { execFileSync } from 'node:child_process';

/** Whether `git` is on the PATH (tests of git's own files need it). */
export const hasGit = (() => {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** An environment in which git reads no user or system config and commits as `t <t@t>`. */
export const GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};

/** Runs git in `dir` with GIT_ENV; its stdout. */
export const git = (dir: string, ...args: string[]): string => execFileSync('git', ['-C', dir, ...args], { env: GIT_ENV, encoding: 'utf8' });
