import { readFileSync } from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without declarations
import { REPORT_PATH, buildReport } from '../../scripts/api-report.mjs';

/** Undefined when the two agree; otherwise a unified diff and the command that updates the report. */
function drift(checkedIn: string, current: string): string | undefined {
  if (checkedIn === current) return undefined;
  const patch = createTwoFilesPatch('api/report.md (checked in)', 'api/report.md (from the code)', checkedIn, current, '', '', { context: 2 });
  return `The public API differs from api/report.md. If the change is meant, run "npm run api" and commit the report.\n${patch}`;
}

describe('the API report', () => {
  it('matches the exports of every entry point', () => {
    const message = drift(readFileSync(REPORT_PATH as string, 'utf8'), (buildReport as () => string)());
    if (message !== undefined) expect.fail(message);
  });

  it('names the command and shows the changed line when the surface moves', () => {
    const before = '## dsh-fs (1 names)\n\n### createFs (function)\n';
    const message = drift(before, before.replace('createFs', 'createFileSystem'));
    expect(message).toMatch(/npm run api/);
    expect(message).toMatch(/^-### createFs \(function\)$/m);
    expect(message).toMatch(/^\+### createFileSystem \(function\)$/m);
    expect(drift(before, before)).toBeUndefined();
  });
});
