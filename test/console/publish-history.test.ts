/**
 * A context's changes, publish and history in Chromium against the real
 * service: the draft-vs-live diff per rule, the drafts' warnings and the
 * stored tests' result shown before publishing; a publish refused by a
 * failing stored test (its name shown) and forced with a note; the history
 * with notes, the diff between versions, and a rollback with a note; every
 * page reachable by keyboard and without serious accessibility violation.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser } from '../support/browser.ts';
import { checkPage, openSignedIn, tabTo } from '../support/console-pages.ts';

/** Waiting for what the API answers: the machine is shared and slow at times. */
const POLL = { timeout: 15_000, interval: 100 };

let t: TestApp;
let browser: Browser;

/** A name that would run script if it were ever treated as markup. */
const HOSTILE_NAME = '<img src=x onerror="alert(1)">Limit';

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
  const created = await t.request('POST', '/api/v1/rules', {
    body: { context: 'loans', code: 'LIMIT', name: 'Loan limit', fieldPath: 'amount', expression: '$value <= 1000' },
  });
  expect(created.status).toBe(201);
  expect((await t.request('POST', '/api/v1/contexts/loans/publish', { body: { note: 'first limits' } })).status).toBe(200);
  expect((await t.request('PUT', '/api/v1/contexts/loans/tests', {
    body: {
      tests: [
        { name: 'small loan passes', payload: { amount: 50 }, expect: { isValid: true } },
        { name: 'big loan fails the limit', payload: { amount: 5000 }, expect: { isValid: false, failures: ['LIMIT'] } },
      ],
    },
  })).status).toBe(200);
  // The drafts: LIMIT raised (which the second test catches), and a rule whose condition is constant (a warning).
  const { body: rule } = created;
  expect((await t.request('PUT', `/api/v1/rules/${rule.id}`, { body: { ...rule, expression: '$value <= 10000' } })).status).toBe(200);
  expect((await t.request('POST', '/api/v1/rules', {
    body: { context: 'loans', code: 'TERM', name: HOSTILE_NAME, fieldPath: 'term', expression: '$value <= 360', when: '1 > 0' },
  })).status).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('a context\'s changes and publish', () => {
  it('shows the diff per rule, the warnings and the failing stored test, refuses the publish, then publishes anyway with the note', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/loans/changes');
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'Changes of loans' }).waitFor();
      const changed = page.getByRole('article', { name: 'Changed LIMIT' });
      await changed.waitFor();
      const expressionRow = changed.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'expression' }) });
      expect(await expressionRow.getByRole('cell').allTextContents()).toEqual(['$value <= 1000', '$value <= 10000']);
      const added = page.getByRole('article', { name: 'Added TERM' });
      expect(await added.textContent()).toContain('$value <= 360');
      expect(await added.textContent()).toContain(HOSTILE_NAME);
      await expect.poll(() => page.getByRole('list', { name: 'Warnings of the drafts' }).textContent(), POLL).toContain('CONSTANT');
      await expect.poll(() => page.getByRole('region', { name: 'Stored tests against the drafts' }).getByRole('status').textContent(), POLL)
        .toBe('1 passed, 1 failed against the drafts.');
      const failing = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'big loan fails the limit' }) });
      expect(await failing.getByRole('cell').first().textContent()).toBe('Failed');
      await checkPage(view, 'changes');

      // The keyboard reaches the note and the button.
      await page.getByRole('heading', { name: 'Changes of loans' }).focus();
      await tabTo(page, 'Publish');
      await page.getByLabel('note', { exact: true }).fill('raise the limit for Q3');
      await page.getByRole('button', { name: 'Publish', exact: true }).click();
      const alert = page.getByRole('form', { name: 'Publish' }).getByRole('alert');
      await expect.poll(() => alert.textContent(), POLL).toContain('fails against the rules that would go live');
      expect(await alert.textContent()).toContain('big loan fails the limit');
      expect(await page.getByLabel('note', { exact: true }).inputValue()).toBe('raise the limit for Q3');
      await checkPage(view, 'publish-tests-failed');
      const versions = await t.request('GET', '/api/v1/contexts/loans/versions');
      expect(versions.body.items).toHaveLength(1);

      await page.getByRole('button', { name: 'Publish anyway' }).click();
      await expect.poll(() => page.getByRole('form', { name: 'Publish' }).getByRole('status').textContent(), POLL).toBe('Published version 2: added TERM; changed LIMIT.');
      await expect.poll(() => page.getByText('No differences: both have the same rules.').count(), POLL).toBe(1);
      const after = await t.request('GET', '/api/v1/contexts/loans/versions');
      expect(after.body.items[0]).toMatchObject({ rulesetVersion: 2, note: expect.stringMatching(/^raise the limit for Q3\b.*force/s) });
      expect(view.dialogs).toEqual([]);
    } finally {
      await view.close();
    }
  });
});

describe('a context\'s history', () => {
  it('lists the versions with their notes, shows the diff between versions, and rolls back with a note', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/loans');
    try {
      const { page } = view;
      await page.getByRole('navigation', { name: 'Context loans' }).getByRole('link', { name: 'History', exact: true }).click();
      await page.getByRole('heading', { name: 'History of loans' }).waitFor();
      const table = page.getByRole('table', { name: 'Ruleset versions, newest first' });
      await table.waitFor();
      expect(await table.getByRole('row').count()).toBe(3);
      const first = table.getByRole('row').filter({ has: page.getByRole('button', { name: 'Version 1', exact: true }) });
      expect(await first.getByRole('cell').allTextContents()).toEqual(['publish', 'first limits', '1', expect.any(String), expect.any(String)]);
      await checkPage(view, 'history');

      // What version 2 changed, from version 1.
      await page.getByRole('button', { name: 'Version 2', exact: true }).click();
      const panel = page.getByRole('region', { name: 'Version 2', exact: true });
      await panel.getByRole('article', { name: 'Changed LIMIT' }).waitFor();
      expect(await panel.getByRole('article', { name: 'Added TERM' }).count()).toBe(1);
      expect(await panel.textContent()).toContain('This version is live.');
      expect(await panel.getByRole('button', { name: 'Rollback' }).count()).toBe(0);

      // Version 1 against the live one: what a rollback would change.
      await page.getByRole('button', { name: 'Version 1', exact: true }).click();
      const one = page.getByRole('region', { name: 'Version 1', exact: true });
      await one.getByRole('article', { name: 'Removed TERM' }).waitFor();
      expect(await one.getByRole('heading', { name: 'From live to version 1' }).count()).toBe(1);
      await page.getByRole('button', { name: 'Version 1', exact: true }).focus();
      await tabTo(page, 'Rollback');
      await one.getByLabel('note', { exact: true }).fill('back to the old limit');
      // From the note, the next stop is the button.
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement?.textContent')).toBe('Rollback');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Rolled back' }).textContent(), POLL).toBe('Rolled back: version 3 is live (changed LIMIT; removed TERM).');
      const newest = table.getByRole('row').filter({ has: page.getByRole('button', { name: 'Version 3', exact: true }) });
      await newest.waitFor();
      expect(await newest.getByRole('cell').allTextContents()).toEqual(['rollback', 'back to the old limit', '1', expect.any(String), expect.any(String)]);
      await checkPage(view, 'history-rolled-back');
      const live = await t.request('GET', '/api/v1/contexts/loans/versions/3');
      expect(live.body.rules).toEqual([expect.objectContaining({ code: 'LIMIT', name: 'Loan limit', expression: '$value <= 1000' })]);
      expect(view.dialogs).toEqual([]);
    } finally {
      await view.close();
    }
  });

  it('shows rule text literally: a name that looks like markup stays text and runs nothing', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/loans/history');
    try {
      const { page } = view;
      await page.getByRole('button', { name: 'Version 3', exact: true }).click();
      await page.getByRole('combobox', { name: 'Compare with' }).selectOption('previous');
      const removed = page.getByRole('region', { name: 'Version 3', exact: true }).getByRole('article', { name: 'Removed TERM' });
      await removed.waitFor();
      expect(await removed.textContent()).toContain(HOSTILE_NAME);
      expect(await page.locator('main img').count()).toBe(0);
      expect(view.dialogs).toEqual([]);
      expect(view.pageErrors).toEqual([]);
    } finally {
      await view.close();
    }
  });
});
