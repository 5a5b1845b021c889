/**
 * The console's shell in a real browser against the real service: the page
 * and its headers, signing in and out (also with the keyboard alone), a
 * validator key told it cannot manage rules, the contexts list with its
 * pages and links, and no serious accessibility violation on any of it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser, openConsole, screenshot, seriousAccessibilityViolations, signIn } from '../support/browser.ts';

let t: TestApp;
let browser: Browser;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
  // 23 contexts: two pages of the list; "orders" with a published rule and a draft.
  const rule = (context: string, code: string) => ({ context, code, name: `${code} rule`, fieldPath: 'total', expression: '$value <= 100' });
  for (let i = 0; i < 22; i++) {
    expect((await t.request('POST', '/api/v1/rules', { body: rule(`ctx-${String(i).padStart(2, '0')}`, 'LIMIT') })).status).toBe(201);
  }
  expect((await t.request('POST', '/api/v1/rules', { body: rule('orders', 'TOTAL_MAX') })).status).toBe(201);
  expect((await t.request('POST', '/api/v1/contexts/orders/publish', { body: { note: 'first' } })).status).toBe(200);
  expect((await t.request('POST', '/api/v1/rules', { body: rule('orders', 'TOTAL_MIN') })).status).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('/console over HTTP', () => {
  it('serves the page, never cached, with a policy that runs only the service\'s own scripts', async () => {
    for (const pagePath of ['/console', '/console/']) {
      const response = await t.request('GET', pagePath, { key: null, tenant: null });
      expect(response.status, pagePath).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const policy = response.headers.get('content-security-policy') ?? '';
      for (const directive of ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "connect-src 'self'"]) {
        expect(policy).toContain(directive);
      }
      expect(policy).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      // No inline script: every script comes from a file of the service.
      expect(response.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
      expect(response.text).not.toMatch(/https?:\/\//);
    }
  });

  it('serves the hashed assets immutable, gzipped when asked, under the same policy', async () => {
    const page = (await t.request('GET', '/console', { key: null, tenant: null })).text;
    const assets = [...page.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((match) => match[1]);
    expect(assets).toEqual([expect.stringMatching(/^\/console\/assets\/console-[A-Z0-9]+\.css$/), expect.stringMatching(/^\/console\/assets\/console-[A-Z0-9]+\.js$/)]);
    for (const asset of assets) {
      const response = await fetch(t.baseUrl + asset, { headers: { 'accept-encoding': 'gzip' } });
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('content-encoding')).toBe('gzip');
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^(application|text)\/javascript/ : /^text\/css/);
      expect((await response.text()).length).toBeGreaterThan(100);
    }
    const missing = await t.request('GET', '/console/assets/console-NOTTHERE.js', { key: null, tenant: null });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NOT_FOUND');
  });

  it('leaves the API\'s answers without the console\'s headers', async () => {
    const response = await t.request('GET', '/api/v1/contexts');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBeNull();
  });

  it('says to run npm run build when the console was not built', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'rules-console-none-'));
    const bare = await startTestApp({ env: { CONSOLE_DIR: empty } });
    try {
      const response = await bare.request('GET', '/console', { key: null, tenant: null });
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ code: 'NOT_FOUND', detail: expect.stringContaining('npm run build') });
    } finally {
      await bare.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('the console in Chromium', () => {
  it('signs in with an admin key, keeps it in sessionStorage only, and signs out', async () => {
    const view = await openConsole(browser, t.baseUrl);
    try {
      const { page } = view;
      await expect.poll(() => page.title()).toBe('Sign in · Rules console');
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'sign-in');

      await signIn(page, t.tenantId, t.adminKey);
      await page.getByRole('heading', { name: 'Contexts' }).waitFor();
      const stored: any = await page.evaluate(`({
        session: Object.values(sessionStorage).join(), local: localStorage.length, cookies: document.cookie, url: location.href,
      })`);
      expect(stored.session).toContain(t.adminKey);
      expect(stored).toMatchObject({ local: 0, cookies: '' });
      expect(stored.url).not.toContain(t.adminKey);

      // A reload keeps the session of the tab.
      await page.reload();
      await page.getByRole('heading', { name: 'Contexts' }).waitFor();

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Signed out.');
      expect(view.pageErrors).toEqual([]);
      expect(view.cspViolations).toEqual([]);
      expect(view.foreignRequests).toEqual([]);
      // No request of the page's own is answered 404. A browser with tabs asks for /favicon.ico unless
      // the page names an icon (headless Chromium never asks): the page names one the policy allows.
      expect(view.notFound).toEqual([]);
      expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:/);
    } finally {
      await view.close();
    }
  });

  it('signs in with the keyboard alone', async () => {
    const view = await openConsole(browser, t.baseUrl);
    try {
      const { page } = view;
      // The page's heading has the focus; Tab walks the form in order.
      await page.keyboard.press('Tab');
      await page.keyboard.type(t.tenantId);
      await page.keyboard.press('Tab');
      await page.keyboard.type(t.adminKey);
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement?.textContent')).toBe('Sign in');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Contexts' }).waitFor();
      // The new page's heading takes the focus, so reading starts there (in an effect, a moment after it is shown).
      await expect.poll(() => page.evaluate('document.activeElement?.tagName')).toBe('H1');
    } finally {
      await view.close();
    }
  });

  it('tells a validator key it cannot manage rules, and keeps nothing', async () => {
    const created = await t.request('POST', '/api/v1/api-keys', { body: { name: 'checkout', role: 'validator' } });
    expect(created.status).toBe(201);
    const view = await openConsole(browser, t.baseUrl);
    try {
      const { page } = view;
      await page.getByLabel('Tenant').fill(t.tenantId);
      await page.getByLabel('API key').fill(created.body.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('cannot manage rules');
      expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
      await screenshot(page, 'sign-in-validator-key');
    } finally {
      await view.close();
    }
  });

  it('shows a wrong key refused in the API\'s words', async () => {
    const view = await openConsole(browser, t.baseUrl);
    try {
      const { page } = view;
      await page.getByLabel('Tenant').fill(t.tenantId);
      await page.getByLabel('API key').fill('not-a-key-of-anyone-at-all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('A valid X-Api-Key and the X-Tenant-Id of its tenant are required.');
    } finally {
      await view.close();
    }
  });

  it('lists the contexts a page at a time with live version, drafts and last change; a context is a link to its rules', async () => {
    const view = await openConsole(browser, t.baseUrl);
    try {
      const { page } = view;
      await signIn(page, t.tenantId, t.adminKey);
      const table = page.getByRole('table');
      await table.getByRole('link', { name: 'ctx-00', exact: true }).waitFor();
      expect(await table.getByRole('link').count()).toBe(20);
      await expect.poll(() => page.getByText('Page 1 of 2').count()).toBe(1);
      // The last change arrives from the audit trail.
      await expect.poll(() => table.locator('time').count()).toBe(20);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'contexts');

      await page.getByRole('button', { name: 'Next page' }).click();
      await table.getByRole('link', { name: 'orders', exact: true }).waitFor();
      expect(await table.getByRole('link').count()).toBe(3);
      const orders = table.getByRole('row').filter({ has: page.getByRole('link', { name: 'orders', exact: true }) });
      // The last change arrives a moment after the page: from the audit trail, for the contexts shown.
      await expect.poll(() => orders.getByRole('cell').allTextContents()).toEqual(['1', '1', '1', expect.stringMatching(/\d/)]);

      await page.getByLabel('Filter contexts').fill('ctx-1');
      await expect.poll(() => table.getByRole('link').count()).toBe(10);

      await page.getByLabel('Filter contexts').fill('orders');
      await table.getByRole('link', { name: 'orders', exact: true }).click();
      await page.waitForURL(/#\/contexts\/orders$/);
      const tabs = page.getByRole('navigation', { name: 'Context orders' });
      // The context's page renders a moment after the address changes.
      await tabs.getByRole('link', { name: 'Rules', exact: true }).waitFor();
      for (const name of ['Rules', 'History', 'Tests']) expect(await tabs.getByRole('link', { name, exact: true }).count()).toBe(1);
      expect(await tabs.getByRole('link', { name: 'Rules', exact: true }).getAttribute('aria-current')).toBe('page');
      const top = page.getByRole('navigation', { name: 'Console' });
      for (const name of ['API keys', 'Audit']) expect(await top.getByRole('link', { name, exact: true }).count()).toBe(1);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);

      // Every other page of the navigation opens, each with its heading, and passes axe too.
      for (const [navigation, link, heading] of [
        [tabs, 'History', 'History of orders'], [tabs, 'Tests', 'Tests of orders'], [top, 'API keys', 'API keys'], [top, 'Audit', 'Audit'],
      ] as const) {
        await navigation.getByRole('link', { name: link, exact: true }).click();
        await page.getByRole('heading', { name: heading, exact: true }).waitFor();
        expect(await seriousAccessibilityViolations(page), link).toEqual([]);
      }
      expect(view.pageErrors).toEqual([]);
      expect(view.cspViolations).toEqual([]);
    } finally {
      await view.close();
    }
  });
});
