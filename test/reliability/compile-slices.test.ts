/**
 * Compiling a large context does not stall other tenants (docs/api.md:
 * limits are enforced "none crashing or stalling the process").
 *
 * A context of rules that are each kilobytes of distinct regexes takes
 * seconds to compile. Compiles run on the compile lane's threads
 * (src/pool/compile-lane.ts), the event loop only installing their output:
 * while one tenant publishes or recompiles such a context, another
 * tenant's validations keep being answered, each waiting at most a
 * fraction of the compile. The bound is a ratio against the compile measured in the same
 * run, not a fixed time.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuleContent } from '../../src/storage/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { BackgroundLoad, report, summarize, UNLIMITED } from './support/measure.ts';

const RULES = 400;

let t: TestApp;
// Patterns and expressions are memoized per process; a salt keeps every run's new.
const salt = randomBytes(4).toString('hex');

/**
 * About 3,900 characters of `matches()` over distinct patterns: costly to
 * check and compile. Anchored, so that they run on the native engine and
 * weigh little (400 such rules weigh about 240,000, within a ruleset's bound).
 */
function heavyExpression(tag: string, rule: number): string {
  const calls: string[] = [];
  let length = 0;
  for (let k = 0; ; k++) {
    const call = `matches(code, "^(a|${tag}${salt}${rule}_${k})[c-w]+x$")`;
    if (length + call.length + 4 > 3900) break;
    calls.push(call);
    length += call.length + 4;
  }
  return calls.join(' || ');
}

function heavyRule(tag: string, rule: number): RuleContent {
  return {
    name: `Heavy ${rule}`, severity: 'Error', required: false, priority: 0, enabled: true, tags: [],
    expression: heavyExpression(`${tag}e`, rule),
    when: `${heavyExpression(`${tag}w`, rule)} || exists(code)`,
    message: '{{ items.map(x => x.v) }} '.repeat(30),
  };
}

/**
 * Saved through storage, which stores rules without compiling them (POST
 * /rules would compile each, and its memos would make the publish cheap):
 * the publish then compiles as a process does after a restart.
 */
async function seedHeavyContext(context: string, tag: string): Promise<void> {
  for (let i = 0; i < RULES; i++) await t.storage.rules.create(t.tenantId, context, `H${i}`, heavyRule(tag, i), RULES);
}

beforeAll(async () => {
  t = await startTestApp({ env: UNLIMITED });
  await seedHeavyContext('heavy', 'p');
  await seedHeavyContext('again', 'r');
  // The other tenant's context: small, published, cached.
  const rule = await t.request('POST', '/api/v1/rules', {
    key: t.otherAdminKey, tenant: t.otherTenantId,
    body: { context: 'small', code: 'POS', name: 'Positive', fieldPath: 'amount', expression: '$value > 0' },
  });
  expect(rule.status, rule.text).toBe(201);
  const published = await t.request('POST', '/api/v1/contexts/small/publish', { key: t.otherAdminKey, tenant: t.otherTenantId });
  expect(published.status, published.text).toBe(200);
}, 180_000);

afterAll(async () => {
  await t?.close();
});

/** The other tenant validating, one request at a time, until stopped. */
function otherTenantLoad(): BackgroundLoad {
  return new BackgroundLoad(async () => {
    const response = await t.request('POST', '/api/v1/validation/validate', {
      key: t.otherAdminKey, tenant: t.otherTenantId, body: { context: 'small', payload: { amount: -1 } },
    });
    return response.status === 200 && response.body.isValid === false && response.body.failures[0]?.ruleCode === 'POS';
  });
}

/** The other tenant's management calls, which read the database: on the embedded one, they queue behind any open transaction. */
function otherTenantManagementLoad(): BackgroundLoad {
  return new BackgroundLoad(async () => {
    const response = await t.request('GET', '/api/v1/rules?context=small', { key: t.otherAdminKey, tenant: t.otherTenantId });
    return response.status === 200 && response.body.items.length === 1;
  });
}

async function compileCost(context: string): Promise<number> {
  const contexts = await t.request('GET', '/api/v1/contexts');
  return (contexts.body.items as Array<{ context: string; compileMs: number }>).find((c) => c.context === context)!.compileMs;
}

describe('a tenant compiling a large context', () => {
  it('publishes it while another tenant keeps being answered, validations and management calls alike', async () => {
    const load = otherTenantLoad();
    const management = otherTenantManagementLoad();
    load.start();
    management.start();
    const started = performance.now();
    const published = await t.request('POST', '/api/v1/contexts/heavy/publish');
    const publishMs = performance.now() - started;
    const { latencies, failures } = await load.stop();
    const managed = await management.stop();

    expect(published.status, published.text).toBe(200);
    expect(published.body).toMatchObject({ context: 'heavy', rulesetVersion: 1 });
    expect(published.body.published).toHaveLength(RULES);
    const compileMs = await compileCost('heavy');
    const waits = summarize(latencies);
    const managementWaits = summarize(managed.latencies);
    report('compile slices: publish', {
      compileMs: Math.round(compileMs), publishMs: Math.round(publishMs), otherTenant: waits, otherTenantManagement: managementWaits,
    });
    // The compile is long enough for a stall to show: seconds of work.
    expect(compileMs).toBeGreaterThan(1000);
    expect(failures).toEqual([]);
    // Answered all along, not once at the end: a stalled loop answers a handful.
    expect(latencies.length).toBeGreaterThan(20);
    expect(waits.max).toBeLessThan(compileMs / 4);
    // The publish compiled before its transaction, so the database was free meanwhile.
    expect(managed.failures).toEqual([]);
    expect(managed.latencies.length).toBeGreaterThan(10);
    expect(managementWaits.max).toBeLessThan(compileMs / 4);

    const validated = await t.request('POST', '/api/v1/validation/validate', { body: { context: 'heavy', payload: { code: 'bx', items: [{ v: 1 }] } } });
    expect(validated.status).toBe(200);
    expect(validated.body).toMatchObject({ isValid: false, totalRulesEvaluated: RULES });
    expect(validated.body.failures[0].message).toMatch(/^\[1\] \[1\] /);
  }, 120_000);

  it('recompiles one, several times at once, while another tenant keeps being answered', async () => {
    // Made live without a compile, as another instance's publish would be.
    await t.storage.rules.publishContext(t.tenantId, 'again', () => undefined);
    const load = otherTenantLoad();
    load.start();
    const recompiles = await Promise.all([1, 2, 3].map(() => t.request('POST', '/api/v1/contexts/again/recompile')));
    const { latencies, failures } = await load.stop();

    for (const recompiled of recompiles) {
      expect(recompiled.status, recompiled.text).toBe(200);
      expect(recompiled.body).toMatchObject({ context: 'again', rulesetVersion: 1, rules: RULES });
    }
    // The first compile is cold; the ones queued behind it find the compiler's memos warm.
    const compileMs = Math.max(...recompiles.map((r) => r.body.compileMs as number));
    const waits = summarize(latencies);
    report('compile slices: 3 recompiles', { compileMs: Math.round(compileMs), otherTenant: waits });
    expect(compileMs).toBeGreaterThan(1000);
    expect(failures).toEqual([]);
    expect(latencies.length).toBeGreaterThan(20);
    expect(waits.max).toBeLessThan(compileMs / 4);
  }, 120_000);
});
