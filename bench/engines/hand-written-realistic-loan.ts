/**
 * The baseline of `npm run bench:realistic`: the realistic-loan rules
 * (suites/realistic-loan.ts) written by hand, as a careful engineer would
 * without a rules engine, returning exactly the result the compiled
 * validator returns (same failure records with the same keys in the same
 * order, same totalRulesEvaluated). test/bench/realistic-loan.test.ts
 * checks the two agree on every payload of the suite.
 *
 * "Careful" as in hand-written-loan.ts: payload reads go through own
 * properties only, types are checked before comparing, a missing value is
 * told apart from a wrong one, and messages render values as the rule
 * language's templates do. Failure records are object literals with the
 * constant parts written in place: what a hand-written validator would do.
 */
import type { FailureRecord, Severity, ValidationResult } from '../../compiler/types.ts';
import { CURRENCIES, EMAIL_PATTERN, EMPLOYMENT_STATUSES, PURPOSES, SKU_PATTERN, SSN_PATTERN, TERMS } from '../suites/realistic-loan.ts';
import { parseDate } from './date-helpers.ts';

const hasOwn = Object.hasOwn;

// The rule language runs patterns with the `u` flag; on these ASCII-only
// patterns the answers are the same without it.
const EMAIL_RE = new RegExp(EMAIL_PATTERN);
const SSN_RE = new RegExp(SSN_PATTERN);
const SKU_RE = new RegExp(SKU_PATTERN);

/** Own property of a JSON object or array, else undefined. */
function own(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' && hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function isMissing(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

/** Template rendering of docs/rule-language.md: numbers that are not finite render as "". */
function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return '';
  return JSON.stringify(value);
}

/** Characters (code points) of a string, as `len` counts them; undefined for anything else but arrays. */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function isValidNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function failure(
  ruleCode: string, ruleName: string, severity: Severity, message: string, fieldPath: string,
  actualValue: unknown, expectedValue: unknown,
): FailureRecord {
  return {
    ruleCode, ruleName, severity, message, errorCode: ruleCode, fieldPath,
    actualValue: actualValue === undefined ? null : actualValue, expectedValue,
  };
}

/** Sum of qty * price over the items; NaN when an item lacks a number, undefined when `items` is no array. */
function itemsTotal(items: unknown): number | undefined {
  if (!Array.isArray(items)) return undefined;
  let total = 0;
  for (const item of items) {
    const qty = own(item, 'qty');
    const price = own(item, 'price');
    const line = typeof qty === 'number' && typeof price === 'number' ? qty * price : Number.NaN;
    total += Number.isFinite(line) ? line : Number.NaN;
  }
  return Number.isFinite(total) ? total : Number.NaN;
}

/**
 * Validates a realistic-loan payload exactly as the compiled suite does:
 * failures by priority, then code, then element.
 *
 * @example
 * validateRealisticLoanByHand(JSON.parse(body)).isValid
 */
export function validateRealisticLoanByHand(payload: unknown): ValidationResult {
  const failures: FailureRecord[] = [];
  let evaluated = 0;
  const applicant = own(payload, 'applicant');
  const loan = own(payload, 'loan');
  const items = own(payload, 'items');
  const status = own(applicant, 'employmentStatus');
  const amount = own(loan, 'amount');

  // Priority 0: the applicant.
  evaluated++;
  const income = own(applicant, 'annualIncome');
  if (isMissing(income) || !isValidNumber(income) || !(income >= 0)) {
    failures.push(failure('ANNUAL_INCOME', 'Annual income', 'Error', 'Annual income failed', 'applicant.annualIncome', income, null));
  }

  evaluated++;
  const age = own(applicant, 'age');
  if (isMissing(age) || !Number.isInteger(age) || (age as number) < 18 || (age as number) > 120) {
    failures.push(failure('APPLICANT_AGE', 'Applicant age', 'Error', `Age ${render(age)} is outside 18 to 120`,
      'applicant.age', age, null));
  }

  evaluated++;
  const email = own(applicant, 'email');
  if (typeof email !== 'string' || !EMAIL_RE.test(email)) {
    failures.push(failure('APPLICANT_EMAIL', 'Applicant e-mail', 'Error', `'${render(email)}' is not a valid e-mail address`,
      'applicant.email', email, null));
  }

  evaluated++;
  const firstName = own(applicant, 'firstName');
  if (typeof firstName !== 'string' || firstName.length === 0 || codePoints(firstName) > 50) {
    failures.push(failure('APPLICANT_FIRST_NAME', 'Applicant first name', 'Error', 'The first name must have 1 to 50 characters',
      'applicant.firstName', firstName, null));
  }

  evaluated++;
  const lastName = own(applicant, 'lastName');
  if (typeof lastName !== 'string' || lastName.trim().length === 0 || codePoints(lastName) > 80) {
    const length = typeof lastName === 'string' ? String(codePoints(lastName)) : '';
    failures.push(failure('APPLICANT_LAST_NAME', 'Applicant last name', 'Error',
      `The last name must have 1 to 80 characters, not ${length}`, 'applicant.lastName', lastName, null));
  }

  evaluated++;
  const ssn = own(applicant, 'ssn');
  if (typeof ssn !== 'string' || !SSN_RE.test(ssn)) {
    failures.push(failure('APPLICANT_SSN', 'Applicant SSN', 'Error', 'The SSN must be written like 123-45-6789',
      'applicant.ssn', ssn, null));
  }

  evaluated++;
  if (!EMPLOYMENT_STATUSES.includes(status as string)) {
    failures.push(failure('EMPLOYMENT_STATUS', 'Employment status', 'Error',
      `Employment status ${render(status)} is not one of ${JSON.stringify(EMPLOYMENT_STATUSES)}`,
      'applicant.employmentStatus', status, EMPLOYMENT_STATUSES));
  }

  // Priority 10: the loan.
  if (typeof amount === 'number' && amount > 250000) {
    evaluated++;
    const coSsn = own(own(payload, 'coApplicant'), 'ssn');
    if (typeof coSsn !== 'string' || !SSN_RE.test(coSsn)) {
      failures.push(failure('CO_APPLICANT_SSN', 'Co-applicant SSN', 'Error', 'Loans over 250000 need a co-applicant with a valid SSN',
        'coApplicant.ssn', coSsn, null));
    }
  }

  if (status === 'employed') {
    evaluated++;
    const employer = own(own(payload, 'employer'), 'name');
    if (typeof employer !== 'string' || codePoints(employer) < 2 || codePoints(employer) > 100) {
      failures.push(failure('EMPLOYER_NAME', 'Employer name', 'Error', 'Employed applicants must name their employer',
        'employer.name', employer, null));
    }
  }

  evaluated++;
  if (!isValidNumber(amount) || amount < 1000 || amount > 500000) {
    failures.push(failure('LOAN_AMOUNT', 'Loan amount', 'Error', `The loan amount ${render(amount)} must be between 1000 and 500000`,
      'loan.amount', amount, null));
  }

  const currency = own(loan, 'currency');
  if (!isMissing(currency)) {
    evaluated++;
    if (!CURRENCIES.includes(currency as string)) {
      failures.push(failure('LOAN_CURRENCY', 'Loan currency', 'Warning', 'Loan currency failed', 'loan.currency', currency, CURRENCIES));
    }
  }

  evaluated++;
  const startDate = own(loan, 'startDate');
  const endDate = own(loan, 'endDate');
  const start = parseDate(startDate);
  const end = parseDate(endDate);
  if (isMissing(endDate) || end === undefined || start === undefined || !(end > start)) {
    failures.push(failure('LOAN_DATES', 'Loan end after start', 'Error',
      `The end date ${render(endDate)} must be after the start date ${render(startDate)}`, 'loan.endDate', endDate, null));
  }

  evaluated++;
  const purpose = own(loan, 'purpose');
  if (!PURPOSES.includes(purpose as string)) {
    failures.push(failure('LOAN_PURPOSE', 'Loan purpose', 'Error', 'Loan purpose failed', 'loan.purpose', purpose, PURPOSES));
  }

  evaluated++;
  const submittedAt = own(payload, 'submittedAt');
  const submitted = parseDate(submittedAt);
  if (isMissing(startDate) || start === undefined || submitted === undefined || !(start >= submitted)) {
    failures.push(failure('LOAN_START_DATE', 'Loan start date', 'Error',
      `The loan cannot start (${render(startDate)}) before the application (${render(submittedAt)})`,
      'loan.startDate', startDate, null));
  }

  evaluated++;
  const term = own(loan, 'termMonths');
  if (!TERMS.includes(term as number)) {
    failures.push(failure('LOAN_TERM', 'Loan term', 'Error', `A term of ${render(term)} months is not offered`,
      'loan.termMonths', term, TERMS));
  }

  // Priority 20: the line items.
  evaluated++;
  if (!Array.isArray(items) || items.length < 1 || items.length > 20) {
    failures.push(failure('ITEMS_LIST', 'Line items', 'Error', 'Between 1 and 20 line items are required', 'items', items, null));
  }

  if (!isMissing(amount)) {
    evaluated++;
    const total = itemsTotal(items);
    if (total === undefined || typeof amount !== 'number' || !(total <= amount)) {
      failures.push(failure('ITEMS_TOTAL', 'Line items within the loan', 'Error',
        `The items total ${render(total)} exceeds the loan amount ${render(amount)}`, 'loan.amount', amount, null));
    }
  }

  // One pass per rule, so each rule's failures stay in element order.
  if (Array.isArray(items)) {
    evaluated += 3;
    for (let i = 0; i < items.length; i++) {
      const price = own(items[i], 'price');
      if (!isValidNumber(price) || !(price > 0)) {
        failures.push(failure('LINE_PRICE', 'Line price', 'Error', `Item ${i}: price ${render(price)} must be a positive number`,
          `items[${i}].price`, price, null));
      }
    }
    for (let i = 0; i < items.length; i++) {
      const qty = own(items[i], 'qty');
      if (!Number.isInteger(qty) || (qty as number) < 1 || (qty as number) > 100) {
        failures.push(failure('LINE_QTY', 'Line quantity', 'Error',
          `Item ${i}: quantity ${render(qty)} must be a whole number from 1 to 100`, `items[${i}].qty`, qty, null));
      }
    }
    for (let i = 0; i < items.length; i++) {
      const sku = own(items[i], 'sku');
      if (typeof sku !== 'string' || !SKU_RE.test(sku)) {
        failures.push(failure('LINE_SKU', 'Line SKU', 'Error', `Item ${i}: SKU ${render(sku)} is not of the form ABC-1234`,
          `items[${i}].sku`, sku, null));
      }
    }
  }

  return { isValid: failures.length === 0, totalRulesEvaluated: evaluated, failures };
}
