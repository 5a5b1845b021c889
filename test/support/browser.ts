/**
 * The console's browser tests: Debian's Chromium driven by playwright-core,
 * headless, on a fresh profile, against the real service.
 *
 * - `launchBrowser()` starts Chromium (`CHROMIUM_PATH`, default
 *   /usr/bin/chromium; .ci/run installs it when missing).
 * - `openConsole(browser, baseUrl)` opens /console in a new browser context
 *   and watches the page: every dialog (alert, confirm, prompt) is recorded
 *   and dismissed, as are page errors and content-security-policy
 *   violations, so a test can assert that hostile text ran nothing.
 * - `signIn`, `screenshot` (to .tmp/console-screenshots/) and
 *   `seriousAccessibilityViolations` (axe-core run in the page).
 *
 * @example
 * const browser = await launchBrowser();
 * const view = await openConsole(browser, t.baseUrl);
 * await signIn(view.page, t.tenantId, t.adminKey);
 * expect(await seriousAccessibilityViolations(view.page)).toEqual([]);
 */
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where tests save their screenshots (ignored by git). */
export const SCREENSHOT_DIR = path.join(ROOT, '.tmp', 'console-screenshots');

/** The flags the console's tests run Chromium with: headless, and nothing that reaches the network by itself. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Starts headless Chromium on a fresh profile. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
}

/** What happened in a page that a test should know about. */
export interface ConsoleView {
  readonly page: Page;
  /** Messages of alert/confirm/prompt dialogs that opened (each was dismissed). */
  readonly dialogs: string[];
  /** Uncaught errors in the page. */
  readonly pageErrors: string[];
  /** Content-security-policy violations the page reported ("<directive> <blocked URI>"). */
  readonly cspViolations: string[];
  /** Requests the page made to another origin. */
  readonly foreignRequests: string[];
  /** Paths of the service's answers of 404 to the page's own requests (a favicon it never offered, a missing asset). */
  readonly notFound: string[];
  /** Closes the page's browser context. */
  close(): Promise<void>;
}

/**
 * Opens the console at `<baseUrl>/console` (or `path` under baseUrl) in a
 * new browser context, and waits for the page to render.
 */
export async function openConsole(browser: Browser, baseUrl: string, consolePath = '/console'): Promise<ConsoleView> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  // A control that never appears fails the test with its locator, well before the test's own timeout.
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];
  const foreignRequests: string[] = [];
  const notFound: string[] = [];
  const origin = new URL(baseUrl).origin;
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:')) foreignRequests.push(url);
  });
  page.on('response', (response) => {
    if (response.status() === 404 && response.url().startsWith(origin)) notFound.push(new URL(response.url()).pathname);
  });
  await page.exposeFunction('__reportCspViolation', (text: string) => cspViolations.push(text));
  // Scripts added by the test runner are not the page's: the policy does not stop this one.
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => window.__reportCspViolation(e.violatedDirective + ' ' + e.blockedURI));",
  });
  await page.goto(baseUrl + consolePath);
  await page.locator('h1').first().waitFor();
  return { page, dialogs, pageErrors, cspViolations, foreignRequests, notFound, close: () => context.close() };
}

/** Signs in through the form and waits for the contexts page. */
export async function signIn(page: Page, tenant: string, key: string): Promise<void> {
  await page.getByLabel('Tenant').fill(tenant);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/**
 * Saves a PNG of the page (or of one part of it, `of`) as
 * `<SCREENSHOT_DIR>/<name>.png`; answers its path.
 */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean; of?: Locator } = {}): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  if (options.of !== undefined) await options.of.screenshot({ path: file });
  else await page.screenshot({ path: file, fullPage: options.fullPage ?? true });
  return file;
}

let axeSource: string | undefined;

/** One violation axe-core found: its rule, impact and where. */
export interface AccessibilityViolation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core in the page (evaluated by the test runner, so the page's
 * policy does not apply to it) and answers the serious and critical
 * violations.
 */
export async function seriousAccessibilityViolations(page: Page): Promise<AccessibilityViolation[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Strings, not functions: they run in the page, whose globals this file's type-check does not know.
  if (await page.evaluate('typeof window.axe') !== 'object') await page.evaluate(axeSource);
  const violations = await page.evaluate<AccessibilityViolation[]>(`axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations.map((violation) => ({
    id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.map((node) => node.target.join(' ')),
  })))`);
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}
