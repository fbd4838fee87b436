// The audit-log plugin: one record per tool call through the harness, appended to an AuditLog.
import { FsError, type FileSystem, type FsTarget } from '../seam/index.js';
import { ownerId, pathsNamed, redactArgs } from './audit-args.js';
import type { AuditLog, AuditPath, AuditRecord } from './audit-log.js';
import type { HarnessPluginObject } from './harness.js';
import type { ToolCallInfo } from './tools.js';

/** Where a record that could not be made or stored is reported; the call's result is unaffected. */
export type AuditErrorHandler = (error: unknown, info: { readonly tool: string }) => void;

export interface AuditPluginOptions {
  readonly log: AuditLog;
  /** Default: `console.warn`. */
  readonly onError?: AuditErrorHandler;
  /** The clock records are stamped with (default: the system's). */
  readonly now?: () => Date;
}

type Version = string | null | undefined;

/**
 * Records every call of `ctx.tools.execute`: the time it started, the owner, the tool, the
 * arguments with contents replaced by their size and digest, the outcome, and for each path the
 * arguments name its version before and after the call. A call never fails because of the log:
 * a failure to stat or to append goes to `onError`, and that call's record may be missing.
 */
export function auditPlugin(options: AuditPluginOptions): HarnessPluginObject {
  const { log } = options;
  if (typeof log !== 'object' || log === null || typeof log.append !== 'function') {
    throw new FsError('FS_INVALID_ARGUMENT', 'auditPlugin needs { log } with append(record) (e.g. createMemoryAuditLog())');
  }
  const onError = options.onError ?? defaultAuditError;
  const now = options.now ?? (() => new Date());
  const report = (error: unknown, tool: string) => {
    try {
      onError(error, { tool });
    } catch (handlerError) {
      defaultAuditError(handlerError, { tool });
    }
  };
  return {
    name: 'audit-log',
    apply(ctx) {
      ctx.tools.around(async (info, next) => {
        const time = now().toISOString();
        const targets = await targetsOf(info).catch((err: unknown) => (report(err, info.name), []));
        const before = await versions(info.fs, targets);
        const result = await next();
        try {
          const after = await versions(info.fs, targets);
          const paths: AuditPath[] = targets.map((t, i) => ({ path: t.targetKey, ...known('before', before[i]), ...known('after', after[i]) }));
          const owner = ownerId(info.owner);
          const record: AuditRecord = {
            time,
            ...(owner === undefined ? {} : { owner }),
            tool: info.name,
            args: redactArgs(info.args),
            outcome: result.isError ? result.error.code : 'ok',
            paths,
          };
          await log.append(record);
        } catch (err) {
          report(err, info.name);
        }
        return result;
      });
    },
  };
}

const known = (key: 'before' | 'after', v: Version) => (v === undefined ? {} : { [key]: v });

/** The targets of the paths the call names; a path that does not resolve (outside the root, malformed) is left out. */
async function targetsOf(info: ToolCallInfo): Promise<FsTarget[]> {
  const out: FsTarget[] = [];
  const seen = new Set<string>();
  for (const path of pathsNamed(info.name, info.args)) {
    const target = await info.fs.resolve(path, { cwd: info.cwd }).catch(() => undefined);
    if (target === undefined || seen.has(target.targetKey)) continue;
    seen.add(target.targetKey);
    out.push(target);
  }
  return out;
}

/** Each target's version: null when absent, undefined when it could not be read. */
function versions(fs: FileSystem, targets: readonly FsTarget[]): Promise<Version[]> {
  return Promise.all(
    targets.map((t) =>
      fs.stat(t).then(
        (info) => (info === undefined ? null : info.version),
        (err: unknown) => (err instanceof FsError && (err.code === 'FS_NOT_FOUND' || err.code === 'FS_NOT_DIRECTORY') ? null : undefined),
      ),
    ),
  );
}

function defaultAuditError(error: unknown, info: { tool: string }): void {
  const detail = error instanceof Error ? error.message : String(error);
  console.warn(`dsh-fs: the audit log could not record a ${info.tool} call (the call itself is unaffected): ${detail}`);
}
