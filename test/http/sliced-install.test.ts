/**
 * A validator built on a compile thread is installed on the event loop in
 * slices (src/validators/compile-validator.ts `installValidator`): a large
 * context's generated code comes in parts, each part takes turns of the
 * event loop of its own, and the new version is switched to only once all
 * of them are ready; until then the version cached answers. Publishes and
 * rollbacks of a large context install this way, and so does a small
 * context's publish (one part).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuleContent } from '../../src/storage/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ok } from '../support/expect-response.ts';
import { metricSample } from '../support/metrics.ts';

const VALIDATE = '/api/v1/validation/validate';
// Three parts of generated code: a part holds at most 128 rules (compiler/ruleset-source.ts PART_LIMITS).
const LARGE = 300;
const LARGE_PARTS = 3;
// Fails rule L0 of version 1 only: every other rule accepts any amount but a negative integer.
const PROBE = { context: 'large', payload: { amount: -0.5 } };

function rule(i: number): RuleContent {
  return {
    name: `Rule ${i}`, severity: 'Error', required: false, priority: 0, enabled: true, tags: [],
    fieldPath: 'amount', expression: i === 0 ? '$value > 0' : `$value != ${-1 - i}`,
  };
}

interface InstallCounts {
  parts: number;
  slices: number;
  /** Parts installed from the compile lane's code cache. */
  cached: number;
}

async function installCounts(t: TestApp): Promise<InstallCounts> {
  return {
    parts: await metricSample(t, 'rules_validator_install_parts_total'),
    slices: await metricSample(t, 'rules_validator_install_slices_total'),
    cached: await metricSample(t, 'rules_validator_install_code_cache_parts_total{outcome="used"}'),
  };
}

/** The install figures of what `change` made live. */
async function installsOf(t: TestApp, change: () => Promise<unknown>): Promise<InstallCounts> {
  const before = await installCounts(t);
  await change();
  const after = await installCounts(t);
  return { parts: after.parts - before.parts, slices: after.slices - before.slices, cached: after.cached - before.cached };
}

/**
 * Validates PROBE one request after another while `change` runs, and
 * returns which version answered each (1: L0 fails; 2: valid), in order,
 * and how many were answered before the change's answer came.
 */
async function probeWhile(t: TestApp, change: Promise<{ status: number }>): Promise<{ versions: number[]; meanwhile: number }> {
  let settled = false;
  void change.finally(() => {
    settled = true;
  });
  const versions: number[] = [];
  let meanwhile = 0;
  while (!settled) {
    const answer = await ok(t.request('POST', VALIDATE, { body: PROBE }));
    versions.push(answer.isValid === true ? 2 : 1);
    if (!settled) meanwhile++;
    // Paced, so that a compile slowed by busy cores (lifecycle compiles run niced) cannot spend the tenant's rate limit.
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect((await change).status).toBe(200);
  return { versions, meanwhile };
}

/** Whether the versions never go back: an answer of the new version is never followed by one of the old. */
function neverBack(versions: readonly number[]): boolean {
  return versions.every((version, i) => i === 0 || version >= versions[i - 1]);
}

describe('installing a validator in slices', () => {
  let t: TestApp;
  let l0: { id: string; version: number };

  beforeAll(async () => {
    t = await startTestApp();
    for (let i = 0; i < LARGE; i++) {
      const created = await t.storage.rules.create(t.tenantId, 'large', `L${i}`, rule(i), LARGE);
      if (i === 0) l0 = { id: created.id, version: created.version };
    }
  }, 300_000);
  afterAll(async () => {
    await t?.close();
  });

  it('installs a large build a part at a time, the old version answering until the switch', async () => {
    const first = await installsOf(t, () => ok(t.request('POST', '/api/v1/contexts/large/publish')));
    expect(first.parts).toBe(LARGE_PARTS);
    // Each part's bytecode came from the thread that compiled it: the event loop compiled none of them again.
    expect(first.cached).toBe(LARGE_PARTS);
    expect(await metricSample(t, 'rules_validator_install_code_cache_parts_total{outcome="rejected"}')).toBe(0);
    // Two turns of the event loop a part (its code evaluated, then instantiated and called once), one more to end.
    expect(first.slices).toBeGreaterThanOrEqual(2 * LARGE_PARTS + 1);
    expect(await ok(t.request('POST', VALIDATE, { body: PROBE }))).toMatchObject({
      isValid: false, totalRulesEvaluated: LARGE, failures: [expect.objectContaining({ ruleCode: 'L0' })],
    });

    // Version 2: L0 accepts the probe.
    await t.storage.rules.update(t.tenantId, l0.id, l0.version, { ...rule(0), expression: '$value > -1' });
    const before = await installCounts(t);
    const probed = await probeWhile(t, t.request('POST', '/api/v1/contexts/large/publish'));
    const after = await installCounts(t);
    expect(after.parts - before.parts).toBe(LARGE_PARTS);
    expect(probed.meanwhile, 'no validation of the context was answered during its publish').toBeGreaterThan(0);
    expect(probed.versions[0], 'the first answer during the publish was not the old version\'s').toBe(1);
    expect(neverBack(probed.versions), `answers went back to the old version: ${probed.versions.join(',')}`).toBe(true);
    expect(await ok(t.request('POST', VALIDATE, { body: PROBE }))).toMatchObject({ isValid: true, totalRulesEvaluated: LARGE, failures: [] });
  }, 120_000);

  it('installs a rollback the same way', async () => {
    const probed = await probeWhile(t, t.request('POST', '/api/v1/contexts/large/rollback', { body: { rulesetVersion: 1 } }));
    expect(probed.versions[0]).toBe(2);
    expect(probed.versions.every((version, i) => i === 0 || version <= probed.versions[i - 1]), probed.versions.join(',')).toBe(true);
    expect(await ok(t.request('POST', VALIDATE, { body: PROBE }))).toMatchObject({ isValid: false, failures: [expect.objectContaining({ ruleCode: 'L0' })] });
    const again = await installsOf(t, () => ok(t.request('POST', '/api/v1/contexts/large/rollback', { body: { rulesetVersion: 2 } })));
    expect(again.parts).toBe(LARGE_PARTS);
    expect(again.slices).toBeGreaterThanOrEqual(2 * LARGE_PARTS + 1);
  }, 120_000);

  it('installs a small build through the same path, as one part', async () => {
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'small', code: 'A', name: 'a', fieldPath: 'amount', expression: 'amount > 0' } }), 201);
    const small = await installsOf(t, () => ok(t.request('POST', '/api/v1/contexts/small/publish')));
    expect(small.parts).toBe(1);
    expect(small.slices).toBeGreaterThanOrEqual(1);
    expect(await ok(t.request('POST', VALIDATE, { body: { context: 'small', payload: { amount: -1 } } }))).toMatchObject({
      isValid: false, failures: [expect.objectContaining({ ruleCode: 'A' })],
    });
  }, 60_000);
});
