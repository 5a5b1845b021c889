/**
 * Writing rules in the console, in Chromium against the real service: the
 * context's rules list and its filters, the rule editor (a syntax error
 * underlined before saving, warnings as one types, the API's errors under
 * the field they name, save and edit), the test panel with the explain
 * trace, archiving and restoring a rule, and hostile rule text shown as
 * text without running anything.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser, openConsole, screenshot, seriousAccessibilityViolations, signIn, type ConsoleView } from '../support/browser.ts';
import { checkPage, tabTo } from '../support/console-pages.ts';

let t: TestApp;
let browser: Browser;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Opens the console signed in as the first tenant's admin. */
async function signedIn(path = '/console'): Promise<ConsoleView> {
  const view = await openConsole(browser, t.baseUrl, path);
  await signIn(view.page, t.tenantId, t.adminKey);
  return view;
}

/** The editable part of a rule field's code editor. */
function codeEditor(page: Page, field: string) {
  return page.getByRole('textbox', { name: field, exact: true });
}

async function typeCode(page: Page, field: string, text: string): Promise<void> {
  const editor = codeEditor(page, field);
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.type(text);
}

/** The errors and warnings listed under a rule field. */
function findings(page: Page, field: string) {
  return page.locator(`#rule-${field}-findings`);
}

async function rulesOf(context: string): Promise<any[]> {
  const response = await t.request('GET', `/api/v1/rules?context=${context}&status=all`);
  expect(response.status).toBe(200);
  return response.body.items;
}

describe('the rule editor', () => {
  it('marks a syntax error as it is typed, before anything is saved; once fixed, saves the rule', async () => {
    const view = await signedIn();
    try {
      const { page } = view;
      await page.getByRole('button', { name: 'New rule' }).click();
      await page.getByRole('heading', { name: 'New rule' }).waitFor();
      await page.getByLabel('context', { exact: true }).fill('orders');
      await page.getByLabel('code', { exact: true }).fill('TOTAL_MAX');
      await page.getByLabel('name', { exact: true }).fill('Order total limit');
      await page.getByLabel('fieldPath', { exact: true }).fill('total');
      await page.getByLabel('message', { exact: true }).fill('Total {{ $value }} exceeds {{ $expected }}');
      await typeCode(page, 'expression', '$value <= 100 +');

      const expression = page.locator('.field-expression');
      await expression.locator('.cm-lintRange-error').first().waitFor();
      await expect.poll(() => findings(page, 'expression').textContent()).toMatch(/^Error: line 1, column \d+: /);
      // Described by its findings, so a screen reader reads them with the field.
      const describedBy = await codeEditor(page, 'expression').getAttribute('aria-describedby');
      expect(describedBy).toContain('rule-expression-findings');
      expect(await rulesOf('orders')).toEqual([]);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'rule-editor-syntax-error');
      await screenshot(page, 'expression-error', { of: page.locator('.rule-form').locator('.field-when, .field-expression').last() });

      await typeCode(page, 'expression', '$value <= 100');
      await expect.poll(() => expression.locator('.cm-lintRange-error').count()).toBe(0);
      await expect.poll(() => findings(page, 'expression').count()).toBe(0);

      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('heading', { name: 'Rule TOTAL_MAX' }).waitFor();
      const [saved] = await rulesOf('orders');
      expect(saved).toMatchObject({
        code: 'TOTAL_MAX', name: 'Order total limit', fieldPath: 'total', expression: '$value <= 100', status: 'draft', version: 1,
        message: 'Total {{ $value }} exceeds {{ $expected }}', severity: 'Error', enabled: true, required: false, tags: [], priority: 0,
      });
      expect(page.url()).toContain(`#/rules/${saved.id}`);
      expect(await page.getByText('Status draft · version 1 · live version none').count()).toBe(1);

      // Edit and save again: a new version, with the fields the form shows.
      await page.getByLabel('severity', { exact: true }).selectOption('Warning');
      await page.getByLabel('tags', { exact: true }).fill('finance, limits');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toContain('Saved as version 2');
      const [edited] = await rulesOf('orders');
      expect(edited).toMatchObject({ version: 2, severity: 'Warning', tags: ['finance', 'limits'], expression: '$value <= 100' });
      expect(view.pageErrors).toEqual([]);
      expect(view.cspViolations).toEqual([]);
    } finally {
      await view.close();
    }
  });

  it('offers the language\'s functions and methods as one types, with their documentation, and the same on hover', async () => {
    const view = await signedIn('/console#/contexts/orders/rules/new');
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'New rule' }).waitFor();
      await typeCode(page, 'expression', 'days');
      const list = page.locator('.cm-tooltip-autocomplete');
      await list.waitFor();
      // The records' name and forms, and their documentation line and example beside the list.
      expect(await list.getByRole('option').allTextContents()).toEqual(['daysBetweendaysBetween(a, b)']);
      const info = page.locator('.cm-completionInfo');
      await expect.poll(() => info.textContent()).toContain('whole calendar days from a to b in UTC');
      expect(await info.textContent()).toContain('Example: daysBetween(checkIn, checkOut) <= 30');
      await screenshot(page, 'rule-editor-completion', { fullPage: false });
      await page.keyboard.press('Enter');
      await expect.poll(() => codeEditor(page, 'expression').textContent()).toBe('daysBetween');

      // After a dot, methods: `.inc` offers `.includes` with both its uses.
      await typeCode(page, 'expression', 'note.inc');
      await expect.poll(() => list.getByRole('option').allTextContents()).toEqual(['includes.includes(v)']);
      await expect.poll(() => info.textContent()).toContain('on a string: whether the string v occurs in it; on an array');

      // Hovering a function name shows the same help.
      await typeCode(page, 'expression', 'isEmail(contact.email)');
      await page.keyboard.press('Escape');
      const editorBox = (await codeEditor(page, 'expression').boundingBox())!;
      await page.mouse.move(editorBox.x + 20, editorBox.y + editorBox.height / 2);
      const hover = page.locator('.cm-tooltip-hover');
      await hover.waitFor();
      expect(await hover.textContent()).toContain('whether s is an e-mail address');
      await screenshot(page, 'rule-editor-hover', { fullPage: false });
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      expect(view.pageErrors).toEqual([]);
      expect(view.cspViolations).toEqual([]);
    } finally {
      await view.close();
    }
  });

  it('underlines warnings as one types: a when that never depends on the payload', async () => {
    const view = await signedIn('/console#/contexts/orders/rules/new');
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'New rule' }).waitFor();
      await page.getByLabel('code', { exact: true }).fill('ALWAYS');
      await page.getByLabel('name', { exact: true }).fill('Always');
      await typeCode(page, 'expression', 'total > 0');
      await typeCode(page, 'when', '1 > 0');
      await page.locator('.field-when .cm-lintRange-warning').first().waitFor();
      await expect.poll(() => findings(page, 'when').textContent()).toMatch(/^Warning: line 1, column 1: /);
      expect(await page.locator('.field-when .cm-lintRange-error').count()).toBe(0);
      // Tab leaves the editor for the next field, as from any other control: the editor is no keyboard trap.
      await codeEditor(page, 'when').focus();
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.getAttribute("aria-labelledby")')).toBe('rule-expression-label');
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.id')).toBe('rule-schema');
    } finally {
      await view.close();
    }
  });

  it('shows the API\'s refusal of a save under the field it names, in its words', async () => {
    const view = await signedIn('/console#/contexts/orders/rules/new');
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'New rule' }).waitFor();
      await page.getByLabel('code', { exact: true }).fill('TOTAL_MAX');
      await page.getByLabel('name', { exact: true }).fill('Duplicate');
      await typeCode(page, 'expression', 'total > 0');
      await page.getByRole('button', { name: 'Save' }).click();
      const problem = page.locator('#rule-save-problem');
      await expect.poll(() => problem.textContent()).toContain('a rule with code "TOTAL_MAX" already exists in context "orders"');

      await page.getByLabel('code', { exact: true }).fill('OK_CODE');
      await page.getByLabel('expectedValue', { exact: true }).fill('{not json');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => findings(page, 'expectedValue').textContent()).toContain('must be JSON');

      await page.getByLabel('expectedValue', { exact: true }).fill('');
      await page.getByLabel('name', { exact: true }).fill('x'.repeat(201));
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => findings(page, 'name').textContent()).toMatch(/^Error: /);
      expect((await rulesOf('orders')).map((rule) => rule.code)).toEqual(['TOTAL_MAX']);
    } finally {
      await view.close();
    }
  });

  it('tests the rule of the form on a payload and shows the explain trace', async () => {
    const [rule] = await rulesOf('orders');
    const view = await signedIn(`/console#/rules/${rule.id}`);
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'Rule TOTAL_MAX' }).waitFor();
      await page.getByLabel('payload', { exact: true }).fill('{"total": 250}');
      await page.getByRole('button', { name: 'Test' }).click();
      await expect.poll(() => page.locator('.verdict').textContent()).toBe('Invalid: 1 failure.');
      const trace = page.getByRole('table', { name: 'Trace' });
      const totalMax = trace.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'TOTAL_MAX' }) });
      expect(await totalMax.getByRole('cell').allTextContents()).toEqual(['failed', 'total', '250', '100']);
      const failures = page.getByRole('table', { name: 'Failures' });
      expect(await failures.getByRole('cell').nth(1).textContent()).toBe('Total 250 exceeds 100');
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'rule-editor-test-trace');
      await screenshot(page, 'test-trace', { of: page.locator('.test-panel') });

      // The unsaved form is what runs: a wider limit passes.
      await typeCode(page, 'expression', '$value <= 1000');
      await page.getByRole('button', { name: 'Test' }).click();
      await expect.poll(() => page.locator('.verdict').textContent()).toBe('Valid: the payload passes.');
      expect(await page.getByRole('table', { name: 'Trace' }).getByRole('row').nth(1).getByRole('cell').first().textContent()).toBe('passed');

      // A skipped rule says why.
      await typeCode(page, 'when', 'total > 1000');
      await page.getByRole('button', { name: 'Test' }).click();
      await expect.poll(() => page.getByRole('table', { name: 'Trace' }).getByRole('row').nth(1).getByRole('cell').first().textContent())
        .toBe('skipped (its when did not hold)');

      await page.getByLabel('payload', { exact: true }).fill('{"total": ');
      await page.getByRole('button', { name: 'Test' }).click();
      await expect.poll(() => page.locator('#test-payload-problems').textContent()).toMatch(/JSON/);
    } finally {
      await view.close();
    }
  });
});

describe('a context\'s rules', () => {
  beforeAll(async () => {
    const rules = [
      { code: 'A_LIMIT', name: 'Amount limit', severity: 'Error' },
      { code: 'B_NOTE', name: 'Note present', severity: 'Info' },
      { code: 'C_CURRENCY', name: 'Currency known', severity: 'Warning' },
    ];
    for (const rule of rules) {
      const created = await t.request('POST', '/api/v1/rules', { body: { context: 'loans', fieldPath: 'x', expression: '$value > 0', ...rule } });
      expect(created.status).toBe(201);
    }
    expect((await t.request('POST', '/api/v1/contexts/loans/publish')).status).toBe(200);
    const draft = await t.request('POST', '/api/v1/rules', { body: { context: 'loans', code: 'D_DRAFT', name: 'Draft one', expression: 'true == true' } });
    expect(draft.status).toBe(201);
  });

  it('lists code, name, severity and status, filtered by status, severity and text', async () => {
    const view = await signedIn('/console#/contexts/loans');
    try {
      const { page } = view;
      const table = page.getByRole('table');
      await table.getByRole('link', { name: 'A_LIMIT' }).waitFor();
      const rows = async () => (await table.getByRole('row').allTextContents()).slice(1);
      expect(await rows()).toEqual(['A_LIMITAmount limitErrorpublished', 'B_NOTENote presentInfopublished', 'C_CURRENCYCurrency knownWarningpublished', 'D_DRAFTDraft oneErrordraft']);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'rules-list');
      await screenshot(page, 'rules-of-a-context', { of: page.locator('main') });

      await page.getByLabel('Status').selectOption('draft');
      await expect.poll(rows).toEqual(['D_DRAFTDraft oneErrordraft']);
      await page.getByLabel('Status').selectOption('');
      await page.getByLabel('Severity').selectOption('Warning');
      await expect.poll(rows).toEqual(['C_CURRENCYCurrency knownWarningpublished']);
      await page.getByLabel('Severity').selectOption('');
      await page.getByLabel('Search').fill('note');
      await expect.poll(rows).toEqual(['B_NOTENote presentInfopublished']);

      await table.getByRole('link', { name: 'B_NOTE' }).click();
      await page.getByRole('heading', { name: 'Rule B_NOTE' }).waitFor();
      expect(await page.getByLabel('name', { exact: true }).inputValue()).toBe('Note present');
      expect(await codeEditor(page, 'expression').textContent()).toBe('$value > 0');

      await page.getByRole('link', { name: 'loans' }).click();
      await page.getByRole('button', { name: 'New rule' }).click();
      await page.getByRole('heading', { name: 'New rule' }).waitFor();
      // In a context, the new rule's context is the one it was made from.
      expect(await page.getByLabel('context', { exact: true }).count()).toBe(0);
    } finally {
      await view.close();
    }
  });
});

describe('archiving and restoring a rule in the editor', () => {
  let ruleId: string;
  beforeAll(async () => {
    const created = await t.request('POST', '/api/v1/rules', {
      body: { context: 'shelf', code: 'OLD_LIMIT', name: 'Old limit', fieldPath: 'total', expression: '$value <= 10' },
    });
    expect(created.status).toBe(201);
    ruleId = created.body.id;
    const other = await t.request('POST', '/api/v1/rules', { body: { context: 'shelf', code: 'KEPT', name: 'Kept', expression: 'true == true' } });
    expect(other.status).toBe(201);
    expect((await t.request('POST', '/api/v1/contexts/shelf/publish')).status).toBe(200);
  });

  async function ruleNow(): Promise<any> {
    const response = await t.request('GET', `/api/v1/rules/${ruleId}`);
    expect(response.status).toBe(200);
    return response.body;
  }

  /** Opens the context's rules list with the status filter `status` ('' is the default); answers a reader of its rows. */
  async function listUnder(page: Page, status: string): Promise<() => Promise<string[]>> {
    await page.evaluate('location.hash = "#/contexts/shelf"');
    await page.getByLabel('Status').selectOption(status);
    return async () => (await page.getByRole('table').getByRole('row').allTextContents()).slice(1);
  }

  it('archives after confirming, with the keyboard; shows it read-only and archived; restores it as a draft', async () => {
    const view = await signedIn(`/console#/rules/${ruleId}`);
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'Rule OLD_LIMIT' }).waitFor();
      await tabTo(page, 'Archive');
      await page.keyboard.press('Enter');
      // Nothing happens before the confirmation.
      const confirm = page.getByRole('group', { name: 'Confirm archiving OLD_LIMIT' });
      await confirm.waitFor();
      expect((await ruleNow()).status).toBe('published');
      await confirm.getByRole('button', { name: 'Archive rule' }).focus();
      await page.keyboard.press('Enter');

      await expect.poll(() => page.getByRole('status').textContent()).toContain('Archived');
      expect(await page.getByText('Status archived', { exact: false }).count()).toBe(1);
      const archived = await ruleNow();
      expect(archived).toMatchObject({ status: 'archived', version: 1 });
      // Read-only: no Save or Archive, fields that do not take typing, and Restore offered.
      const notice = page.getByRole('group', { name: 'Archived rule' });
      expect(await notice.textContent()).toContain('This rule is archived');
      expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Archive', exact: true }).count()).toBe(0);
      expect(await page.getByLabel('name', { exact: true }).getAttribute('readonly')).not.toBeNull();
      expect(await page.getByLabel('severity', { exact: true }).isDisabled()).toBe(true);
      await page.getByLabel('name', { exact: true }).press('x');
      expect(await page.getByLabel('name', { exact: true }).inputValue()).toBe('Old limit');
      await codeEditor(page, 'expression').click();
      await page.keyboard.type(' && false');
      expect(await codeEditor(page, 'expression').textContent()).toBe('$value <= 10');
      expect(await codeEditor(page, 'expression').getAttribute('aria-readonly')).toBe('true');
      await checkPage(view, 'rule-archived');
      await screenshot(page, 'archived-rule', { of: notice });

      // Gone from the default list, listed under the archived filter.
      await expect.poll(await listUnder(page, '')).toEqual(['KEPTKeptErrorpublished']);
      await expect.poll(await listUnder(page, 'archived')).toEqual(['OLD_LIMITOld limitErrorarchived']);

      await page.getByRole('table').getByRole('link', { name: 'OLD_LIMIT' }).click();
      await page.getByRole('heading', { name: 'Rule OLD_LIMIT' }).waitFor();
      await tabTo(page, 'Restore');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.getByRole('status').textContent()).toContain('Restored as version 2');
      expect(await page.getByText('Status draft · version 2 · live version none').count()).toBe(1);
      expect(await ruleNow()).toMatchObject({ status: 'draft', version: 2, publishedVersion: null, expression: '$value <= 10' });
      // Editable again, and saved as a draft from here.
      await page.getByLabel('name', { exact: true }).fill('Old limit, back');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toContain('Saved as version 3');
      expect(await ruleNow()).toMatchObject({ status: 'draft', version: 3, name: 'Old limit, back' });
      await expect.poll(await listUnder(page, 'draft')).toEqual(['OLD_LIMITOld limit, backErrordraft']);
      expect(view.dialogs).toEqual([]);
      expect(view.pageErrors).toEqual([]);
    } finally {
      await view.close();
    }
  });

  it('shows the API\'s 409 by Restore when another rule now has the code, and changes nothing', async () => {
    expect((await t.request('DELETE', `/api/v1/rules/${ruleId}`)).status).toBe(204);
    const taker = await t.request('POST', '/api/v1/rules', { body: { context: 'shelf', code: 'OLD_LIMIT', name: 'New owner', expression: 'true == true' } });
    expect(taker.status).toBe(201);
    const before = await ruleNow();
    expect(before.status).toBe('archived');
    const view = await signedIn(`/console#/rules/${ruleId}`);
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'Rule OLD_LIMIT' }).waitFor();
      await page.getByRole('button', { name: 'Restore' }).click();
      const problem = page.locator('#rule-lifecycle-problem');
      await expect.poll(() => problem.textContent()).toContain('code "OLD_LIMIT" is used by another rule of context "shelf"');
      // Next to the button, inside the archived notice.
      expect(await page.getByRole('group', { name: 'Archived rule' }).getByRole('alert').count()).toBe(1);
      expect(await page.getByText('Status archived', { exact: false }).count()).toBe(1);
      expect(await ruleNow()).toEqual(before);
      expect((await rulesOf('shelf')).filter((rule) => rule.code === 'OLD_LIMIT').map((rule) => rule.status).sort()).toEqual(['archived', 'draft']);
      await checkPage(view, 'rule-restore-refused');
    } finally {
      await view.close();
    }
  });
});

describe('hostile rule text', () => {
  const hostile = '<img src=x onerror=alert(1)></script><script>alert(2)</script>';

  it('is shown literally in the list, the editor and the test trace; no dialog opens, no script runs', async () => {
    const created = await t.request('POST', '/api/v1/rules', {
      body: {
        context: 'hostile', code: 'XSS', name: hostile, description: hostile, message: `${hostile} {{ $value }}`, fieldPath: 'note',
        expression: `$value != "${hostile.replaceAll('"', '\\"')}" // ${hostile}`, tags: ['<b>bold</b>'],
      },
    });
    expect(created.status).toBe(201);
    const view = await signedIn('/console#/contexts/hostile');
    try {
      const { page } = view;
      await page.getByRole('table').getByRole('link', { name: 'XSS' }).waitFor();
      expect(await page.getByRole('table').getByRole('cell', { name: hostile, exact: true }).count()).toBe(1);

      await page.getByRole('link', { name: 'XSS' }).click();
      await page.getByRole('heading', { name: 'Rule XSS' }).waitFor();
      expect(await page.getByLabel('name', { exact: true }).inputValue()).toBe(hostile);
      expect(await page.getByLabel('message', { exact: true }).inputValue()).toBe(`${hostile} {{ $value }}`);
      expect(await codeEditor(page, 'expression').textContent()).toContain(`// ${hostile}`);
      expect(await page.getByLabel('tags', { exact: true }).inputValue()).toBe('<b>bold</b>');

      await page.getByLabel('payload', { exact: true }).fill(JSON.stringify({ note: hostile }));
      await page.getByRole('button', { name: 'Test' }).click();
      await expect.poll(() => page.locator('.verdict').textContent()).toBe('Invalid: 1 failure.');
      expect(await page.getByRole('table', { name: 'Failures' }).getByRole('cell', { name: `${hostile} ${hostile}`, exact: true }).count()).toBe(1);
      // The payload's value, and the expected value inferred from the expression.
      expect(await page.getByRole('table', { name: 'Trace' }).getByText(JSON.stringify(hostile), { exact: true }).count()).toBe(2);

      // Nothing of it became markup: no image, no script of its own, no bold element.
      expect(await page.locator('img, b').count()).toBe(0);
      expect(await page.locator('script').count()).toBe(1);
      await page.waitForTimeout(300);
      expect(view.dialogs).toEqual([]);
      expect(view.pageErrors).toEqual([]);
      expect(view.cspViolations).toEqual([]);
      expect(view.foreignRequests).toEqual([]);
      await screenshot(page, 'hostile-rule');
    } finally {
      await view.close();
    }
  });
});
