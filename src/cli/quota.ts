import type { FsQuota } from '../seam/index.js';
import { UsageError, optionalString, type Command, type Parsed } from './args.js';

const UNITS: Record<string, number> = { '': 1, K: 1000, M: 1000 ** 2, G: 1000 ** 3, KI: 1024, MI: 1024 ** 2, GI: 1024 ** 3 };

/** `--max-bytes 1000000`, `--max-bytes 500M`, `--max-bytes 2GiB`: a whole number of bytes. */
function parseBytes(value: string, command: Command): number {
  const m = /^(\d+)\s*(?:([kKmMgG])(i?)B?|B)?$/.exec(value.trim());
  const unit = m === null ? undefined : UNITS[`${(m[2] ?? '').toUpperCase()}${m[3] === 'i' ? 'I' : ''}`];
  const n = m === null || unit === undefined ? NaN : Number(m[1]) * unit;
  if (!Number.isSafeInteger(n)) {
    throw new UsageError(`--max-bytes takes a number of bytes, optionally with a unit (500M, 2GiB), got "${value}"`, command);
  }
  return n;
}

function parseCount(value: string, command: Command): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw new UsageError(`--max-files takes a whole number of files, got "${value}"`, command);
  return n;
}

/**
 * `--max-bytes` and `--max-files`: the quota of what this process writes into the sandbox (or,
 * in direct mode, into the workspace). Not kept with the sandbox: each command that writes takes them.
 */
export function quotaOptions(parsed: Parsed, command: Command): FsQuota {
  const bytes = optionalString(parsed, 'max-bytes');
  const files = optionalString(parsed, 'max-files');
  return {
    ...(bytes === undefined ? {} : { maxBytes: parseBytes(bytes, command) }),
    ...(files === undefined ? {} : { maxFiles: parseCount(files, command) }),
  };
}

/** The quota as the startup line names it, or '' without one. */
export function describeQuota(quota: FsQuota): string {
  const parts = [
    ...(quota.maxBytes === undefined ? [] : [`${quota.maxBytes.toLocaleString('en-US')} bytes`]),
    ...(quota.maxFiles === undefined ? [] : [`${quota.maxFiles.toLocaleString('en-US')} files`]),
  ];
  return parts.length === 0 ? '' : `; quota ${parts.join(', ')}`;
}
