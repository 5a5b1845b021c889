/**
 * The cost model as a pass over the IR (compiler/analysis/cost-pass.ts)
 * against the acorn-based model it replaces (src/validators/evaluation-cost.ts):
 * the same degree and weight for every rule of the corpus the tests use,
 * so that moving the model into the compiler changes no deadline.
 *
 * The corpus: the benchmark suites and the example's rules whole, and every
 * expression, condition and message written in a test, as a rule of each
 * kind (expression, when, message, under forEach), plus decision tables of
 * each strategy.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type RuleDefinition, type TableDefinition } from '../../compiler/index.ts';
import { planRule } from '../../compiler/rule-plan.ts';
import { loanApplicationSuite } from '../../bench/suites/loan-application.ts';
import { realisticLoanSuite } from '../../bench/suites/realistic-loan.ts';
import { generateRuleset } from '../../bench/suites/generated-ruleset.ts';
import { ruleDegree, ruleWeight } from '../../src/validators/evaluation-cost.ts';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') || path.endsWith('.md') ? [path] : [];
  });
}

/** Every `expression: '…'`, `when: "…"`, `"message": "…"` written in the tests and docs, as written. */
function writtenTexts(): string[] {
  const texts = new Set<string>();
  const pattern = /["']?(?:expression|when|message)["']?: (?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)")/g;
  // This file's own cases of a difference are left out: they are checked on their own below.
  const files = [...filesUnder('test'), ...filesUnder('docs')].filter((file) => !file.endsWith('cost-pass-parity.test.ts'));
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(pattern)) {
      const raw = match[1] ?? match[2];
      try {
        // The literal's value: a double-quoted one is JSON; a single-quoted one rarely escapes more than quotes.
        texts.add(match[2] !== undefined ? (JSON.parse(`"${raw}"`) as string) : raw.replace(/\\'/g, "'").replace(/\\\\/g, '\\'));
      } catch {
        texts.add(raw);
      }
    }
  }
  return [...texts];
}

function table(rows: number, cell: (i: number) => string[], hitPolicy: TableDefinition['hitPolicy'] = 'first', inputs?: TableDefinition['inputs']): TableDefinition {
  return {
    hitPolicy,
    inputs: inputs ?? [{ name: 'product', path: 'product' }, { name: 'score', path: 'score' }],
    outputs: ['max'],
    rows: Array.from({ length: rows }, (_, i) => ({ when: cell(i), then: [i] })),
  };
}

function corpus(): RuleDefinition[] {
  const rules: RuleDefinition[] = [
    ...loanApplicationSuite.rules,
    ...realisticLoanSuite.rules,
    ...generateRuleset(200),
    ...(JSON.parse(readFileSync('examples/form/rules.json', 'utf8')) as RuleDefinition[]),
  ];
  writtenTexts().forEach((text, i) => {
    const code = `T${i}`;
    rules.push(
      { code, name: code, expression: text },
      { code, name: code, fieldPath: 'amount', expression: text },
      { code, name: code, expression: 'true', when: text },
      { code, name: code, forEach: 'items', expression: text },
      { code, name: code, expression: 'false', message: text },
      { code, name: code, expression: 'false', message: `{{ ${text} }} and {{ $value }}` },
    );
  });
  const tableRule = (code: string, t: TableDefinition, expression = '$value <= $row.max'): RuleDefinition =>
    ({ code, name: code, fieldPath: 'amount', expression, table: t });
  rules.push(
    tableRule('HASH', table(100, (i) => [JSON.stringify(`p${i}`), '-'])),
    tableRule('RANGE', table(1000, (i) => [JSON.stringify(`p${i}`), `[${i}..${i + 1})`])),
    tableRule('SCAN', table(300, (i) => [`!= "p${i}"`, '-'])),
    tableRule('CELLS', table(200, (i) => [`len($cell) > ${i} && len($cell) < ${i + 5}`, '-'])),
    tableRule('COLLECT', table(500, (i) => [JSON.stringify(`p${i}`), '-'], 'collect')),
    tableRule('INPUTS', table(50, (i) => [`>= ${i}`, '-'], 'first', [
      { name: 'total', expression: 'sum(items.map(i => i.qty * i.price))' },
      { name: 'pairs', expression: 'items.filter(i => items.some(j => j.sku == i.sku)).length' },
    ])),
  );
  return rules;
}

describe('the cost pass over the IR gives what the acorn-based model gave', () => {
  const rules = corpus();
  const compiled = rules.flatMap((rule) => {
    const planned = planRule(rule, DEFAULT_LIMITS);
    return planned.ok ? [{ rule, cost: planned.plan.cost }] : [];
  });

  it('over a corpus of several thousand rules that compile', () => {
    expect(compiled.length).toBeGreaterThan(2000);
  });

  const compare = (rule: RuleDefinition, ir: { degree: number; weight: number }) =>
    ({ expression: rule.expression, when: rule.when, message: rule.message, forEach: rule.forEach, ir, acorn: { degree: ruleDegree(rule), weight: ruleWeight(rule) } });

  it('the same degree and weight for every one but where the old model misread the source', () => {
    const differing = compiled
      .map(({ rule, cost }) => compare(rule, cost))
      .filter(({ ir, acorn }) => ir.degree !== acorn.degree || ir.weight !== acorn.weight);
    // A `{{` inside a placeholder's string: the old model, looking for every `{{`, parsed ` }}` as a
    // placeholder, failed, and assumed the worst (degree 4); the compiler reads one placeholder, a literal.
    expect(differing.map((d) => d.message)).toEqual([expect.stringContaining("{{ '{{' }}")]);
    expect(differing[0].ir.degree).toBeLessThan(differing[0].acorn.degree);
  });

  it('counts a negative number as the literal the compiler folds it into, not as an operation', () => {
    // The one other way the two differ: `-1` is a unary minus to acorn and a literal in the IR, so a
    // callback whose body is only that is linear (it is), where the old model said quadratic.
    const rule: RuleDefinition = { code: 'N', name: 'n', expression: 'len(a.map(x => -1)) > 0' };
    const planned = planRule(rule, DEFAULT_LIMITS);
    if (!planned.ok) throw new Error(planned.errors[0].message);
    expect(compare(rule, planned.plan.cost)).toMatchObject({ ir: { degree: 1 }, acorn: { degree: 2 } });
  });
});
