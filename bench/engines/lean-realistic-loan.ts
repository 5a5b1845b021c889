/**
 * The lean baseline of `npm run bench:realistic`: the realistic-loan rules
 * (suites/realistic-loan.ts) written by hand the quickest way that still
 * decides every payload of the suite as the compiled validator does. It
 * returns only the codes of the failing rules, in evaluation order, each
 * once: no failure records, no messages.
 *
 * Lean where the full baseline (hand-written-realistic-loan.ts) is careful:
 * plain property reads (no own-property checks), `.length` for string
 * lengths (the suite's names are all in the Basic Multilingual Plane), ISO
 * dates checked for the `YYYY-MM-DD` form and a real calendar day, then
 * compared as strings, and one loop over the line items for the total and
 * the three per-item rules. It is exact on the suite's payloads, whose
 * dates are all of that one form, not on every payload the language
 * accepts; test/bench/realistic-loan.test.ts checks the codes agree with
 * the compiled validator's on every payload of the suite.
 */
import { CURRENCIES, EMAIL_PATTERN, EMPLOYMENT_STATUSES, PURPOSES, SKU_PATTERN, SSN_PATTERN, TERMS } from '../suites/realistic-loan.ts';

const EMAIL_RE = new RegExp(EMAIL_PATTERN);
const SSN_RE = new RegExp(SSN_PATTERN);
const SKU_RE = new RegExp(SKU_PATTERN);

type Obj = Record<string, any>;

function obj(value: unknown): Obj | undefined {
  return value !== null && typeof value === 'object' ? (value) : undefined;
}

function digit(text: string, i: number): number {
  const d = text.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -100;
}

/** `YYYY-MM-DD` naming a real calendar day: such strings order as their dates do. */
function isIsoDate(value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== 10 || value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45) return false;
  const year = digit(value, 0) * 1000 + digit(value, 1) * 100 + digit(value, 2) * 10 + digit(value, 3);
  const month = digit(value, 5) * 10 + digit(value, 6);
  const day = digit(value, 8) * 10 + digit(value, 9);
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  const days = month === 2
    ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28)
    : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return day <= days;
}

/**
 * The codes of the rules a realistic-loan payload fails, in the compiled
 * validator's order (priority, then code).
 *
 * @example
 * validateRealisticLoanLean(JSON.parse(body)); // [] or ['APPLICANT_EMAIL', 'LINE_QTY']
 */
export function validateRealisticLoanLean(payload: unknown): string[] {
  const codes: string[] = [];
  const p = obj(payload) ?? {};
  const applicant = obj(p.applicant) ?? {};
  const loan = obj(p.loan) ?? {};
  const items: unknown = p.items;

  const income = applicant.annualIncome;
  if (typeof income !== 'number' || income < 0) codes.push('ANNUAL_INCOME');
  const age = applicant.age;
  if (!Number.isInteger(age) || age < 18 || age > 120) codes.push('APPLICANT_AGE');
  const email = applicant.email;
  if (typeof email !== 'string' || !EMAIL_RE.test(email)) codes.push('APPLICANT_EMAIL');
  const firstName = applicant.firstName;
  if (typeof firstName !== 'string' || firstName.length < 1 || firstName.length > 50) codes.push('APPLICANT_FIRST_NAME');
  const lastName = applicant.lastName;
  if (typeof lastName !== 'string' || lastName.trim().length < 1 || lastName.length > 80) codes.push('APPLICANT_LAST_NAME');
  const ssn = applicant.ssn;
  if (typeof ssn !== 'string' || !SSN_RE.test(ssn)) codes.push('APPLICANT_SSN');
  const status = applicant.employmentStatus;
  if (!EMPLOYMENT_STATUSES.includes(status)) codes.push('EMPLOYMENT_STATUS');

  const amount = loan.amount;
  if (typeof amount === 'number' && amount > 250000) {
    const coSsn = obj(p.coApplicant)?.ssn;
    if (typeof coSsn !== 'string' || !SSN_RE.test(coSsn)) codes.push('CO_APPLICANT_SSN');
  }
  if (status === 'employed') {
    const employer = obj(p.employer)?.name;
    if (typeof employer !== 'string' || employer.length < 2 || employer.length > 100) codes.push('EMPLOYER_NAME');
  }
  if (typeof amount !== 'number' || amount < 1000 || amount > 500000) codes.push('LOAN_AMOUNT');
  const currency = loan.currency;
  if (currency !== undefined && currency !== null && !CURRENCIES.includes(currency)) codes.push('LOAN_CURRENCY');
  const startDate = loan.startDate;
  const endDate = loan.endDate;
  const startOk = isIsoDate(startDate);
  if (!startOk || !isIsoDate(endDate) || !(endDate > startDate)) codes.push('LOAN_DATES');
  if (!PURPOSES.includes(loan.purpose)) codes.push('LOAN_PURPOSE');
  const submittedAt = p.submittedAt;
  if (!startOk || !isIsoDate(submittedAt) || !(startDate >= submittedAt)) codes.push('LOAN_START_DATE');
  if (!TERMS.includes(loan.termMonths)) codes.push('LOAN_TERM');

  const isList = Array.isArray(items);
  if (!isList || items.length < 1 || items.length > 20) codes.push('ITEMS_LIST');
  // One pass over the items: the total and the three per-item rules.
  let total = Number.NaN;
  let badPrice = false;
  let badQty = false;
  let badSku = false;
  if (isList) {
    total = 0;
    for (let i = 0; i < items.length; i++) {
      const item = obj(items[i]) ?? {};
      const qty = item.qty;
      const price = item.price;
      const sku = item.sku;
      total += typeof qty === 'number' && typeof price === 'number' ? qty * price : Number.NaN;
      if (typeof price !== 'number' || !(price > 0)) badPrice = true;
      if (!Number.isInteger(qty) || qty < 1 || qty > 100) badQty = true;
      if (typeof sku !== 'string' || !SKU_RE.test(sku)) badSku = true;
    }
  }
  if (amount !== undefined && amount !== null && !(typeof amount === 'number' && total <= amount)) codes.push('ITEMS_TOTAL');
  if (badPrice) codes.push('LINE_PRICE');
  if (badQty) codes.push('LINE_QTY');
  if (badSku) codes.push('LINE_SKU');
  return codes;
}
