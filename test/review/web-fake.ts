import { FsError } from '../../src/seam/errors.js';
import type { Review, ReviewDecision, ReviewFeedback, ReviewFile, ReviewHunk, ReviewResult } from '../../src/review/types.js';

/**
 * A review model kept in memory, for testing the page and its server apart from the sandbox:
 * decided hunks leave the list, rejected reasons become feedback, every call is recorded.
 */
export class FakeReview implements Review {
  readonly calls: ReviewDecision[][] = [];
  readonly folder: string[] = [];
  private readonly feedback: ReviewFeedback[] = [];
  private readonly listeners = new Set<() => void>();
  conflictPaths = new Set<string>();

  constructor(private list: ReviewFile[]) {}

  get listenerCount(): number {
    return this.listeners.size;
  }

  async files(paths?: readonly string[]): Promise<ReviewFile[]> {
    return this.list.filter((f) => paths === undefined || paths.includes(f.path));
  }

  async decide(decisions: readonly ReviewDecision[]): Promise<ReviewResult> {
    const known = new Set(this.list.flatMap((f) => [f.id, ...f.hunks.map((h) => h.id)]));
    const unknown = decisions.filter((d) => !known.has(d.id)).map((d) => d.id);
    if (unknown.length > 0) throw new FsError('FS_STALE_VERSION', `unknown or stale ids: ${unknown.join(', ')}`);
    this.calls.push([...decisions]);
    const accepted: string[] = [], rejected: string[] = [];
    const conflicts: { path: string; code: string; message: string }[] = [];
    for (const d of decisions) {
      const file = this.list.find((f) => f.id === d.id || f.hunks.some((h) => h.id === d.id))!;
      if (d.decision === 'accept' && this.conflictPaths.has(file.path)) {
        if (!conflicts.some((c) => c.path === file.path)) conflicts.push({ path: file.path, code: 'FS_CONFLICT', message: `${file.path} changed in the folder` });
        continue;
      }
      (d.decision === 'accept' ? accepted : rejected).push(d.id);
      if (d.decision === 'accept') this.folder.push(d.id);
      if (d.decision === 'reject' && d.reason !== undefined) this.feedback.push({ path: file.path, lines: '1', reason: d.reason, id: d.id });
      this.remove(d.id);
    }
    this.changed();
    return { accepted, rejected, conflicts };
  }

  accept(ids: readonly string[]): Promise<ReviewResult> {
    return this.decide(ids.map((id) => ({ id, decision: 'accept' })));
  }

  reject(ids: readonly string[], reason?: string): Promise<ReviewResult> {
    return this.decide(ids.map((id) => ({ id, decision: 'reject', reason })));
  }

  async pendingFeedback(): Promise<readonly ReviewFeedback[]> {
    return [...this.feedback];
  }

  watch(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The agent changed the sandbox: the new list, then the watchers hear it (unless `quiet`, as for another process's change). */
  replace(list: ReviewFile[], quiet = false): void {
    this.list = list;
    if (!quiet) this.changed();
  }

  private remove(id: string): void {
    this.list = this.list
      .filter((f) => f.id !== id)
      .map((f): ReviewFile => ({ ...f, hunks: f.hunks.filter((h) => h.id !== id) }))
      .filter((f) => f.kind !== 'text' || f.hunks.length > 0);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

export function hunk(id: string, oldStart: number, lines: string[]): ReviewHunk {
  const oldLines = lines.filter((l) => l[0] !== '+').length;
  const newLines = lines.filter((l) => l[0] !== '-').length;
  return { id, oldStart, oldLines, newStart: oldStart === 0 ? 1 : oldStart, newLines, lines };
}

/** Two distant changes in one file and a new second file. */
export function sampleFiles(): ReviewFile[] {
  return [
    {
      path: 'src/api.ts', status: 'modified', kind: 'text', id: 'f-api',
      hunks: [
        hunk('h-top', 1, [' // api', '-export function oldName() {', '+export function newName() {', '   return 1;']),
        hunk('h-bottom', 40, [' }', '-export const limit = 10;', '+export const limit = 20;', ' // end']),
      ],
    },
    { path: 'notes.md', status: 'added', kind: 'text', id: 'f-notes', hunks: [hunk('h-notes', 0, ['+# Notes', '+first line'])] },
    { path: 'logo.png', status: 'added', kind: 'binary', id: 'f-logo', hunks: [] },
  ];
}
