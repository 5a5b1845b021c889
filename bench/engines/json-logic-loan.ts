/**
 * The loan-application rules in JsonLogic, run by json-logic-js (an
 * interpreter over the rule's JSON tree; nothing is prepared ahead).
 *
 * JsonLogic has no regexes, string lengths, dates or type tests. The
 * documented extension point, `add_operation`, supplies `matches`, `len`,
 * `age` and `daysBetween`; the rest is native JsonLogic. Its operators
 * coerce (`"1000" >= 1000` holds) and `var` reads inherited properties, so
 * the translation is looser than the rule language on wrong types; on the
 * suite's payloads it reaches the same verdicts.
 */
import jsonLogic from 'json-logic-js';
import { ageAt, daysBetween } from './date-helpers.ts';
import { runPeerRules, type PeerEngine, type PeerRule } from './peer-engine.ts';

type Logic = Record<string, unknown>;

const v = (path: string): Logic => ({ var: path });
const present = (path: string): Logic => ({ '!=': [v(path), null] });
const matches = (path: string, pattern: string): Logic => ({ matches: [v(path), pattern] });
const lengthWithin = (path: string, min: number, max: number): Logic => ({ '<=': [min, { len: v(path) }, max] });

const addressKeys = ['line1', 'city', 'postcode', 'country'].map((key) => `applicant.address.${key}`);
const itemsTotal: Logic = {
  reduce: [
    { map: [v('items'), { '*': [v('qty'), v('unitPrice')] }] },
    { '+': [v('current'), v('accumulator')] },
    0,
  ],
};

const rules: PeerRule<Logic>[] = [
  {
    code: 'APPLICANT_ADDRESS', present: present('applicant.address'), required: true,
    test: {
      and: [
        { '!': { missing: addressKeys } },
        lengthWithin('applicant.address.line1', 1, 100),
        lengthWithin('applicant.address.city', 1, 60),
        matches('applicant.address.postcode', '^[A-Z0-9 ]{3,10}$'),
        { in: [v('applicant.address.country'), ['GB', 'IE', 'FR', 'DE', 'NL']] },
      ],
    },
  },
  { code: 'APPLICANT_LAST_NAME', present: present('applicant.lastName'), required: true },
  {
    code: 'APPLICATION_ID', present: present('applicationId'), required: true,
    test: matches('applicationId', '^APP-[0-9]{4}-[0-9]{6}$'),
  },
  {
    code: 'CONSENT_CREDIT_CHECK', present: present('consents.creditCheck'), required: true,
    test: { '===': [v('consents.creditCheck'), true] },
  },
  {
    code: 'APPLICANT_AGE', present: present('applicant.dob'), required: true,
    test: { '>=': [{ age: v('applicant.dob') }, 18] },
  },
  {
    code: 'APPLICANT_NAME_LENGTH', present: present('applicant.firstName'),
    test: { and: [matches('applicant.firstName', '\\S'), { '<=': [{ len: v('applicant.firstName') }, 50] }] },
  },
  { code: 'APPLICANT_PHONE', present: present('applicant.phone'), test: matches('applicant.phone', '^[+][0-9][0-9 ]{7,19}$') },
  {
    code: 'EMPLOYMENT_YEARS', when: { '===': [v('applicant.employment.status'), 'employed'] },
    present: present('applicant.employment.years'), required: true,
    test: { '>=': [v('applicant.employment.years'), 1] },
  },
  {
    code: 'COLLATERAL_COVERAGE', when: { '>': [v('loan.amount'), 25000] },
    present: present('collateral.value'), required: true,
    test: { '>=': [v('collateral.value'), v('loan.amount')] },
  },
  {
    code: 'LOAN_AMOUNT_RANGE', present: present('loan.amount'), required: true,
    test: { '<=': [1000, v('loan.amount'), 1000000] },
  },
  { code: 'LOAN_CURRENCY', present: present('loan.currency'), test: matches('loan.currency', '^[A-Z]{3}$') },
  {
    code: 'LOAN_PURPOSE', present: present('loan.purpose'),
    test: { in: [v('loan.purpose'), ['equipment', 'vehicle', 'working-capital']] },
  },
  {
    code: 'LOAN_START_WINDOW', when: present('submittedAt'), present: present('loan.startDate'),
    test: { '<=': [0, { daysBetween: [v('submittedAt'), v('loan.startDate')] }, 90] },
  },
  {
    code: 'LOAN_TERM', present: present('loan.termMonths'), required: true,
    test: { in: [v('loan.termMonths'), [12, 24, 36, 48, 60, 84, 120]] },
  },
  {
    code: 'LOAN_TO_INCOME', present: present('loan.amount'),
    test: { '<=': [v('loan.amount'), { '*': [v('applicant.income'), 5] }] },
  },
  { code: 'ITEMS_PRESENT', present: present('items'), required: true, test: lengthWithin('items', 1, 50) },
  { code: 'ITEMS_TOTAL', present: present('loan.amount'), test: { '>=': [itemsTotal, v('loan.amount')] } },
  {
    code: 'LINE_QTY', forEach: 'items', present: present('item.qty'), required: true,
    test: { and: [{ '<=': [1, v('item.qty'), 100] }, { '===': [{ '%': [v('item.qty'), 1] }, 0] }] },
  },
  {
    code: 'LINE_SKU', forEach: 'items', when: { '===': [v('item.kind'), 'equipment'] },
    present: present('item.sku'), required: true, test: matches('item.sku', '^[A-Z]{3}-[0-9]{4}$'),
  },
  { code: 'LINE_UNIT_PRICE', forEach: 'items', present: present('item.unitPrice'), test: { '>': [v('item.unitPrice'), 0] } },
];

// Extensions answer NaN, not null, for "no value": JsonLogic coerces null to 0 in comparisons.
function codePoints(value: unknown): number {
  if (typeof value === 'string') return [...value].length;
  return Array.isArray(value) ? value.length : Number.NaN;
}

/**
 * The JsonLogic peer for the loan-application suite, `now` fixed at creation.
 * json-logic-js keeps operations globally, so the last engine created sets `now`.
 *
 * @example
 * const failed = createJsonLogicLoanEngine(now).run(payload);
 */
export function createJsonLogicLoanEngine(now: number): PeerEngine {
  const patterns = new Map<string, RegExp>();
  const regex = (pattern: string): RegExp => {
    let compiled = patterns.get(pattern);
    if (compiled === undefined) patterns.set(pattern, (compiled = new RegExp(pattern)));
    return compiled;
  };
  jsonLogic.add_operation('matches', ((text: unknown, pattern: string) =>
    typeof text === 'string' && regex(pattern).test(text)));
  jsonLogic.add_operation('len', codePoints);
  jsonLogic.add_operation('age', ((dob: unknown) => ageAt(dob, now) ?? Number.NaN));
  jsonLogic.add_operation('daysBetween', ((a: unknown, b: unknown) => daysBetween(a, b) ?? Number.NaN));
  const evaluate = (logic: Logic, data: unknown): boolean => jsonLogic.truthy(jsonLogic.apply(logic, data));
  return {
    name: 'json-logic-js',
    async: false,
    omitted: [],
    notes: [
      'matches, len, age and daysBetween are add_operation extensions (JsonLogic has no regex, length or dates).',
      'ITEMS_PRESENT leaves out distinct SKUs (not expressible); LOAN_CURRENCY is a regex instead of upper().',
      'APPLICANT_ADDRESS checks required keys, lengths, pattern and enum but no JSON types; one failure per rule.',
      'No type tests anywhere: operators coerce strings to numbers.',
    ],
    run: (payload) => runPeerRules(rules, evaluate, payload),
  };
}
