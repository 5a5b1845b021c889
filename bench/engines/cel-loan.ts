/**
 * The loan-application rules in CEL, run by @marcbachmann/cel-js. Each
 * expression is parsed once; a run evaluates the parsed programs. Top-level
 * rules see the payload as `p` (CEL's `has()` needs a field selection), and
 * forEach rules see `item` and `index`.
 *
 * CEL expresses almost everything natively, the address JSON Schema
 * included (as a conjunction of its keywords, without ajv's per-keyword
 * failures). Dates and `sum` are registered functions.
 */
import { Environment } from '@marcbachmann/cel-js';
import { ageAt, daysBetween } from './date-helpers.ts';
import { runPeerRules, type PeerEngine, type PeerRule } from './peer-engine.ts';

type Program = (context: Record<string, unknown>) => unknown;

/** `has()` chain for a dotted path, so a missing parent is "missing", not an error. */
function present(path: string): string {
  const parts = path.split('.');
  const checks: string[] = [];
  for (let i = 2; i <= parts.length; i++) checks.push(`has(${parts.slice(0, i).join('.')})`);
  return `${checks.join(' && ')} && ${path} != null`;
}

const address = 'p.applicant.address';
const addressSchema = [
  `type(${address}) == map`,
  ...['line1', 'city', 'postcode', 'country'].map((key) => `has(${address}.${key})`),
  `type(${address}.line1) == string && size(${address}.line1) >= 1 && size(${address}.line1) <= 100`,
  `type(${address}.city) == string && size(${address}.city) >= 1 && size(${address}.city) <= 60`,
  `type(${address}.postcode) == string && ${address}.postcode.matches("^[A-Z0-9 ]{3,10}$")`,
  `${address}.country in ["GB", "IE", "FR", "DE", "NL"]`,
].join(' && ');

interface CelRuleSource {
  code: string;
  forEach?: string;
  when?: string;
  field?: string;
  required?: boolean;
  test?: string;
}

const sources: CelRuleSource[] = [
  { code: 'APPLICANT_ADDRESS', field: address, required: true, test: addressSchema },
  { code: 'APPLICANT_LAST_NAME', field: 'p.applicant.lastName', required: true },
  {
    code: 'APPLICATION_ID', field: 'p.applicationId', required: true,
    test: 'p.applicationId.matches("^APP-[0-9]{4}-[0-9]{6}$")',
  },
  { code: 'CONSENT_CREDIT_CHECK', field: 'p.consents.creditCheck', required: true, test: 'p.consents.creditCheck == true' },
  { code: 'APPLICANT_AGE', field: 'p.applicant.dob', required: true, test: 'age(p.applicant.dob) >= 18.0' },
  {
    code: 'APPLICANT_NAME_LENGTH', field: 'p.applicant.firstName',
    test: 'size(p.applicant.firstName.trim()) >= 1 && size(p.applicant.firstName) <= 50',
  },
  { code: 'APPLICANT_PHONE', field: 'p.applicant.phone', test: 'p.applicant.phone.matches("^[+][0-9][0-9 ]{7,19}$")' },
  {
    code: 'EMPLOYMENT_YEARS', when: 'p.applicant.employment.status == "employed"',
    field: 'p.applicant.employment.years', required: true, test: 'p.applicant.employment.years >= 1.0',
  },
  {
    code: 'COLLATERAL_COVERAGE', when: 'p.loan.amount > 25000.0', field: 'p.collateral.value', required: true,
    test: 'p.collateral.value >= p.loan.amount',
  },
  {
    code: 'LOAN_AMOUNT_RANGE', field: 'p.loan.amount', required: true,
    test: 'type(p.loan.amount) == double && p.loan.amount >= 1000.0 && p.loan.amount <= 1000000.0',
  },
  {
    code: 'LOAN_CURRENCY', field: 'p.loan.currency',
    test: 'size(p.loan.currency) == 3 && p.loan.currency.upperAscii() == p.loan.currency',
  },
  { code: 'LOAN_PURPOSE', field: 'p.loan.purpose', test: 'p.loan.purpose in ["equipment", "vehicle", "working-capital"]' },
  {
    code: 'LOAN_START_WINDOW', when: present('p.submittedAt'), field: 'p.loan.startDate',
    test: 'daysBetween(p.submittedAt, p.loan.startDate) >= 0.0 && daysBetween(p.submittedAt, p.loan.startDate) <= 90.0',
  },
  {
    code: 'LOAN_TERM', field: 'p.loan.termMonths', required: true,
    test: 'p.loan.termMonths in [12, 24, 36, 48, 60, 84, 120]',
  },
  { code: 'LOAN_TO_INCOME', field: 'p.loan.amount', test: 'p.loan.amount <= p.applicant.income * 5.0' },
  {
    code: 'ITEMS_PRESENT', field: 'p.items', required: true,
    test: 'type(p.items) == list && size(p.items) >= 1 && size(p.items) <= 50'
      + ' && p.items.all(i, p.items.filter(j, j.sku == i.sku).size() == 1)',
  },
  { code: 'ITEMS_TOTAL', field: 'p.loan.amount', test: 'sum(p.items.map(i, i.qty * i.unitPrice)) >= p.loan.amount' },
  {
    code: 'LINE_QTY', forEach: 'items', field: 'item.qty', required: true,
    test: 'type(item.qty) == double && int(item.qty) == item.qty && item.qty >= 1.0 && item.qty <= 100.0',
  },
  {
    code: 'LINE_SKU', forEach: 'items', when: 'item.kind == "equipment"', field: 'item.sku', required: true,
    test: 'item.sku.matches("^[A-Z]{3}-[0-9]{4}$")',
  },
  { code: 'LINE_UNIT_PRICE', forEach: 'items', field: 'item.unitPrice', test: 'item.unitPrice > 0.0' },
];

/**
 * The CEL peer for the loan-application suite, `now` fixed at creation.
 *
 * @example
 * const failed = createCelLoanEngine(now).run(payload); // ['LOAN_TERM', 'LINE_QTY[1]', ...]
 */
export function createCelLoanEngine(now: number): PeerEngine {
  const env = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false })
    .registerFunction('age(string): double', (dob: string) => ageAt(dob, now) ?? Number.NaN)
    .registerFunction('daysBetween(string, string): double', (a: string, b: string) => daysBetween(a, b) ?? Number.NaN)
    .registerFunction('sum(list): double', (values: unknown[]) =>
      values.reduce<number>((total, v) => total + (typeof v === 'number' ? v : Number.NaN), 0));
  const parse = (source: string | undefined): Program | undefined =>
    source === undefined ? undefined : (env.parse(source));
  const rules: PeerRule<Program>[] = sources.map((s) => ({
    code: s.code,
    forEach: s.forEach,
    when: parse(s.when),
    present: parse(s.field === undefined ? undefined : present(s.field)),
    required: s.required,
    test: parse(s.test),
  }));
  const evaluate = (program: Program, data: unknown): unknown => program(data as Record<string, unknown>);
  return {
    name: 'cel-js',
    async: false,
    omitted: [],
    notes: [
      'age(), daysBetween() and sum() are registered JavaScript functions; CEL has no date-only parsing or sum.',
      'APPLICANT_ADDRESS is one conjunction of the schema keywords: one failure, not one per ajv error.',
      'forEach, when and missing-field semantics come from the shared adapter loop; errors count as false.',
    ],
    run: (payload) => runPeerRules(rules, evaluate, payload, { p: payload }),
  };
}
