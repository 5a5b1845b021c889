/**
 * A context's tools in Chromium against the real service: stored tests
 * (edit as JSON, errors shown under the editor, save, run with explain
 * traces), the payload schema (view, a refused schema's place named, save,
 * delete after confirming), the rules file (export downloads it; import
 * shows the dry-run plan, follows the prune and publish options, then
 * applies; a file with a broken rule is refused naming the rule), and the
 * generated validator code shown as text.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser } from '../support/browser.ts';
import { checkPage, openSignedIn, tabTo } from '../support/console-pages.ts';

const POLL = { timeout: 15_000, interval: 100 };

let t: TestApp;
let browser: Browser;
let files: string;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
  files = await mkdtemp(path.join(tmpdir(), 'rules-console-files-'));
  for (const rule of [
    { code: 'TOTAL_MAX', name: 'Order total limit', fieldPath: 'total', expression: '$value <= 100' },
    { code: 'CURRENCY', name: 'Euro only', fieldPath: 'currency', expression: '$value == "EUR"' },
  ]) {
    expect((await t.request('POST', '/api/v1/rules', { body: { context: 'orders', ...rule } })).status).toBe(201);
  }
  expect((await t.request('POST', '/api/v1/contexts/orders/publish')).status).toBe(200);
  expect((await t.request('POST', '/api/v1/rules', { body: { context: 'drafts-only', code: 'A', name: 'A', fieldPath: 'a', expression: '$value > 0' } })).status).toBe(201);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  if (files !== undefined) await rm(files, { recursive: true, force: true });
});

describe('stored tests', () => {
  it('edits the tests as JSON, shows what is wrong under the editor, saves, runs them and shows the traces', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/orders/tests');
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'Tests of orders' }).waitFor();
      const editor = page.getByLabel('Stored tests (JSON)');
      await expect.poll(() => editor.inputValue(), POLL).toBe('[]');

      await editor.fill('[{"name": "x",');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.locator('#tests-parse-problem').textContent(), POLL).toMatch(/^Not valid JSON: /);
      expect(await editor.getAttribute('aria-describedby')).toContain('tests-parse-problem');

      const test = (name: string, total: number, expect: object) => ({ name, payload: { total, currency: 'EUR' }, expect });
      await editor.fill(JSON.stringify([test('same', 1, { isValid: true }), test('same', 2, { isValid: true })]));
      await page.getByRole('button', { name: 'Save' }).click();
      const problem = page.locator('#tests-problems');
      await expect.poll(() => problem.textContent(), POLL).toContain('tests[1].name');
      expect((await t.request('GET', '/api/v1/contexts/orders/tests')).body.tests).toEqual([]);

      const tests = [test('small order passes', 50, { isValid: true }), test('big order passes too', 500, { isValid: true })];
      await editor.fill(JSON.stringify(tests));
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).textContent(), POLL).toBe('Saved 2 tests.');
      expect((await t.request('GET', '/api/v1/contexts/orders/tests')).body.tests).toEqual(tests);

      await page.getByRole('heading', { name: 'Tests of orders' }).focus();
      await tabTo(page, 'Run tests');
      await page.keyboard.press('Enter');
      const results = page.getByRole('region', { name: 'Test results' });
      await expect.poll(() => results.getByRole('status').textContent(), POLL).toBe('1 passed, 1 failed against the drafts.');
      const big = results.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'big order passes too' }) });
      expect(await big.getByRole('cell').first().textContent()).toBe('Failed');
      await big.locator('summary').click();
      const trace = page.getByRole('table', { name: 'Trace of big order passes too' });
      const totalMax = trace.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'TOTAL_MAX' }) });
      expect(await totalMax.getByRole('cell').allTextContents()).toEqual(['failed', 'total', '500', '100']);
      const currency = trace.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'CURRENCY' }) });
      expect(await currency.getByRole('cell').first().textContent()).toBe('passed');
      await checkPage(view, 'tests');
    } finally {
      await view.close();
    }
  });
});

describe('payload schema', () => {
  it('shows there is none, names the place of a refused schema, saves one and deletes it after confirming', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/orders/payload-schema');
    try {
      const { page } = view;
      await page.getByText('The context has no payload schema.').waitFor();
      const editor = page.getByLabel('Payload schema (JSON)');
      await editor.fill(JSON.stringify({ type: 'object', properties: { total: { type: 'number', minimum: 'zero' } } }));
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.locator('#schema-problem').textContent(), POLL).toContain('properties.total.minimum');
      expect(await editor.getAttribute('aria-invalid')).toBe('true');

      const schema = { type: 'object', properties: { total: { type: 'number' }, currency: { enum: ['EUR', 'USD'] } } };
      await editor.fill(JSON.stringify(schema));
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'saved' }).textContent(), POLL).toBe('Payload schema saved.');
      expect((await t.request('GET', '/api/v1/contexts/orders/payload-schema')).body).toEqual(schema);
      await expect.poll(() => editor.inputValue(), POLL).toBe(JSON.stringify(schema, null, 2));
      await checkPage(view, 'payload-schema');

      await page.getByRole('button', { name: 'Delete schema' }).click();
      const confirm = page.getByRole('group', { name: 'Confirm deleting the payload schema' });
      // Cancel keeps it.
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      expect((await t.request('GET', '/api/v1/contexts/orders/payload-schema')).status).toBe(200);
      await page.getByRole('button', { name: 'Delete schema' }).click();
      await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'deleted' }).textContent(), POLL).toBe('Payload schema deleted.');
      await page.getByText('The context has no payload schema.').waitFor();
      expect((await t.request('GET', '/api/v1/contexts/orders/payload-schema')).status).toBe(404);
      expect(view.dialogs).toEqual([]);
    } finally {
      await view.close();
    }
  });
});

describe('rules file', () => {
  it('exports the rules file, then re-imports an edited copy: plan first, options followed, then applied', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/orders/files');
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'Rules file of orders' }).waitFor();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export' }).click()]);
      expect(download.suggestedFilename()).toBe('orders.rules.json');
      const exported = path.join(files, 'orders.rules.json');
      await download.saveAs(exported);
      const document = JSON.parse(await readFile(exported, 'utf8'));
      expect(document).toEqual((await t.request('GET', '/api/v1/contexts/orders/export')).body);
      expect(document.rules.map((rule: { code: string }) => rule.code)).toEqual(['CURRENCY', 'TOTAL_MAX']);
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Downloaded' }).textContent(), POLL)
        .toBe(`Downloaded orders.rules.json: 2 rules, ${document.tests.length} tests.`);

      // The copy: TOTAL_MAX raised, CURRENCY gone, ZIP new.
      const edited = {
        ...document,
        rules: [
          { ...document.rules[1], expression: '$value <= 1000' },
          { code: 'ZIP', name: 'Zip code', fieldPath: 'zip', expression: '$value != ""', when: '1 > 0' },
        ],
      };
      const editedFile = path.join(files, 'edited.rules.json');
      await writeFile(editedFile, JSON.stringify(edited));
      await page.getByLabel('Rules file').setInputFiles(editedFile);
      const plan = page.getByRole('region', { name: 'Import plan' });
      await plan.waitFor();
      const group = (title: string) => plan.locator('.plan-group').filter({ has: page.getByRole('heading', { name: new RegExp(`^${title} `) }) });
      expect(await group('Create').getByRole('listitem').allTextContents()).toEqual(['ZIP']);
      expect(await group('Update').getByRole('listitem').allTextContents()).toEqual(['TOTAL_MAX']);
      expect(await group('Archive').textContent()).toContain('none');
      expect(await plan.getByRole('list', { name: 'Warnings of the file' }).textContent()).toMatch(/^rules\[1\]\.when CONSTANT: /);
      // Nothing changed yet.
      expect((await t.request('GET', '/api/v1/rules?context=orders')).body.items).toHaveLength(2);

      await page.getByLabel('Archive rules the file does not have (prune)').check();
      await expect.poll(() => group('Archive').getByRole('listitem').allTextContents(), POLL).toEqual(['CURRENCY']);
      await page.getByLabel('Publish in the same step (publish)').check();
      await checkPage(view, 'import-plan');

      await page.getByRole('button', { name: 'Import', exact: true }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Imported' }).textContent(), POLL)
        .toBe('Imported: 1 created, 1 updated, 1 archived.');
      const versions = (await t.request('GET', '/api/v1/contexts/orders/versions')).body.items;
      expect(versions[0]).toMatchObject({ rulesetVersion: 2, action: 'import', rules: 2 });
      const live = (await t.request('GET', '/api/v1/contexts/orders/export')).body;
      expect(live.rules.map((rule: { code: string; expression: string }) => [rule.code, rule.expression]))
        .toEqual([['TOTAL_MAX', '$value <= 1000'], ['ZIP', '$value != ""']]);
      // The Import button waits for a new file's plan.
      expect(await page.getByRole('button', { name: 'Import', exact: true }).isDisabled()).toBe(true);
      expect(view.dialogs).toEqual([]);
    } finally {
      await view.close();
    }
  });

  it('names the broken rule of a refused file and the parse error of a file that is not JSON, and changes nothing', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/orders/files');
    try {
      const { page } = view;
      const notJson = path.join(files, 'not.json');
      await writeFile(notJson, 'rules: [');
      await page.getByLabel('Rules file').setInputFiles(notJson);
      await expect.poll(() => page.locator('#import-file-problem').textContent(), POLL).toMatch(/^not\.json: Not valid JSON/);

      const broken = path.join(files, 'broken.json');
      await writeFile(broken, JSON.stringify({
        format: 'rules/v1', context: 'orders', rulesetVersion: null, payloadSchema: null, tests: [],
        rules: [{ code: 'OK', name: 'ok', fieldPath: 'a', expression: '$value > 0' }, { code: 'BAD', name: 'bad', fieldPath: 'a', expression: '$value >' }],
      }));
      await page.getByLabel('Rules file').setInputFiles(broken);
      await expect.poll(() => page.locator('#import-problem').textContent(), POLL).toContain('rules[1].expression');
      expect(await page.locator('#import-file-problem').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Import', exact: true }).isDisabled()).toBe(true);
      await checkPage(view, 'import-refused');
    } finally {
      await view.close();
    }
  });
});

describe('validator', () => {
  it('shows the generated code of the live ruleset as text, and says when there is none', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/orders/validator');
    try {
      const { page } = view;
      const code = page.getByRole('region', { name: 'Generated validator code' });
      await code.waitFor();
      const expected = (await t.request('GET', '/api/v1/contexts/orders/validator')).text;
      expect(await code.textContent()).toBe(expected);
      expect(expected).toContain('ZIP');
      await checkPage(view, 'validator');

      await page.evaluate('location.hash = "#/contexts/drafts-only/validator"');
      await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('drafts-only');
    } finally {
      await view.close();
    }
  });
});
