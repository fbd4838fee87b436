/**
 * Figures collected by each section of the reliability suite and printed as a summary at the end
 * of its file. Each test also asserts its own zeros; the tally only reports.
 */

/**
 * Sample sizes: `quick` with DSH_FS_SCALE=quick (`npm test` leaves the suite out), `full` with
 * DSH_FS_SCALE=full (`npm run test:full`, which CI runs), `heavy` with DSH_FS_HEAVY=1 (see docs/RELIABILITY.md).
 */
export type Scale = 'quick' | 'full' | 'heavy';
export const SCALE: Scale =
  process.env.DSH_FS_HEAVY === '1' ? 'heavy' : process.env.DSH_FS_SCALE === 'full' ? 'full' : 'quick';
export const HEAVY = SCALE === 'heavy';

/** The sample size for this run's scale; `quick` defaults to `full` where the full size is cheap. */
export const size = (full: number, heavy: number, quick = full): number =>
  SCALE === 'heavy' ? heavy : SCALE === 'full' ? full : quick;

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

export type Section = 'concurrency' | 'out-of-band' | 'faults' | 'bad input' | 'permissions' | 'limits';

function parts(section: Section): string[] {
  const t = tally;
  switch (section) {
    case 'concurrency':
      return [
        `${n(t.schedules)} schedules (${n(t.toolCalls)} tool calls: ${n(t.successes)} ok, ${n(t.staleRefusals)} FS_STALE_VERSION, ${n(t.notObservedRefusals)} FS_NOT_OBSERVED)`,
        `${n(t.lostUpdates)} lost updates`,
        `${n(t.tornReads)} torn reads`,
        `${n(t.unexpectedErrors)} unexpected errors`,
      ];
    case 'out-of-band':
      return [
        `${n(t.rewrites)} out-of-band rewrites (${n(t.changedRewrites)} changed, ${n(t.identicalRewrites)} identical, ${n(t.midWriteRewrites)} mid-write)`,
        `${n(t.missedStale)} missed stale writes`,
        `${n(t.falseStale)} false stale results`,
      ];
    case 'faults':
      return [
        `${n(t.faults)} injected faults (targets left old ${n(t.faultsOldContent)}, new ${n(t.faultsNewContent)}; failures reported after publication ${n(t.faultsReportedAfterPublish)}; overlay states saved but reported failed ${n(t.overlaySavedButFailed)})`,
        `${n(t.tornFiles)} torn files`,
        `${n(t.tempsLeft)} temp files left`,
        `${n(t.leakedHandles)} leaked descriptors`,
        `${n(t.locksHeld)} locks held`,
        `${n(t.uncodedErrors)} errors without a code`,
      ];
    case 'bad input':
      return [
        `${n(t.fuzzedCalls)} fuzzed tool calls`,
        `${n(t.unstructured)} unstructured results`,
        `${n(t.unsettled)} calls that never settled`,
        `${n(t.escapes)} escapes`,
        `${n(t.badFiles)} hostile files`,
        `${n(t.growingReads)} reads of a growing file`,
      ];
    case 'permissions':
      return [`${n(t.permissionCases)} permission cases, ${n(t.permissionViolations)} violations`];
    case 'limits':
      return [`${n(t.limitCases)} disk-full/file-size cases`];
  }
}

/** One line with the figures of `section`, printed at the end of its test file. */
export function summary(section: Section): string {
  const skipped = tally.skipped.length > 0 ? `; skipped: ${tally.skipped.join('; ')}` : '';
  return `reliability, ${section} (${SCALE}): ${parts(section).join(', ')}${skipped}`;
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
