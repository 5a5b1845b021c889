/**
 * The impact report in the console, in Chromium against the real service:
 * with sampling on and real validations recorded, the changes page shows
 * what publishing the drafts would do to that traffic (counts, the rules
 * whose outcome changes, examples whose payload opens on demand), and
 * recorded payloads are shown as text.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser } from '../support/browser.ts';
import { checkPage, openSignedIn } from '../support/console-pages.ts';
import { ok } from '../support/expect-response.ts';

let t: TestApp;
let browser: Browser;

/** A recorded payload that would run script if it were ever treated as markup. */
const HOSTILE_NOTE = '<img src=x onerror="alert(1)">';

beforeAll(async () => {
  // The writer stores samples only when the test flushes it: the report sees exactly these.
  [t, browser] = await Promise.all([startTestApp({ sampling: { flushIntervalMs: 3_600_000, pruneIntervalMs: 3_600_000 } }), launchBrowser()]);
  const rule = await ok(t.request('POST', '/api/v1/rules', {
    body: { context: 'loans', code: 'LIMIT', name: 'Loan limit', fieldPath: 'amount', expression: '$value <= 1000' },
  }), 201);
  await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
  await ok(t.request('PUT', '/api/v1/tenant/sampling', { body: { rate: 1 } }));
  for (const amount of [50, 500, 5000]) {
    await ok(t.request('POST', '/api/v1/validation/validate', { body: { context: 'loans', payload: { amount, note: HOSTILE_NOTE } } }));
  }
  await t.app.internals.samples.flush();
  // The draft lowers the limit: the 500 payload would become invalid.
  await ok(t.request('PUT', `/api/v1/rules/${rule.id}`, { body: { ...rule, expression: '$value <= 100' } }));
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the impact report beside the publish button', () => {
  it('replays the recorded payloads against the drafts and shows what would change, and an example\'s payload as text', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/loans/changes');
    try {
      const { page } = view;
      const impact = page.getByRole('region', { name: 'Impact on recorded traffic' });
      await impact.getByRole('button', { name: 'Show impact' }).click();
      await expect.poll(async () => impact.getByRole('status').textContent())
        .toBe('Of 3 recorded payloads: 2 unchanged, 1 would become invalid, 0 would become valid, 0 would fail other rules.');

      const limitRow = impact.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'LIMIT' }) });
      expect(await limitRow.getByRole('cell').allTextContents()).toEqual(['1', '0']);

      // The report has the page's width, not half of it beside the publish form.
      const [impactBox, mainBox] = [await impact.boundingBox(), await page.locator('main').boundingBox()];
      expect(impactBox!.width).toBeGreaterThan(mainBox!.width * 0.9);

      const examples = impact.getByRole('table', { name: 'Examples' });
      const [example] = await examples.getByRole('row').all().then((rows) => rows.slice(1));
      const sampleId = (await t.request('POST', '/api/v1/contexts/loans/impact', { body: { target: 'draft' } })).body.examples[0].sampleId as string;
      const cells = await example.getByRole('cell').allTextContents();
      expect(cells.slice(1, 3)).toEqual(['valid', 'invalid (LIMIT)']);
      // Which sample it is, to look it up or quote it.
      expect(await example.getByRole('rowheader').textContent()).toBe(sampleId);
      const show = example.getByRole('button', { name: `Show payload of sample ${sampleId}` });
      // One line, not a word per line in a squeezed column.
      expect((await show.boundingBox())!.height).toBeLessThan(40);
      await show.click();
      const payload = examples.getByRole('region', { name: `Payload of sample ${sampleId}` }).locator('pre');
      await payload.waitFor();
      expect(JSON.parse((await payload.textContent())!)).toEqual({ amount: 500, note: HOSTILE_NOTE });
      // Readable: the payload spans the table, not a 100 px column.
      expect((await payload.boundingBox())!.width).toBeGreaterThan(impactBox!.width * 0.8);
      expect(await page.locator('img').count()).toBe(0);
      await checkPage(view, 'impact');
    } finally {
      await view.close();
    }
  });

  it('is not offered once sampling is off', async () => {
    await ok(t.request('PUT', '/api/v1/tenant/sampling', { body: { rate: 0 } }));
    const view = await openSignedIn(browser, t);
    try {
      const { page } = view;
      // The panel decides on GET /tenant: look only once the page has had that answer and drawn a frame after it.
      const tenantRead = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/tenant');
      await page.evaluate('location.hash = "#/contexts/loans/changes"');
      expect((await (await tenantRead).json()).sampling.rate).toBe(0);
      await page.getByRole('button', { name: 'Publish' }).waitFor();
      await page.evaluate('new Promise((drawn) => requestAnimationFrame(() => requestAnimationFrame(drawn)))');
      expect(await page.getByRole('region', { name: 'Impact on recorded traffic' }).count()).toBe(0);
    } finally {
      await view.close();
    }
  });
});
