/**
 * The baseline: the loan-application rules written by hand, the way a
 * careful engineer would without a rules engine. It produces exactly the
 * result the compiled validator must produce (same failure records, same
 * order, same totalRulesEvaluated), so the runner can check the two agree
 * before timing them.
 *
 * "Careful" means: payload reads go through own properties only (a key
 * named `toString` or `constructor` in the payload must not reach
 * Object.prototype), types are checked before comparing, and a missing
 * value is told apart from a wrong one. It does not mean emulating every
 * corner of the rule language: where a business field is numeric, it is
 * compared as a number only.
 */
import type { FailureRecord, Severity, ValidationResult } from '../../compiler/types.ts';
import { ageAt, daysBetween } from './date-helpers.ts';

const hasOwn = Object.hasOwn;

const APPLICATION_ID_RE = /^APP-[0-9]{4}-[0-9]{6}$/;
const PHONE_RE = /^[+][0-9][0-9 ]{7,19}$/;
const POSTCODE_RE = /^[A-Z0-9 ]{3,10}$/u;
const SKU_RE = /^[A-Z]{3}-[0-9]{4}$/;
const POSTCODE_PATTERN = '^[A-Z0-9 ]{3,10}$';
const ADDRESS_KEYS = ['line1', 'city', 'postcode', 'country'];
const COUNTRIES = ['GB', 'IE', 'FR', 'DE', 'NL'];
const PURPOSES = ['equipment', 'vehicle', 'working-capital'];
const TERMS = [12, 24, 36, 48, 60, 84, 120];

/** Own property of a JSON object or array, else undefined. */
function own(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' && hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function isMissing(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Template rendering of docs/rule-language.md: numbers that are not finite render as "". */
function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return '';
  return JSON.stringify(value);
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!hasOwn(b, key) || !deepEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** True when no two values are deeply equal; a Set suffices unless a value is an object. */
function distinct(values: unknown[]): boolean {
  let primitive = true;
  for (const v of values) if (v !== null && typeof v === 'object') primitive = false;
  if (primitive) return new Set(values).size === values.length;
  for (let i = 0; i < values.length; i++) {
    for (let j = i + 1; j < values.length; j++) if (deepEqual(values[i], values[j])) return false;
  }
  return true;
}

function skus(items: unknown[]): unknown[] {
  const values = new Array<unknown>(items.length);
  for (let i = 0; i < items.length; i++) values[i] = own(items[i], 'sku');
  return values;
}

function failure(
  ruleCode: string, ruleName: string, severity: Severity, message: string, errorCode: string,
  fieldPath: string, actualValue: unknown, expectedValue: unknown,
): FailureRecord {
  return { ruleCode, ruleName, severity, message, errorCode, fieldPath, actualValue, expectedValue };
}

function addressFailure(failures: FailureRecord[], path: string, actual: unknown, expected: unknown, ajvMessage: string): void {
  failures.push(failure('APPLICANT_ADDRESS', 'Applicant address', 'Error', `Applicant address: ${ajvMessage}`,
    'APPLICANT_ADDRESS', path, actual, expected));
}

function checkAddressText(failures: FailureRecord[], address: Record<string, unknown>, key: string, maxLength: number): void {
  if (!hasOwn(address, key)) return;
  const value = address[key];
  const path = `applicant.address.${key}`;
  if (typeof value !== 'string') return addressFailure(failures, path, value, 'string', 'must be string');
  const length = codePoints(value);
  if (length > maxLength) addressFailure(failures, path, value, maxLength, `must NOT have more than ${maxLength} characters`);
  if (length < 1) addressFailure(failures, path, value, 1, 'must NOT have fewer than 1 characters');
}

/** The JSON Schema of `applicant.address`, checked by hand in ajv's error order. */
function checkAddress(address: unknown, failures: FailureRecord[]): void {
  if (!isPlainObject(address)) return addressFailure(failures, 'applicant.address', address, 'object', 'must be object');
  for (const key of ADDRESS_KEYS) {
    if (!hasOwn(address, key)) {
      addressFailure(failures, `applicant.address.${key}`, null, null, `must have required property '${key}'`);
    }
  }
  checkAddressText(failures, address, 'line1', 100);
  checkAddressText(failures, address, 'city', 60);
  if (hasOwn(address, 'postcode')) {
    const postcode = address.postcode;
    if (typeof postcode !== 'string') addressFailure(failures, 'applicant.address.postcode', postcode, 'string', 'must be string');
    else if (!POSTCODE_RE.test(postcode)) {
      addressFailure(failures, 'applicant.address.postcode', postcode, POSTCODE_PATTERN,
        `must match pattern "${POSTCODE_PATTERN}"`);
    }
  }
  if (hasOwn(address, 'country') && !COUNTRIES.includes(address.country as string)) {
    addressFailure(failures, 'applicant.address.country', address.country, COUNTRIES,
      'must be equal to one of the allowed values');
  }
}

/**
 * Validates a loan application exactly as the compiled `loan-application`
 * suite does, failures in priority, then code, then element order.
 *
 * @example
 * validateLoanByHand(JSON.parse(body), Date.now()).isValid
 */
export function validateLoanByHand(payload: unknown, now: number): ValidationResult {
  const failures: FailureRecord[] = [];
  let evaluated = 0;
  const applicant = own(payload, 'applicant');
  const loan = own(payload, 'loan');
  const items = own(payload, 'items');
  const amount = own(loan, 'amount');

  // Priority 0.
  const address = own(applicant, 'address');
  evaluated++;
  if (isMissing(address)) {
    failures.push(failure('APPLICANT_ADDRESS', 'Applicant address', 'Error', 'Applicant address failed',
      'APPLICANT_ADDRESS', 'applicant.address', null, null));
  } else checkAddress(address, failures);

  evaluated++;
  const lastName = own(applicant, 'lastName');
  if (isMissing(lastName)) {
    failures.push(failure('APPLICANT_LAST_NAME', 'Applicant last name', 'Error', 'The applicant last name is required',
      'APPLICANT_LAST_NAME', 'applicant.lastName', null, null));
  }

  evaluated++;
  const applicationId = own(payload, 'applicationId');
  if (typeof applicationId !== 'string' || !APPLICATION_ID_RE.test(applicationId)) {
    failures.push(failure('APPLICATION_ID', 'Application id format', 'Error',
      `Application id '${render(applicationId)}' is not of the form APP-YYYY-NNNNNN`,
      'APPLICATION_ID', 'applicationId', applicationId ?? null, null));
  }

  evaluated++;
  const creditCheck = own(own(payload, 'consents'), 'creditCheck');
  if (creditCheck !== true) {
    failures.push(failure('CONSENT_CREDIT_CHECK', 'Credit check consent', 'Error',
      'The applicant must consent to a credit check', 'CONSENT_CREDIT_CHECK', 'consents.creditCheck',
      creditCheck ?? null, true));
  }

  // Priority 10.
  evaluated++;
  const dob = own(applicant, 'dob');
  const age = isMissing(dob) ? undefined : ageAt(dob, now);
  if (age === undefined || age < 18) {
    failures.push(failure('APPLICANT_AGE', 'Applicant age', 'Error',
      `The applicant must be 18 or older (born ${render(dob)})`, 'APPLICANT_AGE', 'applicant.dob', dob ?? null, 18));
  }

  const firstName = own(applicant, 'firstName');
  if (!isMissing(firstName)) {
    evaluated++;
    if (typeof firstName !== 'string' || codePoints(firstName.trim()) < 1 || codePoints(firstName) > 50) {
      failures.push(failure('APPLICANT_NAME_LENGTH', 'Applicant first name length', 'Error',
        'The first name must have 1 to 50 characters', 'APPLICANT_NAME_LENGTH', 'applicant.firstName', firstName, null));
    }
  }

  const phone = own(applicant, 'phone');
  if (!isMissing(phone)) {
    evaluated++;
    if (typeof phone !== 'string' || !PHONE_RE.test(phone)) {
      failures.push(failure('APPLICANT_PHONE', 'Applicant phone format', 'Warning',
        `Phone ${render(phone)} is not in international format`, 'APPLICANT_PHONE', 'applicant.phone', phone, null));
    }
  }

  const employment = own(applicant, 'employment');
  if (own(employment, 'status') === 'employed') {
    evaluated++;
    const years = own(employment, 'years');
    if (typeof years !== 'number' || !(years >= 1)) {
      failures.push(failure('EMPLOYMENT_YEARS', 'Employment duration', 'Error',
        `Employed applicants need at least 1 year with their employer, not ${render(years)}`,
        'EMPLOYMENT_YEARS', 'applicant.employment.years', years ?? null, 1));
    }
  }

  // Priority 20.
  if (typeof amount === 'number' && amount > 25000) {
    evaluated++;
    const collateral = own(own(payload, 'collateral'), 'value');
    if (typeof collateral !== 'number' || !(collateral >= amount)) {
      failures.push(failure('COLLATERAL_COVERAGE', 'Collateral coverage', 'Error',
        `Collateral of ${render(collateral)} does not cover the loan of ${render(amount)}`,
        'COLLATERAL_COVERAGE', 'collateral.value', collateral ?? null, null));
    }
  }

  evaluated++;
  if (typeof amount !== 'number' || !(amount >= 1000 && amount <= 1_000_000)) {
    failures.push(failure('LOAN_AMOUNT_RANGE', 'Loan amount range', 'Error',
      `The loan amount ${render(amount)} must be between 1000 and 1000000`, 'LOAN_AMOUNT_RANGE', 'loan.amount',
      amount ?? null, null));
  }

  const currency = own(loan, 'currency');
  if (!isMissing(currency)) {
    evaluated++;
    if (typeof currency !== 'string' || codePoints(currency) !== 3 || currency.toUpperCase() !== currency) {
      failures.push(failure('LOAN_CURRENCY', 'Loan currency code', 'Info',
        `Currency ${render(currency)} should be an upper-case ISO 4217 code`, 'CURRENCY_FORMAT', 'loan.currency',
        currency, null));
    }
  }

  const purpose = own(loan, 'purpose');
  if (!isMissing(purpose)) {
    evaluated++;
    if (!PURPOSES.includes(purpose as string)) {
      failures.push(failure('LOAN_PURPOSE', 'Loan purpose', 'Error',
        `Loan purpose ${render(purpose)} is not one of ${render(PURPOSES)}`, 'LOAN_PURPOSE', 'loan.purpose',
        purpose, PURPOSES));
    }
  }

  const submittedAt = own(payload, 'submittedAt');
  const startDate = own(loan, 'startDate');
  if (!isMissing(submittedAt) && !isMissing(startDate)) {
    evaluated++;
    const days = daysBetween(submittedAt, startDate);
    if (days === undefined || days < 0 || days > 90) {
      failures.push(failure('LOAN_START_WINDOW', 'Loan start date window', 'Error',
        `The start date ${render(startDate)} must be within 90 days of submission on ${render(submittedAt)}`,
        'LOAN_START_WINDOW', 'loan.startDate', startDate, null));
    }
  }

  evaluated++;
  const term = own(loan, 'termMonths');
  if (!TERMS.includes(term as number)) {
    failures.push(failure('LOAN_TERM', 'Loan term', 'Error', `A term of ${render(term)} months is not offered`,
      'LOAN_TERM', 'loan.termMonths', term ?? null, TERMS));
  }

  if (!isMissing(amount)) {
    evaluated++;
    const income = own(applicant, 'income');
    const limit = typeof income === 'number' ? income * 5 : Number.NaN;
    if (typeof amount !== 'number' || !(amount <= limit) || !Number.isFinite(limit)) {
      failures.push(failure('LOAN_TO_INCOME', 'Loan to income', 'Error',
        `The loan amount ${render(amount)} exceeds five times the income (${render(limit)})`,
        'LOAN_TO_INCOME', 'loan.amount', amount, null));
    }
  }

  // Priority 30.
  evaluated++;
  if (!Array.isArray(items) || items.length < 1 || items.length > 50 || !distinct(skus(items))) {
    failures.push(failure('ITEMS_PRESENT', 'Line items present and distinct', 'Error',
      'Between 1 and 50 line items with distinct SKUs are required', 'ITEMS_PRESENT', 'items', items ?? null, null));
  }

  if (!isMissing(amount)) {
    evaluated++;
    let total = Array.isArray(items) ? 0 : Number.NaN;
    if (Array.isArray(items)) {
      for (const item of items) {
        const qty = own(item, 'qty');
        const price = own(item, 'unitPrice');
        total += typeof qty === 'number' && typeof price === 'number' ? qty * price : Number.NaN;
      }
    }
    if (!Number.isFinite(total) || typeof amount !== 'number' || !(total >= amount)) {
      failures.push(failure('ITEMS_TOTAL', 'Line items cover the loan', 'Error',
        `The items total ${render(total)} is below the loan amount ${render(amount)}`,
        'ITEMS_TOTAL', 'loan.amount', amount, null));
    }
  }

  // Priority 40: one pass per rule, so each rule's failures stay in element order.
  if (Array.isArray(items)) {
    evaluated += 3;
    for (let i = 0; i < items.length; i++) {
      const qty = own(items[i], 'qty');
      if (!Number.isInteger(qty) || (qty as number) < 1 || (qty as number) > 100) {
        failures.push(failure('LINE_QTY', 'Line quantity', 'Error',
          `Item ${i}: quantity ${render(qty)} must be a whole number from 1 to 100`, 'LINE_QTY', `items[${i}].qty`,
          qty ?? null, null));
      }
    }
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (own(item, 'kind') !== 'equipment') continue;
      const sku = own(item, 'sku');
      if (typeof sku !== 'string' || !SKU_RE.test(sku)) {
        failures.push(failure('LINE_SKU', 'Equipment SKU format', 'Error',
          `Equipment item ${i} has an invalid SKU ${render(sku)}`, 'LINE_SKU', `items[${i}].sku`, sku ?? null, null));
      }
    }
    for (let i = 0; i < items.length; i++) {
      const price = own(items[i], 'unitPrice');
      if (isMissing(price)) continue;
      if (typeof price !== 'number' || !(price > 0)) {
        failures.push(failure('LINE_UNIT_PRICE', 'Line unit price', 'Error', 'Line unit price failed',
          'LINE_UNIT_PRICE', `items[${i}].unitPrice`, price, 0));
      }
    }
  }

  return { isValid: failures.length === 0, totalRulesEvaluated: evaluated, failures };
}
