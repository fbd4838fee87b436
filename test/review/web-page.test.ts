import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startReviewServer, type ReviewServer } from '../../src/review/web/server.js';
import { FakeReview, hunk, sampleFiles } from './web-fake.js';
import { hunkOf, launch, noBrowser } from './web-browser.js';

describe.skipIf(noBrowser !== undefined)(`the review page in chromium${noBrowser ? ` (skipped: ${noBrowser})` : ''}`, () => {
  let browser: Browser;
  let close: () => Promise<void>;
  beforeAll(async () => ({ browser, close } = await launch()));
  afterAll(() => close?.());

  async function open(review: FakeReview): Promise<{ page: Page; server: ReviewServer; done: () => Promise<void> }> {
    const server = await startReviewServer(review);
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(server.url);
    await page.locator('.hunk').first().waitFor();
    return {
      page,
      server,
      done: async () => {
        expect(errors).toEqual([]);
        await context.close();
        await server.close();
      },
    };
  }

  it('lists the files with counts and leaves the token out of the address', async () => {
    const { page, server, done } = await open(new FakeReview(sampleFiles()));
    expect(page.url()).toBe(`http://127.0.0.1:${server.port}/`);
    expect(await page.locator('#file-list li').allInnerTexts()).toEqual([
      expect.stringMatching(/src\/api\.ts\s*\+2\s*\u22122\s*2 hunks/),
      expect.stringMatching(/notes\.md\s*\+2\s*\u22120\s*1 hunk/),
      expect.stringMatching(/logo\.png\s*\+0\s*\u22120\s*0 hunks/),
    ]);
    expect(await page.locator('.file[data-path="logo.png"] .note').innerText()).toContain('binary added');
    // The changed part of a paired line is marked, in both views.
    expect(await hunkOf(page, 'h-bottom').locator('td.del .chg').innerText()).toBe('1');
    expect(await hunkOf(page, 'h-bottom').locator('td.add .chg').innerText()).toBe('2');
    await page.selectOption('#view', 'split');
    expect(await hunkOf(page, 'h-bottom').locator('table.split tr').count()).toBe(3);
    await done();
  });

  it('rejects one hunk with a reason by keyboard, accepts another by click and applies both in one decision', async () => {
    const review = new FakeReview(sampleFiles());
    const { page, done } = await open(review);
    await page.keyboard.press('j');
    await expect.poll(() => hunkOf(page, 'h-top').getAttribute('class')).toContain('current');
    await page.keyboard.press('r');
    await page.keyboard.type('keep the old API');
    await page.keyboard.press('Enter');
    await page.keyboard.press('j');
    await expect.poll(() => hunkOf(page, 'h-bottom').getAttribute('class')).toContain('current');
    await hunkOf(page, 'h-bottom').getByRole('button', { name: 'Accept' }).click();
    expect(await hunkOf(page, 'h-top').getAttribute('class')).toContain('rejected');
    expect(review.calls).toEqual([]);
    await page.click('#commit');
    await page.locator('#status').filter({ hasText: 'Applied: 1 accepted, 1 rejected.' }).waitFor();
    expect(review.calls).toEqual([[{ id: 'h-top', decision: 'reject', reason: 'keep the old API' }, { id: 'h-bottom', decision: 'accept' }]]);
    await page.locator('.file[data-path="src/api.ts"]').waitFor({ state: 'detached' });
    expect(await page.locator('.hunk').count()).toBe(1);
    expect(await review.pendingFeedback()).toEqual([{ path: 'src/api.ts', lines: '1', reason: 'keep the old API', id: 'h-top' }]);
    await done();
  });

  it('decides a whole file, and shows a conflict of the folder in place', async () => {
    const review = new FakeReview(sampleFiles());
    review.conflictPaths.add('notes.md');
    const { page, done } = await open(review);
    const notes = page.locator('.file[data-path="notes.md"]');
    await notes.getByRole('button', { name: 'Accept file' }).click();
    await page.locator('.file[data-path="logo.png"]').getByRole('button', { name: 'Reject file' }).click();
    await page.click('#commit');
    await notes.locator('.conflict').waitFor();
    expect(await notes.locator('.conflict').innerText()).toContain('notes.md changed in the folder (FS_CONFLICT)');
    expect(review.calls).toEqual([[{ id: 'f-notes', decision: 'accept' }, { id: 'f-logo', decision: 'reject' }]]);
    await page.locator('.file[data-path="logo.png"]').waitFor({ state: 'detached' });
    await done();
  });

  it('follows the sandbox: a change shows up without a reload, decisions on hunks that went are dropped', async () => {
    const review = new FakeReview(sampleFiles());
    const { page, done } = await open(review);
    await hunkOf(page, 'h-notes').getByRole('button', { name: 'Accept' }).click();
    expect(await page.locator('#commit').isEnabled()).toBe(true);
    review.replace([...sampleFiles().slice(0, 1), { path: 'late.txt', status: 'added', kind: 'text', id: 'f-late', hunks: [hunk('h-late', 0, ['+late'])] }]);
    await hunkOf(page, 'h-late').waitFor();
    expect(await page.locator('#commit').isDisabled()).toBe(true);
    expect(await page.locator('#summary').innerText()).toContain('0 decided');
    await done();
  });

  it('applies nothing when a decided hunk went stale, and says so', async () => {
    const review = new FakeReview(sampleFiles());
    const { page, done } = await open(review);
    await hunkOf(page, 'h-top').getByRole('button', { name: 'Accept' }).click();
    await hunkOf(page, 'h-notes').getByRole('button', { name: 'Reject' }).click();
    // Changed by another process: the page has not heard of it.
    review.replace(sampleFiles().slice(1), true);
    await page.click('#commit');
    await page.locator('#status.error').filter({ hasText: 'Nothing applied: unknown or stale ids: h-top' }).waitFor();
    expect(review.calls).toEqual([]);
    await hunkOf(page, 'h-top').waitFor({ state: 'detached' });
    await done();
  });

  it('shows markup in a path or a line as text, never as markup', async () => {
    const evil = '<img src=x onerror="document.title=1">';
    const review = new FakeReview([{ path: `${evil}.txt`, status: 'added', kind: 'text', id: 'f-evil', hunks: [hunk('h-evil', 0, [`+${evil}`])] }]);
    const { page, done } = await open(review);
    expect(await hunkOf(page, 'h-evil').locator('td.code').innerText()).toBe(evil);
    expect(await page.locator('.file .path').innerText()).toBe(`${evil}.txt`);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.title()).toBe('dsh-fs review');
    await done();
  });

  it('reloads the changes on request (a sandbox changed by another process is not in the feed)', async () => {
    const review = new FakeReview(sampleFiles());
    const { page, done } = await open(review);
    review.replace(sampleFiles().slice(2), true);
    await page.click('#reload');
    await page.locator('.hunk').first().waitFor({ state: 'detached' });
    expect(await page.locator('#file-list li').count()).toBe(1);
    await done();
  });

  it('writes its screenshot for the docs when DSH_FS_REVIEW_SCREENSHOT names a file', async () => {
    const target = process.env.DSH_FS_REVIEW_SCREENSHOT;
    if (target === undefined) return;
    const { page, done } = await open(new FakeReview(sampleFiles()));
    await page.setViewportSize({ width: 1100, height: 650 });
    await page.keyboard.press('j');
    await page.keyboard.press('r');
    await page.keyboard.type('keep the old API');
    await page.keyboard.press('Enter');
    await hunkOf(page, 'h-bottom').getByRole('button', { name: 'Accept' }).click();
    await page.screenshot({ path: target });
    await done();
  });
});
