/**
 * The tenant's API keys and audit trail in Chromium against the real
 * service: a key created is shown once with a copy button that puts it on
 * the clipboard, and works; revoking asks first, then the key is refused;
 * revoking the last admin key is refused in the API's words next to it;
 * the audit trail shows those changes, filtered by context and action, a
 * page at a time.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser } from '../support/browser.ts';
import { checkPage, openSignedIn, tabTo } from '../support/console-pages.ts';

const POLL = { timeout: 15_000, interval: 100 };

let t: TestApp;
let browser: Browser;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
  // 25 rule creations in "audited": two pages of the audit trail's twenty.
  for (let i = 0; i < 25; i++) {
    const body = { context: 'audited', code: `R${String(i).padStart(2, '0')}`, name: `Rule ${i}`, fieldPath: 'a', expression: '$value > 0' };
    expect((await t.request('POST', '/api/v1/rules', { body })).status).toBe(201);
  }
  expect((await t.request('POST', '/api/v1/contexts/audited/publish', { body: { note: 'all of them' } })).status).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('API keys', () => {
  it('creates a key shown once with a copy button, lists it, and revokes it after confirming', async () => {
    const view = await openSignedIn(browser, t, '#/api-keys');
    try {
      const { page } = view;
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
      const table = page.getByRole('table');
      await expect.poll(() => table.getByRole('row').count(), POLL).toBe(2);
      expect(await table.locator('caption').textContent()).toBe('1 key, revoked ones included; secrets are never shown again');

      // A name the API refuses (blank) is shown under the name field.
      await page.getByLabel('Key name').fill('   ');
      await page.getByRole('button', { name: 'Create key' }).click();
      await expect.poll(() => page.locator('#key-name-problems').textContent(), POLL).toMatch(/fewer than 1/);
      expect(await page.getByLabel('Key name').getAttribute('aria-describedby')).toBe('key-name-problems');

      await page.getByLabel('Key name').fill('checkout service');
      await page.getByLabel('Role').selectOption('validator');
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = page.getByLabel('New key');
      await secret.waitFor();
      const key = await secret.inputValue();
      expect(key.length).toBeGreaterThan(20);
      await page.getByRole('button', { name: 'Copy' }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Copied' }).count(), POLL).toBe(1);
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
      await checkPage(view, 'api-key-created');
      // The key works for validations.
      const check = await t.request('POST', '/api/v1/validation/validate', { key, body: { context: 'audited', payload: { a: 1 } } });
      expect(check.status).toBe(200);

      // Once "Done", the secret is gone from the page for good.
      await page.getByRole('button', { name: 'Done' }).click();
      expect(await page.getByLabel('New key').count()).toBe(0);
      expect(await page.content()).not.toContain(key);
      const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'checkout service' }) });
      await expect.poll(() => row.getByRole('cell').nth(3).textContent(), POLL).toBe('active');

      // Revoke asks first; Cancel keeps the key.
      await page.getByRole('heading', { name: 'API keys', level: 1 }).focus();
      await tabTo(page, 'Revoke checkout service');
      await page.keyboard.press('Enter');
      const confirm = page.getByRole('group', { name: 'Confirm revoking checkout service' });
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      expect((await t.request('POST', '/api/v1/validation/validate', { key, body: { context: 'audited', payload: { a: 1 } } })).status).toBe(200);
      await row.getByRole('button', { name: 'Revoke checkout service' }).click();
      await checkPage(view, 'api-key-revoke-confirm');
      await confirm.getByRole('button', { name: 'Revoke key' }).click();
      await expect.poll(() => row.getByRole('cell').nth(3).textContent(), POLL).toMatch(/^revoked /);
      expect((await t.request('POST', '/api/v1/validation/validate', { key, body: { context: 'audited', payload: { a: 1 } } })).status).toBe(401);
      expect(view.dialogs).toEqual([]);
    } finally {
      await view.close();
    }
  });

  it('shows the refusal to revoke the last admin key next to it', async () => {
    const view = await openSignedIn(browser, t, '#/api-keys');
    try {
      const { page } = view;
      const keys = (await t.request('GET', '/api/v1/api-keys')).body.items as Array<{ name: string; role: string; revokedAt: string | null }>;
      const admin = keys.find((item) => item.role === 'admin' && item.revokedAt === null);
      expect(admin).toBeDefined();
      const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: admin!.name, exact: true }) });
      await row.getByRole('button', { name: `Revoke ${admin!.name}` }).click();
      await row.getByRole('button', { name: 'Revoke key' }).click();
      await expect.poll(() => row.getByRole('alert').textContent(), POLL).toContain('last active admin key');
      // Still signed in, still working.
      expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
    } finally {
      await view.close();
    }
  });
});

describe('audit trail', () => {
  it('shows the changes newest first, filtered by context and action, a page at a time', async () => {
    const view = await openSignedIn(browser, t, '#/audit');
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
      const table = page.getByRole('table', { name: 'Changes, newest first' });
      await table.waitFor();
      // The keys created and revoked above are the newest changes.
      const rows = table.locator(':scope > tbody > tr');
      expect(await rows.nth(0).getByRole('rowheader').textContent()).toBe('key.revoke');
      expect(await rows.nth(1).getByRole('rowheader').textContent()).toBe('key.create');
      await checkPage(view, 'audit');

      await page.getByLabel('Context').fill('audited');
      await page.getByLabel('Action').selectOption('rule.create');
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => rows.first().getByRole('cell').nth(2).textContent(), POLL).toBe('audited');
      await expect.poll(() => rows.count(), POLL).toBe(20);
      expect(new Set(await rows.getByRole('rowheader').allTextContents())).toEqual(new Set(['rule.create']));
      // The rule is named by its code, as authors know it; its id stays at hand as the code's title.
      const newest = (await t.request('GET', '/api/v1/audit?context=audited&action=rule.create&limit=1')).body.items[0];
      const what = rows.first().getByRole('cell').nth(4);
      expect(await what.locator('code.target').textContent()).toBe('R24');
      expect(await what.locator('code.target').getAttribute('title')).toBe(`rule id ${newest.target}`);
      await page.getByRole('button', { name: 'Next page' }).click();
      await expect.poll(() => rows.count(), POLL).toBe(5);
      await page.getByRole('button', { name: 'Previous page' }).click();
      await expect.poll(() => rows.count(), POLL).toBe(20);

      await page.getByLabel('Action').selectOption('context.publish');
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => rows.count(), POLL).toBe(1);
      expect(await rows.first().getByRole('cell').nth(3).textContent()).toBe('all of them');
      await rows.first().locator('summary').click();
      expect(await rows.first().locator('.before-after').textContent()).toContain('"rulesetVersion": 1');

      await page.getByLabel('Context').fill('nothing-here');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No entries.').waitFor();

      // A filter the API refuses is shown in its words.
      await page.getByLabel('Context').fill('x'.repeat(101));
      await page.getByLabel('Action').selectOption('');
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => page.getByRole('alert').count(), POLL).toBe(1);
      expect(await page.getByRole('alert').textContent()).toMatch(/context/);
      expect(view.dialogs).toEqual([]);
    } finally {
      await view.close();
    }
  });
});
