import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/*
 * Chromium from Debian's package driven by playwright-core (which never downloads a browser).
 * CHROMIUM_PATH overrides where it is; a missing browser fails the run, it is never skipped.
 */

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots of every main page, kept by CI as an artifact (git-ignored). */
export const SCREENSHOT_DIR = path.resolve('.artifacts', 'dashboard');

export const VIEWPORTS = {
  desktop: { width: 1366, height: 860 },
  phone: { width: 390, height: 844 },
} as const;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/**
 * A fresh browser profile (its own cookies) in a fixed zone and locale, so dates and amounts
 * render the same on every machine. Console errors, CSP violations included, and uncaught page
 * errors are collected: tests assert there were none.
 */
export async function newViewer(
  browser: Browser,
  baseUrl: string,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: VIEWPORTS.desktop,
    locale: 'en-US',
    timezoneId: 'Africa/Algiers',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // A refused request (401 before sign-in, the tests' own 4xx probes) is logged by Chromium
    // as a console error; those are answers, not faults of the page.
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) {
      problems.push(`console: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { context, page, problems };
}

/** One screenshot per viewport, full page, into SCREENSHOT_DIR. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize() ?? VIEWPORTS.desktop;
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    // Layout settles: the navigation slides in or out (200 ms), charts resize on a frame.
    await page.waitForTimeout(400);
    await page.screenshot({
      path: path.join(SCREENSHOT_DIR, `${name}-${label}.png`),
      fullPage: true,
    });
  }
  await page.setViewportSize(original);
}
