/**
 * The grid editor of a decision-table rule, in Chromium against the real
 * service: a table rule created from the console (the "Decision table"
 * kind), its columns named, rows added below and at the end, moved and
 * deleted with the keyboard, three rows pasted from a spreadsheet as
 * tab-separated text, a cell that does not parse marked where it is, the
 * analysis' unreachable row and gaps shown where they belong, then saved,
 * read back over HTTP (JSON and CSV) and after a reload of the page.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchBrowser, screenshot, seriousAccessibilityViolations } from '../support/browser.ts';
import { checkPage, openSignedIn } from '../support/console-pages.ts';

let t: TestApp;
let browser: Browser;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestApp(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** The text input of a cell, named as a screen reader names it: `Row 2 score`. */
function cell(page: Page, row: number, column: string) {
  return page.getByRole('textbox', { name: `Row ${row} ${column}`, exact: true });
}

/** The accessible name of the focused control. */
function focusedName(page: Page): Promise<unknown> {
  return page.evaluate('document.activeElement.getAttribute("aria-label")');
}

/** Every row of the grid as its cells' texts. */
async function gridRows(page: Page): Promise<string[][]> {
  return page.locator('table.table-grid tbody tr').evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('input')].map((input) => input.value)));
}

/** The findings listed beside a row. */
function rowFindings(page: Page, row: number) {
  return page.getByRole('list', { name: `Findings of row ${row}`, exact: true });
}

/** Pastes `text` into a cell as the browser does for a paste from the clipboard: a paste event carrying the text. */
async function paste(page: Page, row: number, column: string, text: string): Promise<void> {
  const target = cell(page, row, column);
  await target.focus();
  // A string, not a function: it runs in the page, whose globals this file's type-check does not know.
  await page.evaluate(`(() => {
    const data = new DataTransfer();
    data.setData('text/plain', ${JSON.stringify(text)});
    document.activeElement.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  })()`);
}

/**
 * Three rows as a spreadsheet copies them: tab-separated, CRLF, a line break at the end. Some spreadsheets quote a cell
 * that holds quotes (`"""auto"""`), some leave it as it is (`"auto"`): both are the text literal `"auto"`.
 */
const tsv = '>= 600\t"auto"\t20000\r\n>= 750\t"""auto"""\t50000\r\n[700..800)\t-\t30000\r\n';

describe('the decision-table grid', () => {
  let ruleId: string;

  it('creates a table rule: columns, rows added, pasted, moved and deleted, cells linted, the analysis beside its rows', async () => {
    const view = await openSignedIn(browser, t, '#/contexts/limits/rules/new');
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'New rule' }).waitFor();
      // The saves the page asks for (the live checks go to /rules/check).
      const saves: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/v1/rules') saves.push(request.url());
      });
      await page.getByLabel('code', { exact: true }).fill('LIMIT_BY_SCORE');
      await page.getByLabel('name', { exact: true }).fill('Limit by score');
      await page.getByLabel('fieldPath', { exact: true }).fill('loan.amount');
      await page.getByRole('radio', { name: 'Decision table' }).check();
      const grid = page.getByRole('table', { name: /^1 row/ });
      await grid.waitFor();
      expect(await gridRows(page)).toEqual([['-', '']]);

      await page.getByLabel('Input 1 name', { exact: true }).fill('score');
      await page.getByLabel('Input 1 path', { exact: true }).fill('applicant.score');
      await page.getByRole('button', { name: 'Add input' }).click();
      await page.getByLabel('Input 2 name', { exact: true }).fill('product');
      await page.getByLabel('Input 2 path', { exact: true }).fill('loan.product');
      await page.getByLabel('Output 1 name', { exact: true }).fill('max');
      // The headers name the columns, grouped as inputs and outputs.
      expect(await page.locator('table.table-grid thead tr').last().getByRole('columnheader').allTextContents())
        .toEqual(['Row', 'score', 'product', 'max', 'Findings', 'Actions']);
      expect(await page.getByRole('columnheader', { name: 'When (inputs)' }).count()).toBe(1);

      await cell(page, 1, 'score').fill('< 600');
      await cell(page, 1, 'max').fill('0');

      // "Add row" adds one at the end and puts the focus in its first cell; three rows pasted there fill it and add two.
      await page.getByRole('button', { name: 'Add row', exact: true }).click();
      await expect.poll(() => focusedName(page)).toBe('Row 2 score');
      await paste(page, 2, 'score', tsv);
      await expect.poll(() => gridRows(page)).toEqual([
        ['< 600', '-', '0'], ['>= 600', '"auto"', '20000'], ['>= 750', '"auto"', '50000'], ['[700..800)', '-', '30000'],
      ]);

      // Under "first", row 3 can never be reached: row 2 takes every input it matches. Said beside row 3, and only there.
      await expect.poll(() => rowFindings(page, 3).textContent(), { timeout: 10_000 })
        .toBe('Unreachable: no input reaches row 3: under hit policy first, every input it matches is taken by an earlier row (row 2)');
      for (const row of [1, 2, 4]) expect(await rowFindings(page, row).count()).toBe(0);
      expect(await page.locator('tr.row-warning').count()).toBe(1);
      // With noMatch "fail", an input no row matches is a gap of the whole table.
      await expect.poll(() => page.getByRole('list', { name: 'Findings about the table' }).textContent()).toMatch(/^Gap: no row matches \{/);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'table-grid-unreachable', { of: page.locator('.table-editor') });

      // A cell that does not parse: invalid, and described by a message naming its row and column.
      await cell(page, 4, 'score').fill('>= 7 +');
      await expect.poll(() => cell(page, 4, 'score').getAttribute('aria-invalid')).toBe('true');
      const describedBy = (await cell(page, 4, 'score').getAttribute('aria-describedby'))!;
      expect(await page.locator(`[id="${describedBy}"]`).textContent()).toBe('Error, row 4, score: unexpected text after the test');
      expect(await cell(page, 4, 'product').getAttribute('aria-invalid')).toBeNull();
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'table-grid-bad-cell', { of: page.locator('.table-editor') });
      await cell(page, 4, 'score').fill('[700..800)');
      await expect.poll(() => cell(page, 4, 'score').getAttribute('aria-invalid')).toBeNull();

      // Add a row below row 1, then delete it: the focus moves to the delete button of the row that takes its place.
      await page.getByRole('button', { name: 'Add a row below row 1' }).click();
      await expect.poll(() => gridRows(page)).toEqual([
        ['< 600', '-', '0'], ['-', '-', ''], ['>= 600', '"auto"', '20000'], ['>= 750', '"auto"', '50000'], ['[700..800)', '-', '30000'],
      ]);
      await expect.poll(() => focusedName(page)).toBe('Row 2 score');
      await page.getByRole('button', { name: 'Delete row 2' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => gridRows(page)).toHaveLength(4);
      await expect.poll(() => focusedName(page)).toBe('Delete row 2');

      // The narrower row moved up, with the keyboard: the focus stays on the row it moved; nothing is unreachable any more.
      await page.getByRole('button', { name: 'Move row 3 up' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => gridRows(page)).toEqual([
        ['< 600', '-', '0'], ['>= 750', '"auto"', '50000'], ['>= 600', '"auto"', '20000'], ['[700..800)', '-', '30000'],
      ]);
      await expect.poll(() => focusedName(page)).toBe('Move row 2 up');
      await expect.poll(() => page.locator('tr.row-warning').count()).toBe(0);
      await page.keyboard.press('Enter');
      await expect.poll(() => gridRows(page).then((rows) => rows[0])).toEqual(['>= 750', '"auto"', '50000']);
      // At the top, "up" is disabled: the focus is on "down" of the same row, which moves it back.
      await expect.poll(() => focusedName(page)).toBe('Move row 1 down');
      await page.keyboard.press('Enter');
      await expect.poll(() => gridRows(page).then((rows) => rows[1])).toEqual(['>= 750', '"auto"', '50000']);
      // The arrows up and down move along a column.
      await cell(page, 2, 'product').focus();
      await page.keyboard.press('ArrowDown');
      await expect.poll(() => focusedName(page)).toBe('Row 3 product');
      await page.keyboard.press('ArrowUp');
      await expect.poll(() => focusedName(page)).toBe('Row 2 product');
      // Enter too, as in a spreadsheet: it does not save the rule.
      await page.keyboard.press('Enter');
      await expect.poll(() => focusedName(page)).toBe('Row 3 product');
      expect(saves).toEqual([]);

      // Under "unique", rows 2 and 3 overlap: said beside row 3 with an input that matches both.
      await page.getByLabel('hitPolicy', { exact: true }).selectOption('unique');
      await expect.poll(() => rowFindings(page, 3).textContent())
        .toMatch(/^Overlap: row 2 and row 3 both match \{"applicant":\{"score":750\},"loan":\{"product":"auto"\}\}: under hit policy unique/);
      expect(await rowFindings(page, 1).count()).toBe(0);
      expect(await rowFindings(page, 2).count()).toBe(0);
      await screenshot(page, 'table-grid-overlap', { of: page.locator('.table-editor') });
      await page.getByLabel('hitPolicy', { exact: true }).selectOption('first');
      await expect.poll(() => page.locator('tr.row-warning').count()).toBe(0);

      await page.getByLabel('noMatch', { exact: true }).selectOption('pass');
      await expect.poll(() => page.getByRole('list', { name: 'Findings about the table' }).count()).toBe(0);
      await page.getByRole('textbox', { name: 'expression', exact: true }).click();
      await page.keyboard.type('$value <= $row.max');
      await checkPage(view, 'table-grid-page');
      await screenshot(page, 'table-grid', { of: page.locator('.table-editor') });

      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('heading', { name: 'Rule LIMIT_BY_SCORE' }).waitFor();
      expect(saves).toHaveLength(1);
      ruleId = decodeURIComponent(page.url().split('#/rules/')[1]);
    } finally {
      await view.close();
    }

    // Over HTTP: the rule holds the table as the grid showed it.
    const saved = await t.request('GET', `/api/v1/rules/${ruleId}`);
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      code: 'LIMIT_BY_SCORE', fieldPath: 'loan.amount', expression: '$value <= $row.max', version: 1, warnings: [],
      table: {
        hitPolicy: 'first', noMatch: 'pass', outputs: ['max'],
        inputs: [{ name: 'score', path: 'applicant.score' }, { name: 'product', path: 'loan.product' }],
        rows: [
          { when: ['< 600', '-'], then: [0] }, { when: ['>= 750', '"auto"'], then: [50000] },
          { when: ['>= 600', '"auto"'], then: [20000] }, { when: ['[700..800)', '-'], then: [30000] },
        ],
      },
    });
    const csv = await t.request('GET', `/api/v1/rules/${ruleId}/table.csv`);
    expect(csv.text.split('\r\n')).toEqual(['score,product,max', '< 600,-,0', '>= 750,"""auto""",50000', '>= 600,"""auto""",20000', '[700..800),-,30000', '']);
  });

  it('shows a saved table after a reload, and saves an edit of its rows as a new version', async () => {
    const view = await openSignedIn(browser, t, `#/rules/${encodeURIComponent(ruleId)}`);
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'Rule LIMIT_BY_SCORE' }).waitFor();
      await page.reload();
      await page.getByRole('heading', { name: 'Rule LIMIT_BY_SCORE' }).waitFor();
      expect(await gridRows(page)).toEqual([
        ['< 600', '-', '0'], ['>= 750', '"auto"', '50000'], ['>= 600', '"auto"', '20000'], ['[700..800)', '-', '30000'],
      ]);
      expect(await page.getByLabel('noMatch', { exact: true }).inputValue()).toBe('pass');
      // The kind of an existing rule is not offered again.
      expect(await page.getByRole('radio', { name: 'Decision table' }).count()).toBe(0);

      await page.getByRole('button', { name: 'Delete row 4' }).click();
      await cell(page, 1, 'max').fill('100');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toContain('Saved as version 2');
    } finally {
      await view.close();
    }
    const saved = await t.request('GET', `/api/v1/rules/${ruleId}`);
    expect(saved.body.version).toBe(2);
    expect(saved.body.table.rows).toEqual([
      { when: ['< 600', '-'], then: [100] }, { when: ['>= 750', '"auto"'], then: [50000] }, { when: ['>= 600', '"auto"'], then: [20000] },
    ]);
  });

  it('shows an archived table rule read-only: its cells can be read, no row can be added, moved or deleted', async () => {
    expect((await t.request('DELETE', `/api/v1/rules/${ruleId}`)).status).toBe(204);
    const view = await openSignedIn(browser, t, `#/rules/${encodeURIComponent(ruleId)}`);
    try {
      const { page } = view;
      await page.getByRole('heading', { name: 'Rule LIMIT_BY_SCORE' }).waitFor();
      expect(await gridRows(page)).toEqual([['< 600', '-', '100'], ['>= 750', '"auto"', '50000'], ['>= 600', '"auto"', '20000']]);
      expect(await cell(page, 1, 'score').getAttribute('readonly')).not.toBeNull();
      expect(await page.getByLabel('hitPolicy', { exact: true }).isDisabled()).toBe(true);
      for (const name of ['Add row', 'Delete row 1', 'Move row 2 up', 'Add input', 'Add output']) {
        expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
      }
      expect(await page.getByRole('columnheader', { name: 'Actions' }).count()).toBe(0);
      await checkPage(view, 'table-grid-archived');
    } finally {
      await view.close();
    }
  });
});
