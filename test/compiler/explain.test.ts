/**
 * The explaining variant of a ruleset (compiler/explain-ruleset.ts): on any
 * payload it answers exactly as the live validator does, and its trace says
 * what became of every rule (passed, failed, or skipped and why), in the
 * order failures are reported. The live validator's source does not change
 * (golden.test.ts pins it); here it is checked to hold no trace code.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleset, explainRuleset, type RuleDefinition, type TraceEntry } from '../../compiler/index.ts';
import { payloadArb, rulesetArb } from './arbitraries.ts';

const NOW = Date.UTC(2024, 5, 15, 12, 30);
const SEED = Number(process.env.DIFF_SEED ?? 20_241_127);
const RUNS = Number(process.env.DIFF_RUNS ?? 1);
const BUDGET = 30_000 * RUNS;

/** What the live validator answers, or the error it throws, as JSON. */
function outcome(run: () => unknown): string {
  try {
    return JSON.stringify(run());
  } catch (error) {
    return `throws ${String(error)}`;
  }
}

/** The rules in the order failures are reported: priority, then code in UTF-16 order. */
function evaluationOrder(rules: readonly RuleDefinition[]): string[] {
  return [...rules]
    .sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0) || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
    .map((rule) => rule.code);
}

/** Explained and live answers agree on every payload, and the trace is consistent with the failures. */
function agree(rules: RuleDefinition[], payloads: string[]): void {
  const live = compileRuleset(rules);
  const explaining = explainRuleset(rules);
  expect(explaining.errors).toEqual(live.errors);
  for (const text of payloads) {
    const expected = outcome(() => live.validate(JSON.parse(text), NOW));
    const explained = outcome(() => explaining.explain(JSON.parse(text), NOW));
    if (expected.startsWith('throws')) {
      expect(explained).toBe(expected);
      continue;
    }
    const { trace, ...result } = JSON.parse(explained) as { trace: TraceEntry[]; failures: { ruleCode: string }[] };
    // Compared as the service sends them: JSON, key order included.
    expect(JSON.stringify(result), `payload ${text}`).toBe(expected);
    expect(trace.map((entry) => entry.ruleCode)).toEqual(evaluationOrder(rules));
    const failed = new Set(result.failures.map((failure) => failure.ruleCode));
    for (const entry of trace) {
      const rule = rules.find((r) => r.code === entry.ruleCode);
      expect(entry.outcome === 'failed', `${entry.ruleCode} on ${text}`).toBe(failed.has(entry.ruleCode));
      expect(entry.reason === 'disabled').toBe(rule?.enabled === false);
      expect(entry.reason !== undefined).toBe(entry.outcome === 'skipped');
      expect(entry.fieldPath).toBe(rule?.fieldPath ?? '');
    }
  }
}

describe('explainRuleset agrees with the live validator', () => {
  const payloads = fc.array(payloadArb, { minLength: 1, maxLength: 3 });

  it('on random rulesets (when, fieldPath, required, forEach, disabled, priorities)', () => {
    fc.assert(fc.property(rulesetArb, payloads, (rules, texts) => agree(rules, texts)), { seed: SEED, numRuns: 300 * RUNS });
  }, BUDGET);

  it('on large rulesets, which the live validator splits into parts', () => {
    const large = fc.array(rulesetArb, { minLength: 40, maxLength: 60 }).map((sets) =>
      sets.flatMap((rules, i) => rules.map((r) => ({ ...r, code: `${r.code}.${String(i).padStart(2, '0')}` }))));
    fc.assert(fc.property(large, payloads, (rules, texts) => agree(rules, texts)), { seed: SEED + 1, numRuns: 5 * RUNS });
  }, BUDGET);
});

describe('the trace', () => {
  const trace = (rules: RuleDefinition[], payload: unknown): TraceEntry[] => explainRuleset(rules).explain(payload, NOW).trace;

  it('says a rule failed or passed, with the value and the expected value', () => {
    const rules = [{ code: 'MAX', name: 'Max', fieldPath: 'amount', expression: '$value <= 100' }];
    expect(trace(rules, { amount: 500 })).toEqual([{ ruleCode: 'MAX', outcome: 'failed', fieldPath: 'amount', value: 500, expected: 100 }]);
    expect(trace(rules, { amount: 5 })).toEqual([{ ruleCode: 'MAX', outcome: 'passed', fieldPath: 'amount', value: 5, expected: 100 }]);
  });

  it('says when-false when the condition does not hold, whatever the field', () => {
    const rules = [{ code: 'W', name: 'W', fieldPath: 'x', required: true, when: 'kind == "a"', expression: '$value > 0' }];
    expect(trace(rules, { kind: 'b' })).toEqual([{ ruleCode: 'W', outcome: 'skipped', reason: 'when-false', fieldPath: 'x', expected: 0 }]);
    expect(trace(rules, { kind: 'b', x: -1 })[0]).toMatchObject({ outcome: 'skipped', reason: 'when-false', value: -1 });
    expect(trace(rules, { kind: 'a', x: -1 })[0]).toMatchObject({ outcome: 'failed', value: -1 });
  });

  it('says field-missing for a missing or null field that is not required; a required one fails', () => {
    const optional = [{ code: 'O', name: 'O', fieldPath: 'x', expression: '$value > 0' }];
    expect(trace(optional, {})[0]).toEqual({ ruleCode: 'O', outcome: 'skipped', reason: 'field-missing', fieldPath: 'x', expected: 0 });
    expect(trace(optional, { x: null })[0]).toEqual({ ruleCode: 'O', outcome: 'skipped', reason: 'field-missing', fieldPath: 'x', value: null, expected: 0 });
    const required = [{ code: 'R', name: 'R', fieldPath: 'x', required: true }];
    expect(trace(required, {})).toEqual([{ ruleCode: 'R', outcome: 'failed', fieldPath: 'x' }]);
  });

  it('says disabled for a disabled rule, in its place by priority then code', () => {
    const rules: RuleDefinition[] = [
      { code: 'B', name: 'B', expression: 'true' },
      { code: 'A', name: 'A', expression: 'false', enabled: false },
      { code: 'C', name: 'C', expression: 'false', enabled: false, priority: -1 },
    ];
    expect(trace(rules, {})).toEqual([
      { ruleCode: 'C', outcome: 'skipped', reason: 'disabled', fieldPath: '' },
      { ruleCode: 'A', outcome: 'skipped', reason: 'disabled', fieldPath: '' },
      { ruleCode: 'B', outcome: 'passed', fieldPath: '' },
    ]);
  });

  it('lists the failing elements of a forEach rule; a missing list is field-missing, an empty one passes', () => {
    const rules = [{ code: 'Q', name: 'Q', forEach: 'items', fieldPath: 'items[].qty', required: true, expression: '$value > 0' }];
    expect(trace(rules, { items: [{ qty: 1 }, {}, { qty: 2 }, { qty: 0 }] })).toEqual([
      { ruleCode: 'Q', outcome: 'failed', fieldPath: 'items[].qty', expected: 0, elements: [1, 3] },
    ]);
    expect(trace(rules, { items: [] })[0]).toMatchObject({ outcome: 'passed', elements: [] });
    expect(trace(rules, {})[0]).toEqual({ ruleCode: 'Q', outcome: 'skipped', reason: 'field-missing', fieldPath: 'items[].qty', expected: 0 });
    const shared = [{ code: 'S', name: 'S', forEach: 'items', fieldPath: 'limit', expression: '$item < $value' }];
    expect(trace(shared, { items: [1, 5] })[0]).toMatchObject({ outcome: 'skipped', reason: 'field-missing' });
    expect(trace(shared, { items: [1, 5, 9], limit: 4 })[0]).toMatchObject({ outcome: 'failed', elements: [1, 2] });
  });

  it('leaves the live validator\'s source without trace code', () => {
    const rules = [{ code: 'Q', name: 'Q', forEach: 'items', fieldPath: 'items[].qty', when: '$item.on', expression: '$value > 0' }];
    expect(compileRuleset(rules).source).not.toMatch(/trace|why|elements/);
  });
});
