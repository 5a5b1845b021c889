/**
 * The impact report's replay and counting (src/rules/impact-report.ts),
 * with real compiled validators: the four counts partition the samples,
 * `byRule` counts samples per rule, examples stop at 20 of each kind and
 * come grouped by kind, newest first; nothing live means every sample was
 * valid; a sample a ruleset cannot answer in time counts as invalid with no
 * failing rule, and the replay as a whole stops at its budget.
 */
import { describe, expect, it } from 'vitest';
import type { RuleDefinition } from '../../compiler/types.ts';
import type { CompiledValidator } from '../../src/app-deps.ts';
import {
  EXAMPLES_PER_KIND, ImpactReplay, ReplayBudgetExceededError, replayImpact, type ReplaySample,
} from '../../src/rules/impact-report.ts';
import { compileValidator } from '../../src/validators/compile-validator.ts';

const limits = { maxPayloadDepth: 32, evaluationDeadlineMs: 1000, budgetMs: 10_000 };
const NOW = Date.parse('2026-11-27T12:00:00Z');

async function compiled(rules: RuleDefinition[], rulesetVersion = 1): Promise<CompiledValidator> {
  const { validator, errors } = await compileValidator({ tenantId: 't', context: 'c', rulesetVersion, rules }, {});
  expect(errors).toEqual([]);
  return validator!;
}

const rule = (code: string, expression: string): RuleDefinition => ({ code, name: code, expression, message: `${code} fails` });

/** Samples of these payloads, the first the newest. */
function samplesOf(payloads: unknown[]): ReplaySample[] {
  return payloads.map((payload, i) => ({ id: `s${i}`, recordedAt: new Date(NOW - i * 1000), payload }));
}

describe('replayImpact', () => {
  it('partitions the samples into four counts and counts each rule\'s new and resolved failures in samples', async () => {
    const live = await compiled([rule('LIMIT', 'amount <= 100'), rule('TERM', 'term <= 12')]);
    const target = await compiled([rule('LIMIT', 'amount <= 200'), rule('MIN', 'amount >= 10'), rule('TERM', 'term <= 12')], 2);
    const samples = samplesOf([
      { amount: 50, term: 6 },
      { amount: 150, term: 6 },
      { amount: 5, term: 6 },
      { amount: 500, term: 24 },
      { amount: 150, term: 24 },
      { amount: 5, term: 24 },
      { amount: 6, term: 1 },
    ]);
    const report = replayImpact(samples, { live, target }, limits, NOW);
    expect(report).toEqual({
      samples: 7, unchanged: 2, becameInvalid: 2, becameValid: 1, failuresChanged: 2,
      byRule: [
        { ruleCode: 'MIN', newFailures: 3, resolvedFailures: 0 },
        { ruleCode: 'LIMIT', newFailures: 0, resolvedFailures: 2 },
      ],
      examples: [
        { sampleId: 's2', recordedAt: new Date(NOW - 2000).toISOString(), live: { isValid: true, failures: [] }, target: { isValid: false, failures: ['MIN'] } },
        { sampleId: 's6', recordedAt: new Date(NOW - 6000).toISOString(), live: { isValid: true, failures: [] }, target: { isValid: false, failures: ['MIN'] } },
        { sampleId: 's1', recordedAt: new Date(NOW - 1000).toISOString(), live: { isValid: false, failures: ['LIMIT'] }, target: { isValid: true, failures: [] } },
        {
          sampleId: 's4', recordedAt: new Date(NOW - 4000).toISOString(),
          live: { isValid: false, failures: ['LIMIT', 'TERM'] }, target: { isValid: false, failures: ['TERM'] },
        },
        {
          sampleId: 's5', recordedAt: new Date(NOW - 5000).toISOString(),
          live: { isValid: false, failures: ['TERM'] }, target: { isValid: false, failures: ['MIN', 'TERM'] },
        },
      ],
    });
    expect(report.unchanged + report.becameInvalid + report.becameValid + report.failuresChanged).toBe(report.samples);
  });

  it('keeps at most 20 examples of each kind, and counts them all', async () => {
    const live = await compiled([rule('EVEN', 'n % 2 == 0')]);
    const target = await compiled([rule('ODD', 'n % 2 == 1')], 2);
    const report = replayImpact(samplesOf(Array.from({ length: 50 }, (_, n) => ({ n }))), { live, target }, limits, NOW);
    expect(report).toMatchObject({ samples: 50, unchanged: 0, becameInvalid: 25, becameValid: 25, failuresChanged: 0 });
    expect(report.examples).toHaveLength(2 * EXAMPLES_PER_KIND);
    expect(report.examples.slice(0, 20).every((e) => !e.target.isValid)).toBe(true);
    expect(report.examples.slice(20).every((e) => e.target.isValid)).toBe(true);
    expect(report.byRule).toEqual([
      { ruleCode: 'EVEN', newFailures: 0, resolvedFailures: 25 },
      { ruleCode: 'ODD', newFailures: 25, resolvedFailures: 0 },
    ]);
  });

  it('counts every sample as valid live when nothing is live', async () => {
    const target = await compiled([rule('POSITIVE', 'amount > 0')]);
    const report = replayImpact(samplesOf([{ amount: 1 }, { amount: -1 }]), { live: null, target }, limits, NOW);
    expect(report).toMatchObject({ samples: 2, unchanged: 1, becameInvalid: 1, byRule: [{ ruleCode: 'POSITIVE', newFailures: 1, resolvedFailures: 0 }] });
  });

  it('finds nothing changed when the target is the live ruleset itself', async () => {
    const live = await compiled([rule('POSITIVE', 'amount > 0')]);
    const report = replayImpact(samplesOf([{ amount: 1 }, { amount: -1 }]), { live, target: live }, limits, NOW);
    expect(report).toEqual({ samples: 2, unchanged: 2, becameInvalid: 0, becameValid: 0, failuresChanged: 0, byRule: [], examples: [] });
  });

  it('answers an empty report for no samples', async () => {
    const live = await compiled([rule('POSITIVE', 'amount > 0')]);
    expect(replayImpact([], { live, target: live }, limits, NOW)).toMatchObject({ samples: 0, unchanged: 0, examples: [] });
  });

  it('counts a sample the target cannot answer within the deadline as invalid with no failing rule', async () => {
    const live = await compiled([rule('SMALL', 'len(items) <= 100000')]);
    // Quadratic in the number of items: under the watchdog, and stopped.
    const target = await compiled([rule('PAIRS', 'items.every(x => items.every(y => x == y || x != y))')], 2);
    const hostile = { items: Array.from({ length: 5000 }, (_, i) => i) };
    const report = replayImpact(samplesOf([{ items: [1, 2] }, hostile]), { live, target }, { ...limits, evaluationDeadlineMs: 5 }, NOW);
    expect(report).toMatchObject({ samples: 2, unchanged: 1, becameInvalid: 1, byRule: [] });
    expect(report.examples).toEqual([expect.objectContaining({ sampleId: 's1', live: { isValid: true, failures: [] }, target: { isValid: false, failures: [] } })]);
  });

  it('counts a payload deeper than the depth limit as invalid under both', async () => {
    const live = await compiled([rule('POSITIVE', 'amount > 0')]);
    const report = replayImpact(samplesOf([{ amount: 1, deep: { a: { b: { c: 1 } } } }]), { live, target: live }, { ...limits, maxPayloadDepth: 2 }, NOW);
    expect(report).toMatchObject({ samples: 1, unchanged: 1 });
  });

  it('stops at its budget of evaluation time, however long each evaluation may be', async () => {
    const live = await compiled([rule('PAIRS', 'items.every(x => items.every(y => x == y || x != y))')]);
    const hostile = { items: Array.from({ length: 5000 }, (_, i) => i) };
    expect(() => replayImpact(samplesOf([hostile, hostile, hostile]), { live: null, target: live }, { ...limits, budgetMs: 20 }, NOW))
      .toThrow(ReplayBudgetExceededError);
  });

  it('takes samples a page at a time, one sample a step, and reports them all as one', async () => {
    const live = await compiled([rule('POSITIVE', 'amount > 0')]);
    const target = await compiled([rule('POSITIVE', 'amount > 1')], 2);
    const samples = samplesOf([{ amount: 1 }, { amount: 2 }, { amount: 3 }]);
    const replay = new ImpactReplay({ live, target }, limits, NOW);
    let steps = 0;
    for (const page of [samples.slice(0, 2), samples.slice(2)]) {
      for (const _step of replay.steps(page)) steps++;
    }
    expect(steps).toBe(3);
    expect(replay.report()).toEqual(replayImpact(samples, { live, target }, limits, NOW));
    expect(replay.report()).toMatchObject({ samples: 3, unchanged: 2, becameInvalid: 1 });
  });
});
