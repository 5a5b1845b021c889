/**
 * A decision table saved under one MAX_TABLE_ROWS, then compiled by a
 * service (or the CLI) started with a lower one: every place that
 * compiles the ruleset refuses it naming the rule and the place in it
 * (`table.rows`), as the save-time check does, not just the field
 * (`table`). On the real server and database (PGlite, or PostgreSQL with
 * DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestRequestOptions } from '../support/app.ts';
import { cliRunner } from '../support/cli.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

let t: TestApp;
const context = 'lowered';

function api(method: string, path: string, options: TestRequestOptions = {}) {
  return t.request(method, `/api/v1${path}`, options);
}

beforeAll(async () => {
  t = await startTestApp();
  await ok(api('POST', '/rules', {
    body: {
      context,
      code: 'LIMITS',
      name: 'Amount within the product\'s limit',
      fieldPath: 'amount',
      table: {
        hitPolicy: 'first',
        inputs: [{ name: 'product', path: 'product' }],
        outputs: ['maxAmount'],
        rows: [{ when: ['"auto"'], then: [50000] }, { when: ['"boat"'], then: [20000] }, { when: ['-'], then: [1000] }],
      },
      expression: '$value <= $row.maxAmount',
    },
  }), 201);
  // Saved under the default 10,000 rows; from now on a table may have 2.
  await t.restart(undefined, { MAX_TABLE_ROWS: '2' });
});
afterAll(async () => {
  await t?.close();
});

const overLimit = [{ path: 'table.rows', message: 'rule LIMITS: table.rows: a table has at most 2 rows, this one has 3' }];

describe('a table over a MAX_TABLE_ROWS lowered since it was saved', () => {
  it('a publish is 409 naming the rule and the table\'s rows, and nothing goes live', async () => {
    const problem = await expectProblem(api('POST', `/contexts/${context}/publish`), 409, 'LIMIT_EXCEEDED');
    expect(problem.errors).toEqual(overLimit);
    const validated = await api('POST', '/validation/validate', { body: { context, payload: { product: 'auto', amount: 1 } } });
    expect(validated.status, validated.text).toBe(404);
  });

  it('a draft rule test, a stored-test run and an impact report name the same place', async () => {
    const tested = await expectProblem(api('POST', '/rules/test', { body: { context, draft: true, payload: { amount: 1 } } }), 409, 'LIMIT_EXCEEDED');
    expect(tested.errors).toEqual(overLimit);
    for (const path of [`/contexts/${context}/tests/run`, `/contexts/${context}/impact`]) {
      const refused = await expectProblem(api('POST', path), 409, 'LIMIT_EXCEEDED');
      expect(refused.errors).toEqual(overLimit);
    }
  });

  it('the CLI\'s test-drafts names it the same way', async () => {
    const { run } = cliRunner(() => ({ RULES_DATA_DIR: t.database.dataDir, DATABASE_URL: t.database.databaseUrl ?? '', MAX_TABLE_ROWS: '2' }));
    // The embedded database takes one process at a time: the CLI runs while the service is stopped.
    let result: Awaited<ReturnType<typeof run>> | undefined;
    await t.restart(async () => {
      result = await run('test-drafts', t.tenantId, context);
    });
    expect(result?.code).toBe(1);
    expect(result?.stderr).toContain('table.rows: rule LIMITS: table.rows: a table has at most 2 rows, this one has 3');
  });
});
