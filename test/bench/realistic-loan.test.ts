/**
 * The realistic-loan benchmark compares like with like: on every one of
 * its 1,000 payloads the compiled validator and the hand-written one give
 * the same result, key order included, and the payloads are what the
 * suite says (about 30% invalid, every rule failing somewhere), so a
 * ratio between the two measures speed, not different work.
 */
import { describe, expect, it } from 'vitest';
import { compileRuleset } from '../../compiler/index.ts';
import { validateRealisticLoanByHand } from '../../bench/engines/hand-written-realistic-loan.ts';
import { validateRealisticLoanLean } from '../../bench/engines/lean-realistic-loan.ts';
import { realisticLoanPayloads, realisticLoanSuite as suite } from '../../bench/suites/realistic-loan.ts';

describe('realistic-loan suite', () => {
  const compiled = compileRuleset([...suite.rules]);

  it('compiles every rule', () => {
    expect(compiled.errors).toEqual([]);
    expect(compiled.ruleCount).toBe(20);
  });

  it('the compiled and the hand-written validator agree on every payload, key order included', () => {
    const mismatches: number[] = [];
    suite.payloads.forEach((payload, index) => {
      const byHand = validateRealisticLoanByHand(payload);
      const byCompiler = compiled.validate(payload, suite.now);
      if (JSON.stringify(byCompiler) !== JSON.stringify(byHand)) mismatches.push(index);
    });
    // Show the first disagreement in full when there is one.
    if (mismatches.length > 0) {
      const payload = suite.payloads[mismatches[0]];
      expect(validateRealisticLoanByHand(payload)).toEqual(compiled.validate(payload, suite.now));
    }
    expect(mismatches).toEqual([]);
  });

  it('the lean validator returns the codes of the rules the compiled one fails, in order, on every payload', () => {
    const mismatches = suite.payloads.flatMap((payload, index) => {
      const failed = [...new Set(compiled.validate(payload, suite.now).failures.map((f) => f.ruleCode))];
      return JSON.stringify(validateRealisticLoanLean(payload)) === JSON.stringify(failed) ? [] : [index];
    });
    expect(mismatches).toEqual([]);
    // It is no validator that passes everything: every rule fails somewhere for it too.
    expect(new Set(suite.payloads.flatMap((payload) => validateRealisticLoanLean(payload))).size).toBe(20);
  });

  it('about 30% of the payloads are invalid, and every rule fails on some of them', () => {
    const results = suite.payloads.map((payload) => compiled.validate(payload, suite.now));
    const invalid = results.filter((r) => !r.isValid).length;
    expect(invalid).toBeGreaterThan(250);
    expect(invalid).toBeLessThan(350);
    const failed = new Set(results.flatMap((r) => r.failures.map((f) => f.ruleCode)));
    expect([...failed].sort()).toEqual(suite.rules.map((r) => r.code).sort());
  });

  it('the payloads are the same on every run', () => {
    expect(realisticLoanPayloads()).toEqual(suite.payloads);
    expect(realisticLoanPayloads(10, 0.3, 1)).not.toEqual(realisticLoanPayloads(10, 0.3, 2));
  });
});
