/**
 * The engine benchmark's realistic context: an equipment-loan application
 * with 20 rules covering every kind the compiler supports (nested paths,
 * cross-field arithmetic, forEach over line items, regexes, dates, a JSON
 * Schema on a sub-object, required-only rules and `when` preconditions).
 *
 * Codes that share a priority differ first in a letter, so "priority, then
 * code" orders them the same under code-unit and locale comparison.
 */
import type { RuleDefinition } from '../../compiler/types.ts';
import type { BenchSuite } from './bench-suite.ts';

/** JSON Schema of `applicant.address`, shared with the peer translations. */
export const addressSchema = {
  type: 'object',
  required: ['line1', 'city', 'postcode', 'country'],
  properties: {
    line1: { type: 'string', minLength: 1, maxLength: 100 },
    city: { type: 'string', minLength: 1, maxLength: 60 },
    postcode: { type: 'string', pattern: '^[A-Z0-9 ]{3,10}$' },
    country: { enum: ['GB', 'IE', 'FR', 'DE', 'NL'] },
  },
} as const;

const rules: RuleDefinition[] = [
  {
    code: 'APPLICATION_ID',
    name: 'Application id format',
    fieldPath: 'applicationId',
    required: true,
    expression: 'matches($value, "^APP-[0-9]{4}-[0-9]{6}$")',
    message: "Application id '{{ $value }}' is not of the form APP-YYYY-NNNNNN",
  },
  {
    code: 'APPLICANT_LAST_NAME',
    name: 'Applicant last name',
    fieldPath: 'applicant.lastName',
    required: true,
    message: 'The applicant last name is required',
  },
  {
    code: 'APPLICANT_ADDRESS',
    name: 'Applicant address',
    fieldPath: 'applicant.address',
    required: true,
    schema: addressSchema,
  },
  {
    code: 'CONSENT_CREDIT_CHECK',
    name: 'Credit check consent',
    fieldPath: 'consents.creditCheck',
    required: true,
    expression: '$value == true',
    message: 'The applicant must consent to a credit check',
  },
  {
    code: 'APPLICANT_AGE',
    name: 'Applicant age',
    priority: 10,
    fieldPath: 'applicant.dob',
    required: true,
    expression: 'age(applicant.dob) >= 18',
    expectedValue: 18,
    message: 'The applicant must be 18 or older (born {{ $value }})',
  },
  {
    code: 'APPLICANT_NAME_LENGTH',
    name: 'Applicant first name length',
    priority: 10,
    fieldPath: 'applicant.firstName',
    expression: 'len(trim($value)) >= 1 && len($value) <= 50',
    message: 'The first name must have 1 to 50 characters',
  },
  {
    code: 'APPLICANT_PHONE',
    name: 'Applicant phone format',
    priority: 10,
    severity: 'Warning',
    fieldPath: 'applicant.phone',
    expression: 'matches($value, "^[+][0-9][0-9 ]{7,19}$")',
    message: 'Phone {{ $value }} is not in international format',
  },
  {
    code: 'EMPLOYMENT_YEARS',
    name: 'Employment duration',
    priority: 10,
    when: 'applicant.employment.status == "employed"',
    fieldPath: 'applicant.employment.years',
    required: true,
    expression: '$value >= 1',
    message: 'Employed applicants need at least {{ $expected }} year with their employer, not {{ $value }}',
  },
  {
    code: 'COLLATERAL_COVERAGE',
    name: 'Collateral coverage',
    priority: 20,
    when: 'loan.amount > 25000',
    fieldPath: 'collateral.value',
    required: true,
    expression: 'collateral.value >= loan.amount',
    message: 'Collateral of {{ $value }} does not cover the loan of {{ loan.amount }}',
  },
  {
    code: 'LOAN_AMOUNT_RANGE',
    name: 'Loan amount range',
    priority: 20,
    fieldPath: 'loan.amount',
    required: true,
    expression: 'isNumber($value) && $value >= 1000 && $value <= 1000000',
    message: 'The loan amount {{ $value }} must be between 1000 and 1000000',
  },
  {
    code: 'LOAN_CURRENCY',
    name: 'Loan currency code',
    priority: 20,
    severity: 'Info',
    errorCode: 'CURRENCY_FORMAT',
    fieldPath: 'loan.currency',
    expression: 'len($value) == 3 && upper($value) == $value',
    message: 'Currency {{ $value }} should be an upper-case ISO 4217 code',
  },
  {
    code: 'LOAN_PURPOSE',
    name: 'Loan purpose',
    priority: 20,
    fieldPath: 'loan.purpose',
    expression: '["equipment", "vehicle", "working-capital"].includes(loan.purpose)',
    message: 'Loan purpose {{ $value }} is not one of {{ $expected }}',
  },
  {
    code: 'LOAN_START_WINDOW',
    name: 'Loan start date window',
    priority: 20,
    when: 'exists(submittedAt)',
    fieldPath: 'loan.startDate',
    expression: 'daysBetween(submittedAt, loan.startDate) >= 0 && daysBetween(submittedAt, loan.startDate) <= 90',
    message: 'The start date {{ $value }} must be within 90 days of submission on {{ submittedAt }}',
  },
  {
    code: 'LOAN_TERM',
    name: 'Loan term',
    priority: 20,
    fieldPath: 'loan.termMonths',
    required: true,
    expression: '[12, 24, 36, 48, 60, 84, 120].includes($value)',
    message: 'A term of {{ $value }} months is not offered',
  },
  {
    code: 'LOAN_TO_INCOME',
    name: 'Loan to income',
    priority: 20,
    fieldPath: 'loan.amount',
    expression: 'loan.amount <= applicant.income * 5',
    message: 'The loan amount {{ $value }} exceeds five times the income ({{ applicant.income * 5 }})',
  },
  {
    code: 'ITEMS_PRESENT',
    name: 'Line items present and distinct',
    priority: 30,
    fieldPath: 'items',
    required: true,
    expression: 'isArray($value) && len($value) >= 1 && len($value) <= 50 && distinct($value.map(i => i.sku))',
    message: 'Between 1 and 50 line items with distinct SKUs are required',
  },
  {
    code: 'ITEMS_TOTAL',
    name: 'Line items cover the loan',
    priority: 30,
    fieldPath: 'loan.amount',
    expression: 'sum(items.map(i => i.qty * i.unitPrice)) >= loan.amount',
    message: 'The items total {{ sum(items.map(i => i.qty * i.unitPrice)) }} is below the loan amount {{ $value }}',
  },
  {
    code: 'LINE_QTY',
    name: 'Line quantity',
    priority: 40,
    forEach: 'items',
    fieldPath: 'items[].qty',
    required: true,
    expression: 'isInteger($value) && $value >= 1 && $value <= 100',
    message: 'Item {{ $index }}: quantity {{ $value }} must be a whole number from 1 to 100',
  },
  {
    code: 'LINE_SKU',
    name: 'Equipment SKU format',
    priority: 40,
    forEach: 'items',
    when: '$item.kind == "equipment"',
    fieldPath: 'items[].sku',
    required: true,
    expression: 'matches($value, "^[A-Z]{3}-[0-9]{4}$")',
    message: 'Equipment item {{ $index }} has an invalid SKU {{ $value }}',
  },
  {
    code: 'LINE_UNIT_PRICE',
    name: 'Line unit price',
    priority: 40,
    forEach: 'items',
    fieldPath: 'items[].unitPrice',
    expression: '$item.unitPrice > 0',
  },
];

const passing = {
  applicationId: 'APP-2024-000123',
  submittedAt: '2024-05-02',
  channel: 'web',
  applicant: {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada.lovelace@example.com',
    phone: '+44 20 7946 0958',
    dob: '1985-12-10',
    income: 85000,
    employment: { status: 'employed', employer: 'Analytical Engines Ltd', years: 6 },
    address: { line1: "12 St James's Square", city: 'London', postcode: 'SW1Y 4JH', country: 'GB' },
  },
  loan: { amount: 42000, currency: 'GBP', termMonths: 60, purpose: 'equipment', startDate: '2024-06-01' },
  collateral: { type: 'equipment', value: 50000 },
  items: [
    { sku: 'LTH-0042', kind: 'equipment', description: 'CNC lathe', qty: 1, unitPrice: 28500 },
    { sku: 'MIL-0107', kind: 'equipment', description: 'Milling machine', qty: 1, unitPrice: 11900 },
    { sku: 'SRV-0001', kind: 'service', description: 'Installation', qty: 2, unitPrice: 650 },
    { sku: 'TRN-0003', kind: 'service', description: 'Operator training', qty: 4, unitPrice: 275 },
  ],
  consents: { creditCheck: true, marketing: false },
};

/** Breaks twelve rules, three of them in forEach elements; one schema error. */
const failing = {
  applicationId: 'APP-24-123',
  submittedAt: '2024-05-02',
  channel: 'broker',
  applicant: {
    firstName: 'Charles',
    email: 'c.babbage@example.com',
    phone: '+44 20 7946 0000',
    dob: '2008-09-01',
    income: 85000,
    employment: { status: 'employed', employer: 'Difference Engines Ltd', years: 0 },
    address: { line1: '1 Dorset Street', city: 'London', postcode: 'w1u 4ej!', country: 'GB' },
  },
  loan: { amount: 480000, currency: 'gbp', termMonths: 72, purpose: 'equipment', startDate: '2024-12-01' },
  collateral: { type: 'equipment', value: 50000 },
  items: [
    { sku: 'lth42', kind: 'equipment', description: 'CNC lathe', qty: 1, unitPrice: 28500 },
    { sku: 'MIL-0107', kind: 'equipment', description: 'Milling machine', qty: 0, unitPrice: 11900 },
    { sku: 'SRV-0001', kind: 'service', description: 'Installation', qty: 2, unitPrice: -5 },
    { sku: 'TRN-0003', kind: 'service', description: 'Operator training', qty: 2.5, unitPrice: 275 },
  ],
  consents: { creditCheck: false, marketing: true },
};

/** The 20-rule loan context, 2024-05-15T12:00Z as `now`. */
export const loanApplicationSuite: BenchSuite = {
  name: 'loan-application',
  context: 'loan-application',
  now: Date.UTC(2024, 4, 15, 12, 0, 0),
  rules,
  payloads: { passing, failing },
};
