import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can. CI installs chromium. */
export const noBrowser = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (apt-get install -y chromium)`;

/**
 * Headless Debian chromium with no traffic of its own. Playwright starts it with a fresh
 * profile in a temporary directory of its own and removes it on close.
 */
export async function launch(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const { chromium } = await import('playwright-core');
  const args = ['--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
  // As root chromium refuses to start with its sandbox.
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args });
  return { browser, close: () => browser.close() };
}

/** The hunk element of a hunk id. */
export const hunkOf = (page: Page, id: string) => page.locator(`.hunk[data-id="${id}"]`);
