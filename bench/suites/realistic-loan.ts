/**
 * A consumer-loan application context written the way tenants write rules
 * (`npm run bench:realistic`): required fields, string lengths, three
 * regular expressions of our own (an e-mail-like address, an SSN-like
 * number, a SKU-like code), ranges, allowed lists, a date comparison, a
 * `forEach` over line items, a sum over the items and a conditional
 * required field (`when`). Twenty rules, and 1,000 payloads made by a
 * seeded generator: the same payloads on every run and machine, about 30%
 * of them breaking one to three rules the way real submissions do (a
 * missing field, a typo, a wrong type, a date in the wrong order).
 *
 * Codes that share a priority differ first in a letter, so "priority, then
 * code" orders them the same under code-unit and locale comparison.
 */
import type { RuleDefinition } from '../../compiler/types.ts';

/** The three patterns, shared with the hand-written validator and the regex comparison. */
export const EMAIL_PATTERN = '^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+[.][A-Za-z]{2,}$';
export const SSN_PATTERN = '^[0-9]{3}-[0-9]{2}-[0-9]{4}$';
export const SKU_PATTERN = '^[A-Z]{3}-[0-9]{4}$';

export const EMPLOYMENT_STATUSES = ['employed', 'self-employed', 'unemployed', 'retired'];
export const CURRENCIES = ['USD', 'EUR', 'GBP'];
export const PURPOSES = ['home', 'car', 'education', 'business', 'other'];
export const TERMS = [12, 24, 36, 48, 60, 72, 84];

const list = (values: readonly unknown[]): string => JSON.stringify(values);

const rules: RuleDefinition[] = [
  // Priority 0: the applicant.
  {
    code: 'ANNUAL_INCOME',
    name: 'Annual income',
    fieldPath: 'applicant.annualIncome',
    required: true,
    expression: 'isNumber($value) && $value >= 0',
  },
  {
    code: 'APPLICANT_AGE',
    name: 'Applicant age',
    fieldPath: 'applicant.age',
    required: true,
    expression: 'isInteger($value) && $value >= 18 && $value <= 120',
    message: 'Age {{ $value }} is outside 18 to 120',
  },
  {
    code: 'APPLICANT_EMAIL',
    name: 'Applicant e-mail',
    fieldPath: 'applicant.email',
    required: true,
    expression: `matches($value, "${EMAIL_PATTERN}")`,
    message: "'{{ $value }}' is not a valid e-mail address",
  },
  {
    code: 'APPLICANT_FIRST_NAME',
    name: 'Applicant first name',
    fieldPath: 'applicant.firstName',
    required: true,
    expression: 'len($value) >= 1 && len($value) <= 50',
    message: 'The first name must have 1 to 50 characters',
  },
  {
    code: 'APPLICANT_LAST_NAME',
    name: 'Applicant last name',
    fieldPath: 'applicant.lastName',
    required: true,
    expression: 'len(trim($value)) >= 1 && len($value) <= 80',
    message: 'The last name must have 1 to 80 characters, not {{ len($value) }}',
  },
  {
    code: 'APPLICANT_SSN',
    name: 'Applicant SSN',
    fieldPath: 'applicant.ssn',
    required: true,
    expression: `matches($value, "${SSN_PATTERN}")`,
    message: 'The SSN must be written like 123-45-6789',
  },
  {
    code: 'EMPLOYMENT_STATUS',
    name: 'Employment status',
    fieldPath: 'applicant.employmentStatus',
    required: true,
    expression: `${list(EMPLOYMENT_STATUSES)}.includes($value)`,
    message: 'Employment status {{ $value }} is not one of {{ $expected }}',
  },
  // Priority 10: the loan.
  {
    code: 'CO_APPLICANT_SSN',
    name: 'Co-applicant SSN',
    priority: 10,
    when: 'loan.amount > 250000',
    fieldPath: 'coApplicant.ssn',
    required: true,
    expression: `matches($value, "${SSN_PATTERN}")`,
    message: 'Loans over 250000 need a co-applicant with a valid SSN',
  },
  {
    code: 'EMPLOYER_NAME',
    name: 'Employer name',
    priority: 10,
    when: 'applicant.employmentStatus == "employed"',
    fieldPath: 'employer.name',
    required: true,
    expression: 'len($value) >= 2 && len($value) <= 100',
    message: 'Employed applicants must name their employer',
  },
  {
    code: 'LOAN_AMOUNT',
    name: 'Loan amount',
    priority: 10,
    fieldPath: 'loan.amount',
    required: true,
    expression: 'isNumber($value) && $value >= 1000 && $value <= 500000',
    message: 'The loan amount {{ $value }} must be between 1000 and 500000',
  },
  {
    code: 'LOAN_CURRENCY',
    name: 'Loan currency',
    priority: 10,
    severity: 'Warning',
    fieldPath: 'loan.currency',
    expression: `${list(CURRENCIES)}.includes($value)`,
  },
  {
    code: 'LOAN_DATES',
    name: 'Loan end after start',
    priority: 10,
    fieldPath: 'loan.endDate',
    required: true,
    expression: 'date($value) > date(loan.startDate)',
    message: 'The end date {{ $value }} must be after the start date {{ loan.startDate }}',
  },
  {
    code: 'LOAN_PURPOSE',
    name: 'Loan purpose',
    priority: 10,
    fieldPath: 'loan.purpose',
    required: true,
    expression: `${list(PURPOSES)}.includes($value)`,
  },
  {
    code: 'LOAN_START_DATE',
    name: 'Loan start date',
    priority: 10,
    fieldPath: 'loan.startDate',
    required: true,
    expression: 'date($value) >= date(submittedAt)',
    message: 'The loan cannot start ({{ $value }}) before the application ({{ submittedAt }})',
  },
  {
    code: 'LOAN_TERM',
    name: 'Loan term',
    priority: 10,
    fieldPath: 'loan.termMonths',
    required: true,
    expression: `${list(TERMS)}.includes($value)`,
    message: 'A term of {{ $value }} months is not offered',
  },
  // Priority 20: the line items.
  {
    code: 'ITEMS_LIST',
    name: 'Line items',
    priority: 20,
    fieldPath: 'items',
    required: true,
    expression: 'isArray($value) && len($value) >= 1 && len($value) <= 20',
    message: 'Between 1 and 20 line items are required',
  },
  {
    code: 'ITEMS_TOTAL',
    name: 'Line items within the loan',
    priority: 20,
    fieldPath: 'loan.amount',
    expression: 'sum(items.map(i => i.qty * i.price)) <= $value',
    message: 'The items total {{ sum(items.map(i => i.qty * i.price)) }} exceeds the loan amount {{ $value }}',
  },
  {
    code: 'LINE_PRICE',
    name: 'Line price',
    priority: 20,
    forEach: 'items',
    fieldPath: 'items[].price',
    required: true,
    expression: 'isNumber($value) && $value > 0',
    message: 'Item {{ $index }}: price {{ $value }} must be a positive number',
  },
  {
    code: 'LINE_QTY',
    name: 'Line quantity',
    priority: 20,
    forEach: 'items',
    fieldPath: 'items[].qty',
    required: true,
    expression: 'isInteger($value) && $value >= 1 && $value <= 100',
    message: 'Item {{ $index }}: quantity {{ $value }} must be a whole number from 1 to 100',
  },
  {
    code: 'LINE_SKU',
    name: 'Line SKU',
    priority: 20,
    forEach: 'items',
    fieldPath: 'items[].sku',
    required: true,
    expression: `matches($value, "${SKU_PATTERN}")`,
    message: 'Item {{ $index }}: SKU {{ $value }} is not of the form ABC-1234',
  },
];

// ---- payloads ----------------------------------------------------------------

/** mulberry32: a small seeded generator, so every run times the same payloads. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Katherine', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Niklaus', 'Radia', 'José', 'Zoë'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Johnson', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Wirth', 'Perlman', "O'Neil", 'García-López'];
const DOMAINS = ['example.com', 'mail.example.org', 'example-bank.co.uk', 'corp.example.net'];
const EMPLOYERS = ['Analytical Engines Ltd', 'Acme Corp', 'Globex', 'Initech', 'Umbrella Holdings', 'Stark Industries'];
const PRODUCTS = ['Laptop', 'Desk', 'Chair', 'Monitor', 'Printer', 'Router', 'Phone', 'Tablet', 'Camera', 'Projector'];

const DAY_MS = 86_400_000;
const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const digits = (random: () => number, n: number): string => {
  let s = '';
  for (let i = 0; i < n; i++) s += String(Math.floor(random() * 10));
  return s;
};
const letters = (random: () => number, n: number): string => {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(65 + Math.floor(random() * 26));
  return s;
};

type Payload = Record<string, any>;

/** A payload that passes every rule. */
function validPayload(random: () => number, index: number): Payload {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
  const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
  const firstName = pick(FIRST_NAMES);
  const lastName = pick(LAST_NAMES);
  const status = pick(EMPLOYMENT_STATUSES);
  const amount = int(5, 400) * 1000 + pick([0, 250, 500]);
  const itemCount = int(1, 6);
  const items = [];
  let budget = amount;
  for (let i = 0; i < itemCount; i++) {
    const qty = int(1, 5);
    // Whole cents, most of the budget, so the total stays within the amount.
    const price = Math.max(1, Math.floor((budget / (itemCount - i) / qty) * (0.5 + random() * 0.5) * 100) / 100);
    budget -= qty * price;
    items.push({ sku: `${letters(random, 3)}-${digits(random, 4)}`, description: pick(PRODUCTS), qty, price });
  }
  const submitted = Date.UTC(2025, 0, 1) + int(0, 364) * DAY_MS;
  const start = submitted + int(0, 60) * DAY_MS;
  const term = pick(TERMS);
  const payload: Payload = {
    applicationId: `LA-${String(index).padStart(6, '0')}`,
    submittedAt: isoDate(submitted),
    channel: pick(['web', 'branch', 'broker']),
    applicant: {
      firstName,
      lastName,
      email: `${firstName.normalize('NFD').replace(/[^A-Za-z]/g, '').toLowerCase()}.${int(1, 999)}@${pick(DOMAINS)}`,
      ssn: `${digits(random, 3)}-${digits(random, 2)}-${digits(random, 4)}`,
      age: int(18, 80),
      employmentStatus: status,
      annualIncome: int(0, 300) * 1000,
    },
    loan: {
      amount,
      currency: pick(CURRENCIES),
      purpose: pick(PURPOSES),
      termMonths: term,
      startDate: isoDate(start),
      endDate: isoDate(start + term * 30 * DAY_MS),
    },
    items,
    consents: { creditCheck: true, marketing: random() < 0.5 },
  };
  if (status === 'employed' || status === 'self-employed') {
    payload.employer = { name: pick(EMPLOYERS), years: int(0, 30) };
  }
  if (amount > 250000 || random() < 0.1) {
    payload.coApplicant = { firstName: pick(FIRST_NAMES), ssn: `${digits(random, 3)}-${digits(random, 2)}-${digits(random, 4)}` };
  }
  return payload;
}

/** The mistakes a real submission makes, each breaking (usually) one rule. */
const MISTAKES: ((p: Payload, random: () => number) => void)[] = [
  (p) => delete p.applicant.email,
  (p) => { p.applicant.email = 'jane.doe@example'; },
  (p) => { p.applicant.email = 'jane doe@example.com'; },
  (p) => { p.applicant.ssn = '123456789'; },
  (p) => { p.applicant.ssn = 12345678; },
  (p) => { p.applicant.age = 17; },
  (p) => { p.applicant.age = '42'; },
  (p) => { p.applicant.firstName = ''; },
  (p) => { p.applicant.firstName = 'Bartholomew-Maximilian-Alexander-Fitzgerald-Worthington'; },
  (p) => delete p.applicant.lastName,
  (p) => { p.applicant.lastName = '   '; },
  (p) => { p.applicant.employmentStatus = 'student'; },
  (p) => {
    p.applicant.employmentStatus = 'employed';
    delete p.employer;
  },
  (p) => { p.applicant.annualIncome = null; },
  (p) => { p.applicant.annualIncome = -5000; },
  (p) => { p.loan.amount = 500; },
  (p) => { p.loan.amount = 900000; },
  (p) => { p.loan.amount = '25000'; },
  (p) => { p.loan.currency = 'JPY'; },
  (p) => { p.loan.purpose = 'vacation'; },
  (p) => { p.loan.termMonths = 18; },
  (p) => { p.loan.endDate = p.loan.startDate; },
  (p) => { p.loan.endDate = '2025-02-30'; },
  (p) => { p.loan.startDate = '03/15/2025'; },
  (p) => { p.loan.startDate = '2024-12-31'; },
  (p) => {
    p.loan.amount = 300000;
    delete p.coApplicant;
  },
  (p) => { p.coApplicant = { firstName: 'Sam', ssn: '987-65-432' }; p.loan.amount = 260000; },
  (p) => { p.items = []; },
  (p) => { p.items = Array.from({ length: 25 }, (_, i) => ({ sku: `BLK-${String(i).padStart(4, '0')}`, qty: 1, price: 10 })); },
  (p) => delete p.items,
  (p, random) => { p.items[Math.floor(random() * p.items.length)].sku = 'abc-12'; },
  (p, random) => { p.items[Math.floor(random() * p.items.length)].qty = 0; },
  (p, random) => { p.items[Math.floor(random() * p.items.length)].qty = 2.5; },
  (p, random) => { p.items[Math.floor(random() * p.items.length)].price = -1; },
  (p, random) => delete p.items[Math.floor(random() * p.items.length)].price,
  (p) => { p.items[0].price *= 1000; },
];

/** `count` payloads, a fraction `invalidShare` of them with one to three mistakes. */
export function realisticLoanPayloads(count = 1000, invalidShare = 0.3, seed = 20_240_515): Payload[] {
  const random = generator(seed);
  const payloads: Payload[] = [];
  for (let i = 0; i < count; i++) {
    const payload = validPayload(random, i);
    if (random() < invalidShare) {
      const mistakes = 1 + Math.floor(random() * random() * 3);
      for (let m = 0; m < mistakes; m++) MISTAKES[Math.floor(random() * MISTAKES.length)](payload, random);
    }
    payloads.push(payload);
  }
  return payloads;
}

/** The suite: 20 rules and 1,000 payloads, about 30% of them invalid. */
export const realisticLoanSuite = {
  name: 'realistic-loan',
  context: 'realistic-loan',
  /** No rule reads the clock; a fixed `now` all the same. */
  now: Date.UTC(2025, 5, 1, 12, 0, 0),
  rules: rules as readonly RuleDefinition[],
  payloads: realisticLoanPayloads() as readonly unknown[],
} as const;
