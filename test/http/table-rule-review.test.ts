/**
 * A decision-table rule's save-time review (its compile check and its
 * warnings, the table's analysis among them) runs on a management thread,
 * since both grow with the table's rows (src/pool/rule-review.ts); any
 * other rule's stays on the event loop. Seen through the pool's task
 * counter, and through what the user gets: the same 201, 400 and warnings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ok } from '../support/expect-response.ts';
import { metricSample } from '../support/metrics.ts';

function reviews(t: TestApp): Promise<number> {
  return metricSample(t, 'rules_pool_tasks_total{kind="ruleReview",outcome="done"}').catch(() => 0);
}

const TABLE = {
  hitPolicy: 'unique',
  inputs: [{ name: 'product', path: 'product' }, { name: 'amount', path: 'amount' }],
  outputs: ['max'],
  rows: [
    { when: ['"auto"', '< 1000'], then: [1] },
    { when: ['"auto"', '< 500'], then: [2] },
  ],
};

describe('decision-table rules are reviewed on a management thread', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('saves, reads and checks a table rule through thread tasks, with the table\'s warnings', async () => {
    const before = await reviews(t);
    const created = await ok(t.request('POST', '/api/v1/rules', {
      body: { context: 'loans', code: 'LIMITS', name: 'limits', fieldPath: 'amount', table: TABLE, expression: '$value <= $row.max * 1000' },
    }), 201);
    // One review for the compile check, one for the warnings it is answered with.
    expect(await reviews(t)).toBe(before + 2);
    expect(created.warnings.map((w: { code: string }) => w.code)).toContain('TABLE_OVERLAP');

    const read = await ok(t.request('GET', `/api/v1/rules/${created.id}`));
    expect(read.warnings.map((w: { code: string }) => w.code)).toContain('TABLE_OVERLAP');
    expect(await reviews(t)).toBe(before + 3);

    const checked = await ok(t.request('POST', '/api/v1/rules/check', {
      body: { rule: { context: 'loans', code: 'LIMITS', name: 'limits', fieldPath: 'amount', table: TABLE } },
    }));
    expect(checked.ok).toBe(true);
    expect(checked.warnings.map((w: { code: string }) => w.code)).toContain('TABLE_OVERLAP');
    expect(await reviews(t)).toBe(before + 4);
  });

  it('refuses a table that does not compile with a 400 naming the cell, from the thread', async () => {
    const before = await reviews(t);
    const bad = { ...TABLE, rows: [{ when: ['"auto"', '<<< 5'], then: [1] }] };
    const response = await t.request('POST', '/api/v1/rules', {
      body: { context: 'loans', code: 'BAD', name: 'bad', fieldPath: 'amount', table: bad },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.body.errors[0].path).toBe('table.rows[0].when[1]');
    expect(await reviews(t)).toBe(before + 1);
  });

  it('tests a table rule through thread tasks, and refuses a bad cell under rule.', async () => {
    const before = await reviews(t);
    const tested = await ok(t.request('POST', '/api/v1/rules/test', {
      body: { rule: { context: 'loans', code: 'LIMITS', name: 'limits', fieldPath: 'amount', table: TABLE }, payload: { product: 'auto', amount: 100 } },
    }));
    expect(tested.warnings.map((w: { code: string }) => w.code)).toContain('TABLE_OVERLAP');
    // One review for the compile check, one for the warnings; the test itself runs as a rule test.
    expect(await reviews(t)).toBe(before + 2);
    const bad = { ...TABLE, rows: [{ when: ['"auto"', '<<< 5'], then: [1] }] };
    const refused = await t.request('POST', '/api/v1/rules/test', {
      body: { rule: { context: 'loans', code: 'BAD', name: 'bad', fieldPath: 'amount', table: bad }, payload: { amount: 1 } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].path).toBe('rule.table.rows[0].when[1]');
  });

  it('keeps any other rule\'s review on the event loop', async () => {
    const before = await reviews(t);
    await ok(t.request('POST', '/api/v1/rules', {
      body: { context: 'loans', code: 'PLAIN', name: 'plain', fieldPath: 'amount', expression: '$value > 0' },
    }), 201);
    expect(await reviews(t)).toBe(before);
  });
});
