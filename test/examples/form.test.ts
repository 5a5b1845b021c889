/**
 * The order-form example (examples/form) in Chromium against the real
 * service: the page, served on its own origin by the example's server,
 * checks the order as the user types with the client's local validator,
 * shows the server's messages next to the inputs their fieldPath names,
 * sends no validation request to the service, and runs a newly published
 * ruleset version without a reload.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFormServer, type FormConfig, type FormServer } from '../../examples/form/server.ts';
import { ORDER_RULES, setUpFormExample } from '../../examples/form/setup.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser, openConsole, screenshot, seriousAccessibilityViolations, type ConsoleView } from '../support/browser.ts';
import { ok } from '../support/expect-response.ts';


let t: TestApp;
let browser: Browser;
let form: FormServer;
let view: ConsoleView;
let page: Page;
/** Requests that reached the service's validation routes, as the service saw them. */
const validationRequests: string[] = [];
/** Requests the page sent to validation routes, as the browser saw them. */
const pageValidationRequests: string[] = [];

/** The list of messages shown next to an input (its aria-describedby), by the input's id. */
function messages(inputId: string) {
  return page.locator(`#${inputId}-messages`);
}

beforeAll(async () => {
  [t, browser] = await Promise.all([
    startTestApp({
      beforeReady: (app) => {
        app.addHook('onRequest', (request, _reply, done) => {
          if (request.url.includes('/validation/')) validationRequests.push(request.url);
          done();
        });
      },
    }),
    launchBrowser(),
  ]);
  // The page's origin is known once its server listens (port 0): the setup, which allows that origin, comes after.
  const config: FormConfig = { serviceUrl: t.baseUrl, tenantId: t.tenantId, context: 'orders', clientKey: '', publicKey: '' };
  form = await startFormServer({ port: 0, config });
  // Another port: another origin, so the browser asks the service for CORS, and the tenant allows exactly this one.
  expect(new URL(form.url).origin).not.toBe(new URL(t.baseUrl).origin);
  const setup = await setUpFormExample({ serviceUrl: t.baseUrl, tenantId: t.tenantId, adminKey: t.adminKey, context: 'orders', origin: form.url });
  expect(setup.rulesetVersion).toBe(1);
  config.clientKey = setup.clientKey;
  config.publicKey = setup.publicKey;
  expect((await ok(t.request('GET', '/api/v1/tenant'))).corsOrigins).toEqual([new URL(form.url).origin]);
  expect((await ok(t.request('GET', '/api/v1/contexts/orders/settings'))).localValidation).toBe(true);
  view = await openConsole(browser, form.url, '/');
  page = view.page;
  page.on('request', (request) => {
    if (request.url().includes('/validation/')) pageValidationRequests.push(request.url());
  });
});
afterAll(async () => {
  await view?.close();
  await browser?.close();
  await form?.close();
  await t?.close();
});

describe('the order form example', () => {
  it('shows the server\'s messages next to the inputs as the user types, without asking the service', async () => {
    await expect.poll(() => page.getByRole('status').first().textContent(), { timeout: 15_000 }).toContain('rules version 1 of “orders”');
    await page.getByLabel('Customer email').fill('jane.example.com');
    await page.getByLabel('Country').selectOption('US');
    await page.getByLabel('Quantity', { exact: true }).fill('0');
    await page.getByLabel('Amount').fill('25000');
    await page.getByLabel('Line 1 article number').fill('A-1');
    await page.getByLabel('Line 1 quantity').fill('2');
    await page.getByLabel('Line 2 article number').fill('B-2');
    await page.getByLabel('Line 2 quantity').fill('-1');

    await expect.poll(() => messages('email').textContent()).toBe('Enter an email address like name@example.com');
    expect(await messages('country').textContent()).toBe('We deliver to Germany, France and the Netherlands only');
    expect(await messages('quantity').textContent()).toBe('Quantity 0 is not between 1 and 100');
    expect(await messages('amount').textContent()).toBe('Amount 25000 exceeds 10000');
    expect(await messages('item-1-qty').textContent()).toBe('Line 2: quantity -1 is not a positive whole number');
    expect(await messages('item-0-qty').textContent()).toBe('');
    expect(await page.getByLabel('Amount').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Line 1 quantity').getAttribute('aria-invalid')).toBeNull();
    await screenshot(page, 'example-form-invalid');

    // Fixing a value clears its message at once.
    await page.getByLabel('Customer email').fill('jane@example.com');
    await expect.poll(() => messages('email').textContent()).toBe('');
    expect(await page.getByLabel('Customer email').getAttribute('aria-invalid')).toBeNull();

    expect(validationRequests).toEqual([]);
    expect(pageValidationRequests).toEqual([]);
    expect(view.pageErrors).toEqual([]);
    expect(view.cspViolations).toEqual([]);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
  });

  it('runs a newly published version without a reload, with its new message', async () => {
    await page.evaluate('window.__sameDocument = true');
    const rules = await ok(t.request('GET', '/api/v1/rules?context=orders'));
    const amountRule = rules.items.find((rule: { code: string }) => rule.code === 'AMOUNT_MAX');
    await ok(t.request('PUT', `/api/v1/rules/${amountRule.id}`, {
      body: {
        ...ORDER_RULES.find((rule) => rule.code === 'AMOUNT_MAX'),
        expression: '$value <= 5000', message: 'Amount {{ $value }} is over the new limit of 5000', version: amountRule.version,
      },
    }));
    const published = await ok(t.request('POST', '/api/v1/contexts/orders/publish', { body: { note: 'lower limit' } }));
    expect(published.rulesetVersion).toBe(2);

    await expect.poll(() => page.locator('#ruleset').textContent(), { timeout: 15_000 }).toContain('rules version 2 of “orders”');
    await expect.poll(() => messages('amount').textContent()).toBe('Amount 25000 is over the new limit of 5000');
    await page.getByLabel('Amount').fill('6000');
    await expect.poll(() => messages('amount').textContent()).toBe('Amount 6000 is over the new limit of 5000');
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    await screenshot(page, 'example-form-new-version');

    // A valid order passes; still no request to a validation route.
    await page.getByLabel('Amount').fill('4000');
    await page.getByLabel('Country').selectOption('NL');
    await page.getByLabel('Quantity', { exact: true }).fill('3');
    await page.getByLabel('Line 2 quantity').fill('1');
    await page.getByRole('button', { name: 'Check order' }).click();
    await expect.poll(() => page.locator('#outcome').textContent()).toBe('The order passes every rule.');
    expect(validationRequests).toEqual([]);
    expect(pageValidationRequests).toEqual([]);
    expect(view.pageErrors).toEqual([]);
  });
});
