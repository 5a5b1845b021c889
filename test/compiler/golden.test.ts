/**
 * Golden test of generated source (ajv pins its generated code the same
 * way): the exact text admins are served for a small ruleset, and that text
 * run against payloads. A change here is a change to what every validator
 * looks like and does; review it as such.
 */
import { describe, expect, it } from 'vitest';
import { compileRuleset, type RuleDefinition } from '../../compiler/index.ts';

const RULES: RuleDefinition[] = [
  { code: 'LOAN-002', name: 'Currency', fieldPath: 'loan.currency', expression: '["EUR", "USD"].includes($value)' },
  {
    code: 'LOAN-001', name: 'Amount limit', fieldPath: 'loan.amount', required: true, expression: '$value <= 10000',
    message: 'Amount {{ $value }} exceeds {{ $expected }}',
  },
  {
    code: 'ITEM-QTY', name: 'Quantities', forEach: 'items', fieldPath: 'items[].qty', when: '$item.active',
    expression: '$value > 0 && $item.tags.every(t => matches(t, "^[a-z]+$"))', priority: 1,
  },
  { code: 'ADULT', name: 'Adult applicant', expression: 'age(applicant.dob) >= 18', severity: 'Warning', errorCode: 'E_AGE', priority: 2 },
];

const GOLDEN = [
  '(function (rt, refs) {',
  '  "use strict";',
  '  const { hasOwn, getPrototypeOf, objectPrototype, arrayPrototype, isArray, matches, age, meta, failure, tooManyFailures, text, constant, clock } = rt;',
  '  const r0 = meta("LOAN-001", "Amount limit", "Error", "LOAN-001");',
  '  const r1 = meta("LOAN-002", "Currency", "Error", "LOAN-002");',
  '  const k0 = constant("[\\"EUR\\",\\"USD\\"]");',
  '  const r2 = meta("ITEM-QTY", "Quantities", "Error", "ITEM-QTY");',
  '  const re0 = refs.re0; // matches() pattern of rule "ITEM-QTY"',
  '  const r3 = meta("ADULT", "Adult applicant", "Warning", "E_AGE");',
  '',
  '  // own-field readers: getN(o) is o\'s own field of that name, else undefined',
  '  function get0(o) {',
  '    if (o === null || typeof o !== "object") return undefined;',
  '    const value = o["loan"];',
  '    if (value === undefined) return undefined;',
  '    const proto = getPrototypeOf(o);',
  '    if ((proto === objectPrototype || proto === arrayPrototype) && proto["loan"] === undefined) return value;',
  '    return hasOwn(o, "loan") ? value : undefined;',
  '  }',
  '',
  '  function get1(o) {',
  '    if (o === null || typeof o !== "object") return undefined;',
  '    const value = o["amount"];',
  '    if (value === undefined) return undefined;',
  '    const proto = getPrototypeOf(o);',
  '    if ((proto === objectPrototype || proto === arrayPrototype) && proto["amount"] === undefined) return value;',
  '    return hasOwn(o, "amount") ? value : undefined;',
  '  }',
  '',
  '  function get2(o) {',
  '    if (o === null || typeof o !== "object") return undefined;',
  '    const value = o["currency"];',
  '    if (value === undefined) return undefined;',
  '    const proto = getPrototypeOf(o);',
  '    if ((proto === objectPrototype || proto === arrayPrototype) && proto["currency"] === undefined) return value;',
  '    return hasOwn(o, "currency") ? value : undefined;',
  '  }',
  '',
  '  function get3(o) {',
  '    if (o === null || typeof o !== "object") return undefined;',
  '    const value = o["items"];',
  '    if (value === undefined) return undefined;',
  '    const proto = getPrototypeOf(o);',
  '    if ((proto === objectPrototype || proto === arrayPrototype) && proto["items"] === undefined) return value;',
  '    return hasOwn(o, "items") ? value : undefined;',
  '  }',
  '',
  '  function get4(o) {',
  '    if (o === null || typeof o !== "object") return undefined;',
  '    const value = o["qty"];',
  '    if (value === undefined) return undefined;',
  '    const proto = getPrototypeOf(o);',
  '    if ((proto === objectPrototype || proto === arrayPrototype) && proto["qty"] === undefined) return value;',
  '    return hasOwn(o, "qty") ? value : undefined;',
  '  }',
  '',
  '  function get5(o) {',
  '    if (o === null || typeof o !== "object") return undefined;',
  '    const value = o["active"];',
  '    if (value === undefined) return undefined;',
  '    const proto = getPrototypeOf(o);',
  '    if ((proto === objectPrototype || proto === arrayPrototype) && proto["active"] === undefined) return value;',
  '    return hasOwn(o, "active") ? value : undefined;',
  '  }',
  '',
  '  function get6(o) {',
  '    if (o === null || typeof o !== "object") return undefined;',
  '    const value = o["tags"];',
  '    if (value === undefined) return undefined;',
  '    const proto = getPrototypeOf(o);',
  '    if ((proto === objectPrototype || proto === arrayPrototype) && proto["tags"] === undefined) return value;',
  '    return hasOwn(o, "tags") ? value : undefined;',
  '  }',
  '',
  '  function get7(o) {',
  '    if (o === null || typeof o !== "object") return undefined;',
  '    const value = o["applicant"];',
  '    if (value === undefined) return undefined;',
  '    const proto = getPrototypeOf(o);',
  '    if ((proto === objectPrototype || proto === arrayPrototype) && proto["applicant"] === undefined) return value;',
  '    return hasOwn(o, "applicant") ? value : undefined;',
  '  }',
  '',
  '  function get8(o) {',
  '    if (o === null || typeof o !== "object") return undefined;',
  '    const value = o["dob"];',
  '    if (value === undefined) return undefined;',
  '    const proto = getPrototypeOf(o);',
  '    if ((proto === objectPrototype || proto === arrayPrototype) && proto["dob"] === undefined) return value;',
  '    return hasOwn(o, "dob") ? value : undefined;',
  '  }',
  '',
  '  function every0(list) {',
  '    if (!isArray(list)) return undefined;',
  '    for (let i = 0; i < list.length; i++) {',
  '      const p0 = list[i];',
  '      if (!matches(re0, p0)) return false;',
  '    }',
  '    return true;',
  '  }',
  '',
  '  return function validate(payload, now) {',
  '    now = clock(now);',
  '    const failures = [];',
  '    let evaluated = 0;',
  '    let proto1;',
  '    const plain0 = payload !== null && typeof payload === "object" && ((proto1 = getPrototypeOf(payload)) === objectPrototype || proto1 === arrayPrototype);',
  '    const field0 = (plain0 && objectPrototype["loan"] === undefined && arrayPrototype["loan"] === undefined ? payload["loan"] : get0(payload));',
  '    let proto2;',
  '    const plain1 = field0 !== null && typeof field0 === "object" && ((proto2 = getPrototypeOf(field0)) === objectPrototype || proto2 === arrayPrototype);',
  '',
  '    // rule "LOAN-001"',
  '    {',
  '      const value = (plain1 && objectPrototype["amount"] === undefined && arrayPrototype["amount"] === undefined ? field0["amount"] : get1(field0));',
  '      if (value === undefined || value === null) {',
  '        evaluated++;',
  '        if (failures.push(failure(r0, "Amount  exceeds 10000", "loan.amount", null, 10000)) > 100000) tooManyFailures();',
  '      } else {',
  '        evaluated++;',
  '        if (!(typeof value === "number" && value <= 10000)) {',
  '          if (failures.push(failure(r0, "Amount " + text(value) + " exceeds 10000", "loan.amount", value, 10000)) > 100000) tooManyFailures();',
  '        }',
  '      }',
  '    }',
  '',
  '    // rule "LOAN-002"',
  '    {',
  '      const value = (plain1 && objectPrototype["currency"] === undefined && arrayPrototype["currency"] === undefined ? field0["currency"] : get2(field0));',
  '      if (value !== undefined && value !== null) {',
  '        evaluated++;',
  '        if (!(value === "EUR" || value === "USD")) {',
  '          if (failures.push(failure(r1, "Currency failed", "loan.currency", value, k0)) > 100000) tooManyFailures();',
  '        }',
  '      }',
  '    }',
  '',
  '    // rule "ITEM-QTY"',
  '    {',
  '      const list = (plain0 && objectPrototype["items"] === undefined && arrayPrototype["items"] === undefined ? payload["items"] : get3(payload));',
  '      if (isArray(list)) {',
  '        evaluated++;',
  '        for (let index = 0; index < list.length; index++) {',
  '          const item = list[index];',
  '          let proto0;',
  '          const plain2 = item !== null && typeof item === "object" && ((proto0 = getPrototypeOf(item)) === objectPrototype || proto0 === arrayPrototype);',
  '          const value = (plain2 && objectPrototype["qty"] === undefined && arrayPrototype["qty"] === undefined ? item["qty"] : get4(item));',
  '          if (!((plain2 && objectPrototype["active"] === undefined && arrayPrototype["active"] === undefined ? item["active"] : get5(item)) === true)) continue;',
  '          if (value === undefined || value === null) continue;',
  '          if (!(((typeof value === "number" && value > 0) && every0((plain2 && objectPrototype["tags"] === undefined && arrayPrototype["tags"] === undefined ? item["tags"] : get6(item)))) === true)) {',
  '            if (failures.push(failure(r2, "Quantities failed", "items[" + index + "].qty", value, null)) > 100000) tooManyFailures();',
  '          }',
  '        }',
  '      }',
  '    }',
  '',
  '    // rule "ADULT"',
  '    {',
  '      let t0;',
  '      evaluated++;',
  '      if (!(typeof (t0 = age(get8((plain0 && objectPrototype["applicant"] === undefined && arrayPrototype["applicant"] === undefined ? payload["applicant"] : get7(payload))), now)) === "number" && t0 >= 18)) {',
  '        if (failures.push(failure(r3, "Adult applicant failed", "", null, null)) > 100000) tooManyFailures();',
  '      }',
  '    }',
  '',
  '    return { isValid: failures.length === 0, totalRulesEvaluated: evaluated, failures: failures };',
  '  };',
  '})',
].join('\n');

describe('generated source', () => {
  const compiled = compileRuleset(RULES);

  it('is exactly the pinned text', () => {
    expect(compiled.errors).toEqual([]);
    expect(compiled.source).toBe(GOLDEN);
  });

  it('is a valid script and an expression', () => {
    expect(() => new Function(compiled.source)).not.toThrow();
    expect(() => new Function(`return ${compiled.source};`)).not.toThrow();
  });

  it('runs as pinned', () => {
    const now = Date.UTC(2024, 0, 1);
    expect(compiled.validate({
      loan: { amount: 500, currency: 'EUR' },
      items: [{ qty: 1, active: true, tags: ['a'] }],
      applicant: { dob: '1990-05-05' },
    }, now)).toEqual({ isValid: true, totalRulesEvaluated: 4, failures: [] });

    const result = compiled.validate({
      loan: { currency: 'GBP' },
      items: [{ qty: 0, active: true, tags: [] }, { qty: 0, active: false }, { qty: 2, active: true, tags: ['ok', 'NO'] }],
      applicant: { dob: '2010-01-02' },
    }, now);
    expect(result).toEqual({
      isValid: false,
      totalRulesEvaluated: 4,
      failures: [
        {
          ruleCode: 'LOAN-001', ruleName: 'Amount limit', severity: 'Error', message: 'Amount  exceeds 10000',
          errorCode: 'LOAN-001', fieldPath: 'loan.amount', actualValue: null, expectedValue: 10000,
        },
        {
          ruleCode: 'LOAN-002', ruleName: 'Currency', severity: 'Error', message: 'Currency failed',
          errorCode: 'LOAN-002', fieldPath: 'loan.currency', actualValue: 'GBP', expectedValue: ['EUR', 'USD'],
        },
        {
          ruleCode: 'ITEM-QTY', ruleName: 'Quantities', severity: 'Error', message: 'Quantities failed',
          errorCode: 'ITEM-QTY', fieldPath: 'items[0].qty', actualValue: 0, expectedValue: null,
        },
        {
          ruleCode: 'ITEM-QTY', ruleName: 'Quantities', severity: 'Error', message: 'Quantities failed',
          errorCode: 'ITEM-QTY', fieldPath: 'items[2].qty', actualValue: 2, expectedValue: null,
        },
        {
          ruleCode: 'ADULT', ruleName: 'Adult applicant', severity: 'Warning', message: 'Adult applicant failed',
          errorCode: 'E_AGE', fieldPath: '', actualValue: null, expectedValue: null,
        },
      ],
    });
  });

  it('passes matchers and schema validators through refs, never as source text', () => {
    const withSchema = compileRuleset([{ code: 'S', name: 'n', schema: { type: 'object' } }]);
    expect(withSchema.source).toContain('refs.sv0');
    expect(compiled.source).toContain('const re0 = refs.re0;');
    expect(compiled.source).not.toContain('^[a-z]+$');
  });

  it('keeps hoisted constants frozen', () => {
    const [failure] = compiled.validate({ loan: { amount: 1, currency: 'X' } }, 0).failures;
    expect(Object.isFrozen(failure.expectedValue)).toBe(true);
  });
});
