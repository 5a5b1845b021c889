/**
 * Helpers of the browser tests of the console's pages (test/console/):
 * open a page of the console signed in, reach a control with the keyboard
 * alone, and check a page the way every page is checked (no serious
 * accessibility violation, nothing run that should not have, a
 * screenshot).
 *
 * @example
 * const view = await openSignedIn(browser, t, '#/contexts/loans/history');
 * await tabTo(view.page, 'Rollback');
 * await checkPage(view, 'history');
 */
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { openConsole, screenshot, seriousAccessibilityViolations, signIn, type ConsoleView } from './browser.ts';

/** Opens the console, signs in with the app's admin key and goes to `hash` (e.g. `#/audit`). */
export async function openSignedIn(browser: Browser, t: TestApp, hash = '#/'): Promise<ConsoleView> {
  const view = await openConsole(browser, t.baseUrl);
  // A step that does not happen fails within the test's time, naming the step.
  view.page.setDefaultTimeout(15_000);
  await signIn(view.page, t.tenantId, t.adminKey);
  await view.page.getByRole('heading', { name: 'Contexts' }).waitFor();
  if (hash !== '#/') await view.page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  return view;
}

/**
 * Presses Tab until the focused element is named `name` (its text or
 * aria-label), as a keyboard-only user would reach it; fails after
 * `limit` presses.
 */
export async function tabTo(page: Page, name: string, limit = 120): Promise<void> {
  const focusedName = '(() => { const e = document.activeElement; return e ? (e.getAttribute("aria-label") ?? e.textContent ?? "").trim() : ""; })()';
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate<string>(focusedName) === name) return;
  }
  throw new Error(`"${name}" was not reached with ${limit} presses of Tab`);
}

/** What every page must be: no serious accessibility violation, no page error, no policy violation, no dialog; then a screenshot. */
export async function checkPage(view: ConsoleView, name: string): Promise<void> {
  expect(await seriousAccessibilityViolations(view.page), name).toEqual([]);
  expect(view.pageErrors, name).toEqual([]);
  expect(view.cspViolations, name).toEqual([]);
  expect(view.dialogs, name).toEqual([]);
  expect(view.foreignRequests, name).toEqual([]);
  await screenshot(view.page, name);
}
