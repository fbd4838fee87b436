import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createLocalFs } from '../../src/backends/local/index.js';
import { createOverlayFs } from '../../src/backends/overlay/index.js';
import { createHarness } from '../../src/harness/index.js';
import { openReview, reviewNotes, sandboxFeedback } from '../../src/review/index.js';
import { startReviewServer } from '../../src/review/web/server.js';
import { fsTools } from '../../src/tools/index.js';
import { hunkOf, launch, noBrowser } from './web-browser.js';

const numbered = (n: number, change: Record<number, string> = {}) =>
  Array.from({ length: n }, (_, i) => `${change[i + 1] ?? `line ${i + 1}`}\n`).join('');

describe.skipIf(noBrowser !== undefined)(`the review page over a real sandbox, in chromium${noBrowser ? ` (skipped: ${noBrowser})` : ''}`, () => {
  let browser: Browser;
  let close: () => Promise<void>;
  let dir: string;
  beforeAll(async () => {
    ({ browser, close } = await launch());
    dir = await mkdtemp(join(tmpdir(), 'dsh-fs-review-page-'));
  });
  afterAll(async () => {
    await close?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('reject one hunk with a reason, accept another, apply: the folder holds exactly the accepted hunk, the sandbox neither, the agent hears the reason', async () => {
    await writeFile(join(dir, 'a.txt'), numbered(30));
    await writeFile(join(dir, 'b.txt'), 'one\ntwo\n');
    const sandbox = await createOverlayFs({ lower: createLocalFs({ root: dir }) });
    const agent = createHarness({ fs: sandbox, plugins: [fsTools(), reviewNotes(sandboxFeedback(sandbox))] });
    const enc = new TextEncoder();
    await sandbox.writeBytes(await sandbox.resolve('a.txt'), enc.encode(numbered(30, { 3: 'changed 3', 25: 'changed 25' })));
    await sandbox.writeBytes(await sandbox.resolve('b.txt'), enc.encode('one\nTWO\n'));
    const review = openReview(sandbox);
    const [a] = await review.files();
    const [top, bottom] = a!.hunks;

    const server = await startReviewServer(review);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(server.url);
      await hunkOf(page, top!.id).waitFor();
      expect(await page.locator('.hunk').count()).toBe(3);
      await page.keyboard.press('j');
      await page.keyboard.press('r');
      await page.keyboard.type('keep the old API');
      await page.keyboard.press('Enter');
      await hunkOf(page, bottom!.id).getByRole('button', { name: 'Accept' }).click();
      await page.click('#commit');
      await page.locator('#status').filter({ hasText: 'Applied: 1 accepted, 1 rejected.' }).waitFor();
      await page.locator('.file[data-path="a.txt"]').waitFor({ state: 'detached' });
    } finally {
      await context.close();
      await server.close();
    }

    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe(numbered(30, { 25: 'changed 25' }));
    expect(await readFile(join(dir, 'b.txt'), 'utf8')).toBe('one\ntwo\n');
    expect((await review.files()).map((f) => f.path)).toEqual(['b.txt']);
    const next = await agent.tools.execute('read', { file_path: 'b.txt' }, { owner: 'agent' });
    expect(next.text).toContain('Note: a reviewer rejected your change to a.txt (lines 3) and reverted it in the sandbox: keep the old API');
    const after = await agent.tools.execute('read', { file_path: 'b.txt' }, { owner: 'agent' });
    expect(after.text).not.toContain('keep the old API');
  });
});
