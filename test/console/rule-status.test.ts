/**
 * What the console says of an existing rule, in Chromium against the real
 * service: a published rule with a pending draft shows both (in the context's
 * rules list and in the editor), and its code, which cannot change, looks
 * read-only and says why.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser } from '../support/browser.ts';
import { checkPage, openSignedIn } from '../support/console-pages.ts';
import { ok } from '../support/expect-response.ts';

let t: TestApp;
let browser: Browser;
let ruleId: string;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
  const rule = await ok(t.request('POST', '/api/v1/rules', {
    body: { context: 'statuses', code: 'LIMIT', name: 'Loan limit', fieldPath: 'amount', expression: '$value <= 1000' },
  }), 201);
  await ok(t.request('POST', '/api/v1/rules', {
    body: { context: 'statuses', code: 'NEW_ONLY', name: 'Never published', fieldPath: 'amount', expression: '$value > 0' },
  }), 201);
  await ok(t.request('POST', '/api/v1/contexts/statuses/publish'));
  await ok(t.request('POST', '/api/v1/rules', {
    body: { context: 'statuses', code: 'NEW_ONLY_2', name: 'Draft only', fieldPath: 'amount', expression: '$value > 1' },
  }), 201);
  // Live at version 1, with version 2 pending as a draft.
  await ok(t.request('PUT', `/api/v1/rules/${rule.id}`, { body: { ...rule, expression: '$value <= 100' } }));
  ruleId = rule.id;
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('an existing rule', () => {
  it('published with a pending draft shows both, in the rules list and the editor', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/statuses');
    try {
      const { page } = view;
      const statusOf = async (code: string): Promise<string | null> => {
        const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: code, exact: true }) });
        return row.getByRole('cell').nth(2).textContent();
      };
      await page.getByRole('rowheader', { name: 'LIMIT', exact: true }).waitFor();
      expect(await statusOf('LIMIT')).toBe('published · draft pending');
      expect(await statusOf('NEW_ONLY')).toBe('published');
      expect(await statusOf('NEW_ONLY_2')).toBe('draft');

      await page.evaluate(`location.hash = ${JSON.stringify(`#/rules/${ruleId}`)}`);
      const status = page.locator('.rule-status');
      await status.waitFor();
      expect(await status.textContent()).toBe('Status published · draft pending · version 2 · live version 1');
      await checkPage(view, 'rule-status');
    } finally {
      await view.close();
    }
  });

  it('shows a schema error placed inside the schema under the schema field, as one types and on save', async () => {
    const view = await openSignedIn(browser, t, `#/rules/${ruleId}`);
    try {
      const { page } = view;
      const schema = page.getByLabel('schema', { exact: true });
      await schema.waitFor();
      await schema.fill('{"type": "number", "maximun": 5}');
      const said = 'schema.maximun: strict mode: unknown keyword: "maximun" at "#"; did you mean "maximum"?';
      const findings = page.locator('#rule-schema-findings');
      await expect.poll(() => findings.textContent()).toContain(said);
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.locator('#rule-save-problem').count()).toBe(1);
      await expect.poll(() => findings.textContent()).toContain(said);
    } finally {
      await view.close();
    }
  });

  it('has a code that looks read-only and says why', async () => {
    const view = await openSignedIn(browser, t, `#/rules/${ruleId}`);
    try {
      const { page } = view;
      const code = page.getByRole('textbox', { name: 'code', exact: true });
      await code.waitFor();
      expect(await code.getAttribute('readonly')).not.toBeNull();
      expect(await code.inputValue()).toBe('LIMIT');
      // Not styled as the editable fields are.
      const look = (selector: string) => page.evaluate<string>(
        `(() => { const style = getComputedStyle(document.querySelector(${JSON.stringify(selector)})); return style.backgroundColor + ' ' + style.borderStyle; })()`,
      );
      expect(await look('#rule-code')).not.toBe(await look('#rule-name'));
      // Why, in the hint the field is described by.
      const describedBy = (await code.getAttribute('aria-describedby')) ?? '';
      const hints = await Promise.all(describedBy.split(' ').filter(Boolean).map((id) => page.locator(`#${id}`).textContent()));
      expect(hints.join(' ')).toMatch(/cannot change/);
      await checkPage(view, 'rule-code-read-only');
    } finally {
      await view.close();
    }
  });
});
