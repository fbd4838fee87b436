/**
 * Figures collected by every section of the reliability suite and printed as one summary at the
 * end of the run. Each test also asserts its own zeros; the tally only reports.
 */

/** `DSH_FS_HEAVY=1` multiplies every sample size (see docs/RELIABILITY.md). */
export const HEAVY = process.env.DSH_FS_HEAVY === '1';

/** `ci` in the default mode, `heavy` with DSH_FS_HEAVY=1. */
export const size = (ci: number, heavy: number): number => (HEAVY ? heavy : ci);

export const tally = {
  // concurrency
  schedules: 0,
  toolCalls: 0,
  successes: 0,
  staleRefusals: 0,
  notObservedRefusals: 0,
  lostUpdates: 0,
  tornReads: 0,
  unexpectedErrors: 0,
  // out-of-band changes
  rewrites: 0,
  changedRewrites: 0,
  identicalRewrites: 0,
  midWriteRewrites: 0,
  missedStale: 0,
  falseStale: 0,
  // fault injection
  faults: 0,
  faultsOldContent: 0,
  faultsNewContent: 0,
  faultsReportedAfterPublish: 0,
  tornFiles: 0,
  tempsLeft: 0,
  leakedHandles: 0,
  locksHeld: 0,
  uncodedErrors: 0,
  commitsRetried: 0,
  overlaySavedButFailed: 0,
  // bad input
  fuzzedCalls: 0,
  unstructured: 0,
  unsettled: 0,
  escapes: 0,
  badFiles: 0,
  growingReads: 0,
  // permissions and limits
  permissionCases: 0,
  permissionViolations: 0,
  limitCases: 0,
  skipped: [] as string[],
};

const n = (x: number) => x.toLocaleString('en-US');

export function summary(): string {
  const t = tally;
  const parts = [
    `${n(t.schedules)} schedules (${n(t.toolCalls)} tool calls: ${n(t.successes)} ok, ${n(t.staleRefusals)} FS_STALE_VERSION, ${n(t.notObservedRefusals)} FS_NOT_OBSERVED)`,
    `${n(t.lostUpdates)} lost updates`,
    `${n(t.tornReads)} torn reads`,
    `${n(t.unexpectedErrors)} unexpected errors`,
    `${n(t.rewrites)} out-of-band rewrites (${n(t.changedRewrites)} changed, ${n(t.identicalRewrites)} identical, ${n(t.midWriteRewrites)} mid-write)`,
    `${n(t.missedStale)} missed stale writes`,
    `${n(t.falseStale)} false stale results`,
    `${n(t.faults)} injected faults (targets left old ${n(t.faultsOldContent)}, new ${n(t.faultsNewContent)}; failures reported after publication ${n(t.faultsReportedAfterPublish)}; overlay states saved but reported failed ${n(t.overlaySavedButFailed)})`,
    `${n(t.tornFiles)} torn files`,
    `${n(t.tempsLeft)} temp files left`,
    `${n(t.leakedHandles)} leaked descriptors`,
    `${n(t.locksHeld)} locks held`,
    `${n(t.uncodedErrors)} errors without a code`,
    `${n(t.fuzzedCalls)} fuzzed tool calls`,
    `${n(t.unstructured)} unstructured results`,
    `${n(t.unsettled)} calls that never settled`,
    `${n(t.escapes)} escapes`,
    `${n(t.badFiles)} hostile files`,
    `${n(t.growingReads)} reads of a growing file`,
    `${n(t.permissionCases)} permission cases, ${n(t.permissionViolations)} violations`,
    `${n(t.limitCases)} disk-full/file-size cases`,
  ];
  const skipped = t.skipped.length > 0 ? `; skipped: ${t.skipped.join('; ')}` : '';
  return `reliability${HEAVY ? ' (heavy)' : ''}: ${parts.join(', ')}${skipped}`;
}

/**
 * Fails (rejects) when `p` has not settled after `ms`: a call that never returns is a failure,
 * whatever it would have returned. The bound is generous; it says nothing about speed.
 */
export async function settleWithin<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  const signal = AbortSignal.timeout(ms);
  let onAbort: (() => void) | undefined;
  const timeout = new Promise<never>((_, reject) => {
    onAbort = () => {
      tally.unsettled++;
      reject(new Error(`${what} did not settle within ${ms} ms`));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
