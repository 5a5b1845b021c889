/**
 * The run-time half of the rule language (docs/rule-language.md). Generated
 * validators receive this module as their frozen `rt` argument and reach
 * nothing else: no globals, and of the built-in prototypes only
 * Object.prototype and Array.prototype, which their field readers compare
 * a payload value's prototype with and look a name up in, never read from
 * otherwise.
 *
 * Every helper is total: for any JSON value, and for the values the
 * language itself produces (undefined, NaN as the "invalid number"), it
 * returns a value and never throws. Deep structures are walked with an
 * explicit stack, so payload depth cannot overflow the call stack here.
 *
 * The module imports only ajv-formats' format checks and the decision
 * tables' index (table/table-index.ts, pure), so a bundler can inline it
 * into the standalone validator module (docs/api.md).
 */
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { table } from './table/table-index.ts';
import type { FailureRecord, Severity } from './types.ts';

// Captured at load: later changes to built-ins, and payload keys such as
// "hasOwnProperty", cannot change how the helpers behave.
const objectHasOwn = Object.hasOwn;
const objectGetPrototypeOf = Object.getPrototypeOf;
const isArrayFn = Array.isArray;
const objectKeys = Object.keys;
const freeze = Object.freeze;
const isFiniteNumber = Number.isFinite;
const isIntegerNumber = Number.isInteger;
const jsonParse = JSON.parse;
const jsonStringify = JSON.stringify;
const mathFloor = Math.floor;
const mathCeil = Math.ceil;
const mathAbs = Math.abs;
const mathMin = Math.min;
const mathMax = Math.max;
const mathImul = Math.imul;
const toString = String;
const dateNow = Date.now;

/**
 * The longest string `+` may build: a longer join is the invalid value.
 * Joins multiply: a long chain of `a` operands turns a payload string into
 * one a thousand times its length, and each function applied to it then
 * runs with nothing able to interrupt it, not even the evaluation
 * deadline. This bound keeps one such call short (and the service's cost
 * model counts the chain, so the deadline watches it).
 */
export const MAX_JOIN_LENGTH = 16 * 1024 * 1024;
const DAY_MS = 86_400_000;

type Json = unknown;

/** Normalizes a number result: NaN and infinities become the invalid number (NaN). */
function num(x: number): number {
  return isFiniteNumber(x) ? x : NaN;
}

/**
 * Own-property read that never throws: `x.constructor`, `x.__proto__` and
 * every other inherited name read as undefined unless the payload has such
 * an own key. Strings and numbers have no fields.
 */
export function get(object: Json, key: string | number): Json {
  return object !== null && typeof object === 'object' && objectHasOwn(object, key)
    ? (object as Record<string | number, Json>)[key]
    : undefined;
}

/**
 * `Object.hasOwn`, captured at load. Generated per-field readers use it
 * after a named load, which V8 keeps monomorphic where a shared `get` would
 * see every shape of every payload.
 */
export const hasOwn: (object: object, key: PropertyKey) => boolean = objectHasOwn;

/**
 * `Object.getPrototypeOf` and the two prototypes of JSON values, captured
 * at load. A reader that found a value under a name the prototype lacks
 * knows the value is the object's own without calling `hasOwn`, a builtin
 * call V8 does not inline; V8 folds `getPrototypeOf` and the prototype's
 * missing property into checks of the object's map.
 */
export const getPrototypeOf: (object: object) => object | null = objectGetPrototypeOf;
export const objectPrototype: object = Object.prototype;
export const arrayPrototype: object = Array.prototype;

/** `.length`: UTF-16 units of a string, else the own field `length` (arrays have one). */
export function length(x: Json): Json {
  return typeof x === 'string' ? x.length : get(x, 'length');
}

/** Strict deep equality of `==` and `===` (3.2): no coercion, objects in any key order. */
export function eq(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const stack: Json[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    const xIsArray = isArrayFn(x);
    if (xIsArray !== isArrayFn(y)) return false;
    if (xIsArray) {
      const ya = y as Json[];
      if (x.length !== ya.length) return false;
      for (let i = 0; i < x.length; i++) stack.push(x[i], ya[i]);
    } else {
      const xo = x as Record<string, Json>;
      const yo = y as Record<string, Json>;
      const keys = objectKeys(xo);
      if (keys.length !== objectKeys(yo).length) return false;
      for (const key of keys) {
        if (!objectHasOwn(yo, key)) return false;
        stack.push(xo[key], yo[key]);
      }
    }
  }
  return true;
}

/** `!=` / `!==`: the negation of `eq`, so an invalid number is unequal to everything. */
export function ne(a: Json, b: Json): boolean {
  return !eq(a, b);
}

/** `<`: only two numbers or two strings (UTF-16 code units) compare; otherwise false. */
export function lt(a: Json, b: Json): boolean {
  return (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')
    ? (a as number) < (b as number)
    : false;
}

/** `<=`, typed like `lt`. */
export function le(a: Json, b: Json): boolean {
  return (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')
    ? (a as number) <= (b as number)
    : false;
}

/**
 * `between(x, low, high)`: `low <= x && x <= high`, compared as `<=`
 * compares, so three numbers or three strings (ISO dates of one form);
 * false otherwise, as a comparison of the wrong types is.
 */
export function between(x: Json, low: Json, high: Json): boolean {
  return le(low, x) && le(x, high);
}

/** `>`, typed like `lt`. */
export function gt(a: Json, b: Json): boolean {
  return (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')
    ? (a as number) > (b as number)
    : false;
}

/** `>=`, typed like `lt`. */
export function ge(a: Json, b: Json): boolean {
  return (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')
    ? (a as number) >= (b as number)
    : false;
}

/** `+`: two numbers add, two strings join; anything else is the invalid number. */
export function add(a: Json, b: Json): Json {
  if (typeof a === 'number' && typeof b === 'number') return num(a + b);
  if (typeof a === 'string' && typeof b === 'string') {
    return a.length + b.length <= MAX_JOIN_LENGTH ? a + b : NaN;
  }
  return NaN;
}

/** `-` of two numbers. */
export function sub(a: Json, b: Json): number {
  return typeof a === 'number' && typeof b === 'number' ? num(a - b) : NaN;
}

/** `*` of two numbers. */
export function mul(a: Json, b: Json): number {
  return typeof a === 'number' && typeof b === 'number' ? num(a * b) : NaN;
}

/** `/` of two numbers; division by zero is invalid (infinite or NaN). */
export function div(a: Json, b: Json): number {
  return typeof a === 'number' && typeof b === 'number' ? num(a / b) : NaN;
}

/** `%` of two numbers, with JavaScript's sign rule. */
export function mod(a: Json, b: Json): number {
  return typeof a === 'number' && typeof b === 'number' ? num(a % b) : NaN;
}

/** `**` of two numbers. */
export function pow(a: Json, b: Json): number {
  return typeof a === 'number' && typeof b === 'number' ? num(a ** b) : NaN;
}

/** Unary `-`. */
export function neg(a: Json): number {
  return typeof a === 'number' ? -a : NaN;
}

/** Unary `+`: numbers only, no string coercion. */
export function pos(a: Json): number {
  return typeof a === 'number' ? a : NaN;
}

// ---- functions of 3.4 ------------------------------------------------------

/** Not undefined or null. */
export function exists(x: Json): boolean {
  return x !== undefined && x !== null;
}

/** undefined, null, `""`, `[]` or `{}`. */
export function isEmpty(x: Json): boolean {
  if (x === undefined || x === null || x === '') return true;
  if (typeof x !== 'object') return false;
  return isArrayFn(x) ? x.length === 0 : objectKeys(x).length === 0;
}

/** Code points of a string (lone surrogates count one each, as JSON Schema's minLength). */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Code points of a string, elements of an array, own keys of an object, else undefined. */
export function len(x: Json): number | undefined {
  if (typeof x === 'string') return codePoints(x);
  if (x === null || typeof x !== 'object') return undefined;
  return isArrayFn(x) ? x.length : objectKeys(x).length;
}

/**
 * `len(x) >= k`, for a whole number k, counting a string's code points only
 * when its length cannot decide: n UTF-16 units hold between ceil(n / 2)
 * and n code points. Names and codes checked against a range are mostly
 * decided by their length, and counting was a tenth of a validation's time
 * on the realistic-loan benchmark.
 */
export function lenAtLeast(x: Json, k: number): boolean {
  if (typeof x === 'string') {
    const n = x.length;
    if (n < k) return false;
    return n - (n >> 1) >= k || codePoints(x) >= k;
  }
  const n = len(x);
  return n !== undefined && n >= k;
}

/** `len(x) <= k`, for a whole number k, deciding by a string's length where it can (see lenAtLeast). */
export function lenAtMost(x: Json, k: number): boolean {
  if (typeof x === 'string') {
    const n = x.length;
    if (n <= k) return true;
    return n - (n >> 1) <= k && codePoints(x) <= k;
  }
  const n = len(x);
  return n !== undefined && n <= k;
}

export function isString(x: Json): boolean {
  return typeof x === 'string';
}

/** Finite numbers only: the invalid number is not a number here. */
export function isNumber(x: Json): boolean {
  return typeof x === 'number' && isFiniteNumber(x);
}

export function isInteger(x: Json): boolean {
  return isIntegerNumber(x);
}

export function isBoolean(x: Json): boolean {
  return typeof x === 'boolean';
}

export function isArray(x: Json): boolean {
  return isArrayFn(x);
}

/** A non-null object that is not an array. */
export function isObject(x: Json): boolean {
  return x !== null && typeof x === 'object' && !isArrayFn(x);
}

/** Sum of an array of numbers: 0 for `[]`, invalid for a non-number element, undefined for a non-array. */
export function sum(x: Json): number | undefined {
  if (!isArrayFn(x)) return undefined;
  let total = 0;
  for (let i = 0; i < x.length; i++) {
    const v: unknown = x[i];
    if (typeof v !== 'number') return NaN;
    total += v;
  }
  return num(total);
}

/** Mean of an array of numbers: undefined for `[]` and non-arrays, invalid like `sum` otherwise. */
export function avg(x: Json): number | undefined {
  if (!isArrayFn(x) || x.length === 0) return undefined;
  const total = sum(x) as number;
  return num(total / x.length);
}

function extreme(x: Json, wantMin: boolean): number {
  if (typeof x === 'number') return num(x);
  // An empty list has no extreme; like a bad operand, that is an invalid number.
  if (!isArrayFn(x) || x.length === 0) return NaN;
  const first: unknown = x[0];
  if (typeof first !== 'number') return NaN;
  let best = first;
  for (let i = 1; i < x.length; i++) {
    const v: unknown = x[i];
    if (typeof v !== 'number') return NaN;
    best = wantMin ? mathMin(best, v) : mathMax(best, v);
  }
  return num(best);
}

/** `min(arr)` or `min(n)`: one array of numbers or one number; `[]` is invalid. */
export function min(x: Json): number {
  return extreme(x, true);
}

/** `max(arr)` or `max(n)`, like `min`. */
export function max(x: Json): number {
  return extreme(x, false);
}

/** `min(a, b, ...)` folds pairwise: every operand must be a number. */
export function min2(a: Json, b: Json): number {
  return typeof a === 'number' && typeof b === 'number' ? num(mathMin(a, b)) : NaN;
}

/** `max(a, b, ...)` folds pairwise, like `min2`. */
export function max2(a: Json, b: Json): number {
  return typeof a === 'number' && typeof b === 'number' ? num(mathMax(a, b)) : NaN;
}

export function abs(x: Json): number {
  return typeof x === 'number' ? num(mathAbs(x)) : NaN;
}

export function floor(x: Json): number {
  return typeof x === 'number' ? num(mathFloor(x)) : NaN;
}

export function ceil(x: Json): number {
  return typeof x === 'number' ? num(mathCeil(x)) : NaN;
}

/** Adds one to a string of decimal digits: "129" gives "130", "99" gives "100", "" gives "1". */
function incrementDigits(digits: string): string {
  let i = digits.length - 1;
  while (i >= 0 && digits[i] === '9') i--;
  if (i < 0) return `1${'0'.repeat(digits.length)}`;
  return digits.slice(0, i) + String.fromCharCode(digits.charCodeAt(i) + 1) + '0'.repeat(digits.length - i - 1);
}

/**
 * Rounds half away from zero to `digits` (an integer 0-15, default 0), on
 * the number as it is written (its shortest decimal text): `round(1.005,
 * 2)` is 1.01 and `round(-2.5)` is -3, as a spreadsheet user expects, where
 * binary arithmetic would give 1 and -2. A number with no more decimals
 * than asked for comes back unchanged.
 */
export function round(x: Json, digits: Json = 0): number {
  if (typeof x !== 'number' || !isFiniteNumber(x)) return NaN;
  if (typeof digits !== 'number' || !isIntegerNumber(digits) || digits < 0 || digits > 15) return NaN;
  if (isIntegerNumber(x)) return x;
  const [mantissa, exponent = '0'] = String(mathAbs(x)).split('e');
  const point = mantissa.indexOf('.');
  const all = point < 0 ? mantissa : mantissa.slice(0, point) + mantissa.slice(point + 1);
  const intLength = (point < 0 ? mantissa.length : point) + Number(exponent);
  const keep = intLength + digits;
  if (keep >= all.length) return x;
  const sign = x < 0 ? -1 : 1;
  if (keep < 0) return sign * 0;
  let kept = all.slice(0, keep);
  if (all.charCodeAt(keep) >= 53 /* "5" */) kept = incrementDigits(kept);
  return num(sign * Number(`${kept === '' ? '0' : kept}e${intLength - keep}`));
}

export function lower(x: Json): string | undefined {
  return typeof x === 'string' ? x.toLowerCase() : undefined;
}

export function upper(x: Json): string | undefined {
  return typeof x === 'string' ? x.toUpperCase() : undefined;
}

export function trim(x: Json): string | undefined {
  return typeof x === 'string' ? x.trim() : undefined;
}

/** A compiled pattern: native RegExp or a linear-time engine, both with `test`. */
export interface Matcher {
  test(s: string): boolean;
}

/** `matches(str, "pattern")`: search semantics; a non-string subject is false. */
export function matches(matcher: Matcher, x: Json): boolean {
  return typeof x === 'string' && matcher.test(x);
}

const emailFormat = fullFormats.email as RegExp;
const uuidFormat = fullFormats.uuid as RegExp;
const uriFormat = fullFormats.uri as (s: string) => boolean;
const dateFormat = (fullFormats.date as { validate: (s: string) => boolean }).validate;
const dateTimeFormat = (fullFormats['date-time'] as { validate: (s: string) => boolean }).validate;

/** ajv-formats' `email`, so expression and schema rules agree. */
export function isEmail(x: Json): boolean {
  return typeof x === 'string' && emailFormat.test(x);
}

/** ajv-formats' `uuid`. */
export function isUuid(x: Json): boolean {
  return typeof x === 'string' && uuidFormat.test(x);
}

/** ajv-formats' `uri`. */
export function isUri(x: Json): boolean {
  return typeof x === 'string' && uriFormat(x);
}

/** ajv-formats' `date` or `date-time` (the latter needs an offset, as RFC 3339). */
export function isDate(x: Json): boolean {
  return typeof x === 'string' && (dateFormat(x) || dateTimeFormat(x));
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = mathFloor(y / 400);
  const yoe = y - era * 400;
  const doy = mathFloor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + mathFloor(yoe / 4) - mathFloor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * The inverse of daysFromCivil, as one number `year * 10000 + month * 100
 * + day` (a negative year too: month and day are what is left above
 * `year * 10000`). One number instead of a [year, month, day] array: `age`
 * needs no allocation.
 */
function civilFromDays(days: number): number {
  const z = days + 719468;
  const era = mathFloor(z / 146097);
  const doe = z - era * 146097;
  const yoe = mathFloor((doe - mathFloor(doe / 1460) + mathFloor(doe / 36524) - mathFloor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + mathFloor(yoe / 4) - mathFloor(yoe / 100));
  const mp = mathFloor((5 * doy + 2) / 153);
  const day = doy - mathFloor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return (era * 400 + yoe + (month <= 2 ? 1 : 0)) * 10_000 + month * 100 + day;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Epoch milliseconds of an ISO-8601 date (`2024-02-29`) or date-time
 * (`2024-02-29T10:30`, seconds, fraction and offset optional; no offset
 * means UTC), with every field range-checked (`2024-02-30` is undefined).
 * Computed arithmetically: `Date.parse` would read offset-less date-times
 * in the server's local time zone.
 */
export function date(x: Json): number | undefined {
  if (typeof x !== 'string') return undefined;
  // Several rules often read the same date field; a pure function may remember its last answer.
  if (x === lastDateText) return lastDateValue;
  const value = parseDate(x);
  lastDateText = x;
  lastDateValue = value;
  return value;
}

let lastDateText: string | undefined;
let lastDateValue: number | undefined;

/**
 * `date(a)` compared with `date(b)`, as a number whose sign is the order:
 * negative, zero or positive, NaN when either is no date (so `> 0`, `>= 0`
 * and the others are false then, as comparing `undefined` is). Two dates of
 * the plain `YYYY-MM-DD` form that name real days order as their text does
 * (four-digit years, two-digit months and days), so they are compared as
 * strings, without computing their epoch milliseconds; anything else is
 * parsed as `date` parses it.
 */
export function compareDates(a: Json, b: Json): number {
  if (isCalendarDay(a) && isCalendarDay(b)) return a < b ? -1 : a > b ? 1 : 0;
  // Either being no date decides: the other is not parsed then.
  const x = date(a);
  if (x === undefined) return NaN;
  const y = date(b);
  return y === undefined ? NaN : x - y;
}

/**
 * `YYYY-MM-DD` naming a real day: exactly the 10-character texts `parseDate`
 * accepts. It remembers nothing: comparing a text with the last day it
 * accepted cost about as much as checking the text again; and a day up
 * to the 28th exists in every month, without computing the month's length.
 */
function isCalendarDay(x: Json): x is string {
  if (typeof x !== 'string' || x.length !== 10) return false;
  if (x.charCodeAt(4) !== HYPHEN || x.charCodeAt(7) !== HYPHEN) return false;
  const century = twoDigits(x, 0);
  const yearOfCentury = twoDigits(x, 2);
  const month = twoDigits(x, 5);
  const day = twoDigits(x, 8);
  if (century < 0 || yearOfCentury < 0 || month < 1 || month > 12 || day < 1) return false;
  return day <= 28 || day <= daysInMonth(century * 100 + yearOfCentury, month);
}

// Character codes of the date-time syntax.
const ZERO = 48;
const HYPHEN = 45;
const PLUS = 43;
const MINUS = 45;
const PERIOD = 46;
const COLON = 58;
const SPACE = 32;
const UPPER_T = 84;
const LOWER_T = 116;
const UPPER_Z = 90;
const LOWER_Z = 122;

/**
 * Reads the language of the regex
 * `^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$`
 * (ASCII digits only) by hand: a regex match, its substrings and their
 * conversion to numbers cost several times the arithmetic. The test
 * `test/compiler/date-parse.test.ts` holds that regex version and checks
 * that both accept the same texts with the same values.
 */
function parseDate(x: string): number | undefined {
  const end = x.length;
  if (end < 10 || x.charCodeAt(4) !== HYPHEN || x.charCodeAt(7) !== HYPHEN) return undefined;
  const century = twoDigits(x, 0);
  const yearOfCentury = twoDigits(x, 2);
  const month = twoDigits(x, 5);
  const day = twoDigits(x, 8);
  if (century < 0 || yearOfCentury < 0 || month < 0 || day < 0) return undefined;
  const year = century * 100 + yearOfCentury;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  let ms = daysFromCivil(year, month, day) * DAY_MS;
  if (end === 10) return ms;
  // A time: separator, hh:mm, then optional :ss, .fraction and offset.
  const separator = x.charCodeAt(10);
  if (separator !== UPPER_T && separator !== LOWER_T && separator !== SPACE) return undefined;
  if (end < 16 || x.charCodeAt(13) !== COLON) return undefined;
  const hour = twoDigits(x, 11);
  const minute = twoDigits(x, 14);
  if (hour < 0 || minute < 0) return undefined;
  let i = 16;
  let second = 0;
  let fraction = 0;
  if (i < end && x.charCodeAt(i) === COLON) {
    second = twoDigits(x, i + 1);
    if (second < 0) return undefined;
    i += 3;
    if (i < end && x.charCodeAt(i) === PERIOD) {
      const first = ++i;
      while (i < end && isDigit(x.charCodeAt(i))) i++;
      if (i === first) return undefined;
      // Milliseconds are the first three digits, padded with zeros; more digits are truncated, not rounded.
      for (let k = first; k < first + 3; k++) fraction = fraction * 10 + (k < i ? x.charCodeAt(k) - ZERO : 0);
    }
  }
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  ms += ((hour * 60 + minute) * 60 + second) * 1000 + fraction;
  if (i === end) return ms;
  const sign = x.charCodeAt(i);
  if (sign === UPPER_Z || sign === LOWER_Z) return i + 1 === end ? ms : undefined;
  if (sign !== PLUS && sign !== MINUS) return undefined;
  const offsetHours = twoDigits(x, i + 1);
  if (offsetHours < 0) return undefined;
  i += 3;
  let offsetMinutes = 0;
  if (i < end) {
    if (x.charCodeAt(i) === COLON) i++;
    offsetMinutes = twoDigits(x, i);
    if (offsetMinutes < 0 || i + 2 !== end) return undefined;
  }
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
  return ms + (sign === PLUS ? -offset : offset);
}

/** An ASCII digit: what `\d` matches in a regex without the `u` flag, and with it. */
function isDigit(c: number): boolean {
  return c >= ZERO && c <= ZERO + 9;
}

/** The number of the two ASCII digits at `i`, or -1 (also past the end, where charCodeAt is NaN). */
function twoDigits(x: string, i: number): number {
  const tens = x.charCodeAt(i) - ZERO;
  const ones = x.charCodeAt(i + 1) - ZERO;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1;
}

/** The ECMAScript time range; epoch milliseconds beyond it are no instant at all. */
const MAX_EPOCH_MS = 8.64e15;

/** Epoch milliseconds of a date string or of a number of milliseconds in the time range. */
function instant(x: Json): number | undefined {
  if (typeof x === 'number') return isFiniteNumber(x) && mathAbs(x) <= MAX_EPOCH_MS ? x : undefined;
  return date(x);
}

/** Whole UTC calendar days from `a` to `b`, signed; dates as ISO strings or epoch ms. */
export function daysBetween(a: Json, b: Json): number | undefined {
  const from = instant(a);
  const to = instant(b);
  if (from === undefined || to === undefined) return undefined;
  return mathFloor(to / DAY_MS) - mathFloor(from / DAY_MS);
}

/**
 * Whole years from `dob` to `now`, in UTC. A 29 February birthday is
 * reached on 1 March in common years.
 */
export function age(dob: Json, now: Json): number | undefined {
  const born = instant(dob);
  const at = instant(now);
  if (born === undefined || at === undefined) return undefined;
  const birthday = civilFromDays(mathFloor(born / DAY_MS));
  const today = civilFromDays(mathFloor(at / DAY_MS));
  const birthYear = mathFloor(birthday / 10_000);
  const year = mathFloor(today / 10_000);
  // Month and day as one number, month * 100 + day: a year not yet completed if today's is below the birthday's.
  return year - birthYear - (today - year * 10_000 < birthday - birthYear * 10_000 ? 1 : 0);
}

/** Up to this many primitives, `distinct` compares every pair instead of filling a Set. */
const SMALL_DISTINCT = 16;

/**
 * True when no two elements are deeply equal (`eq`); undefined for a
 * non-array. Structured elements are bucketed by a structural hash that
 * `eq`-equal values always share, and only elements in one bucket are
 * compared with `eq`: linear in the payload instead of pairwise, with
 * exactly `eq`'s answer (a hash collision costs a comparison, never a
 * wrong result), and no memory beyond one number per element.
 */
export function distinct(x: Json): boolean | undefined {
  if (!isArrayFn(x)) return undefined;
  let primitive = true;
  for (let i = 0; i < x.length; i++) {
    const v: unknown = x[i];
    if ((v !== null && typeof v === 'object') || v !== v) {
      primitive = false;
      break;
    }
  }
  if (primitive) {
    // Without NaN, SameValueZero (the Set's equality) is ===; a short list needs no Set.
    if (x.length > SMALL_DISTINCT) return new Set(x).size === x.length;
    for (let i = 1; i < x.length; i++) {
      const v: unknown = x[i];
      for (let j = 0; j < i; j++) if (x[j] === v) return false;
    }
    return true;
  }
  const buckets = new Map<number, Json[]>();
  for (let i = 0; i < x.length; i++) {
    const v: unknown = x[i];
    const hash = structuralHash(v);
    const bucket = buckets.get(hash);
    if (bucket === undefined) {
      buckets.set(hash, [v]);
      continue;
    }
    for (let j = 0; j < bucket.length; j++) if (eq(bucket[j], v)) return false;
    bucket.push(v);
  }
  return true;
}

/**
 * A 52-bit hash of a value's structure, walked with an explicit stack.
 * Consistent with `eq`: arrays in order, objects by sorted keys, numbers by
 * value (-0 hashes as 0), and NaN as one constant (eq never equates NaN,
 * except through a shared reference, which the hash must then match).
 */
function structuralHash(root: Json): number {
  hashA = 0x811c9dc5;
  hashB = 0x9747b28c;
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case 'number':
        if (v !== v) mix(0x4e614e);
        else if ((v | 0) === v) {
          mix(0x6e);
          mix(v | 0);
        } else {
          mix(0x66);
          mixString(toString(v));
        }
        break;
      case 'string':
        mix(0x73);
        mixString(v);
        break;
      case 'boolean':
        mix(v ? 0x74 : 0x62);
        break;
      case 'object':
        if (v === null) {
          mix(0x7a);
        } else if (isArrayFn(v)) {
          mix(0x5b);
          mix(v.length);
          for (let i = 0; i < v.length; i++) stack.push(v[i]);
        } else {
          const o = v as Record<string, Json>;
          const keys = objectKeys(o).sort();
          mix(0x7b);
          mix(keys.length);
          for (const key of keys) {
            mixString(key);
            stack.push(o[key]);
          }
        }
        break;
      default:
        // undefined (produced by the language), or a type eq compares by identity only.
        mix(0x75);
    }
  }
  return (hashA >>> 0) * 0x100000 + (hashB >>> 12);
}

// The running state of structuralHash, reset by every call (no closures per element).
let hashA = 0;
let hashB = 0;

function mix(c: number): void {
  hashA = mathImul(hashA ^ c, 0x01000193);
  hashB = mathImul(hashB ^ c, 0x5bd1e995);
  hashB ^= hashB >>> 13;
}

function mixString(s: string): void {
  mix(s.length);
  for (let i = 0; i < s.length; i++) mix(s.charCodeAt(i));
}

// ---- methods of 3.3 --------------------------------------------------------

/** `.startsWith(s)` of a string; wrong types give undefined. */
export function startsWith(x: Json, s: Json): boolean | undefined {
  return typeof x === 'string' && typeof s === 'string' ? x.startsWith(s) : undefined;
}

/** `.endsWith(s)` of a string. */
export function endsWith(x: Json, s: Json): boolean | undefined {
  return typeof x === 'string' && typeof s === 'string' ? x.endsWith(s) : undefined;
}

/** `.includes(v)`: substring of a string, or a deeply equal element of an array. */
export function includes(x: Json, v: Json): boolean | undefined {
  if (typeof x === 'string') return typeof v === 'string' ? x.includes(v) : undefined;
  if (!isArrayFn(x)) return undefined;
  if (v === null || typeof v !== 'object') {
    for (let i = 0; i < x.length; i++) if (x[i] === v) return true;
    return false;
  }
  for (let i = 0; i < x.length; i++) if (eq(x[i], v)) return true;
  return false;
}

// ---- results ---------------------------------------------------------------

/** The parts of a failure record that a rule fixes at compile time. */
export interface RuleMeta {
  readonly ruleCode: string;
  readonly ruleName: string;
  readonly severity: Severity;
  readonly errorCode: string;
}

/** The frozen per-rule part of its failure records, declared once per validator. */
export function meta(ruleCode: string, ruleName: string, severity: Severity, errorCode: string): RuleMeta {
  return freeze({ ruleCode, ruleName, severity, errorCode });
}

/** A compiled JSON Schema: a predicate that leaves its errors on itself (ajv's shape). */
export interface SchemaCheck {
  (value: unknown): boolean;
  errors?: unknown[] | null;
}

const UNCHECKABLE = freeze([
  freeze({ instancePath: '', schemaPath: '#', keyword: 'nesting', params: freeze({}), message: 'is nested too deeply to be validated' }),
]);

/**
 * Runs a schema validator: null when the value passes, else ajv's errors.
 * A validator that throws (only data nested deeper than the call stack can
 * make it) yields one error instead of breaking the whole validation.
 */
export function check(validator: SchemaCheck, value: Json): readonly unknown[] | null {
  try {
    if (validator(value)) return null;
    const errors = validator.errors;
    return isArrayFn(errors) ? errors : [];
  } catch {
    return UNCHECKABLE;
  }
}

/**
 * The longest message a failure record carries, and the longest rendering
 * of one placeholder: a template that repeats `{{ $ }}` hundreds of times
 * copies the whole payload into the message as often (a 500 once V8's
 * string limit is passed), stalling every tenant while it is built.
 * Longer text is cut and ends with an ellipsis.
 */
export const MAX_MESSAGE_LENGTH = 2000;

/** `s`, or its first MAX_MESSAGE_LENGTH - 1 characters and an ellipsis. */
function clip(s: string): string {
  return s.length <= MAX_MESSAGE_LENGTH ? s : `${s.slice(0, MAX_MESSAGE_LENGTH - 1)}\u2026`;
}

/** Builds a failure record with the keys in the interface's order (2.1), its message cut at MAX_MESSAGE_LENGTH. */
export function failure(
  meta: RuleMeta,
  message: string,
  fieldPath: string,
  actualValue: Json,
  expectedValue: Json,
): FailureRecord {
  return {
    ruleCode: meta.ruleCode,
    ruleName: meta.ruleName,
    severity: meta.severity,
    message: clip(message),
    errorCode: meta.errorCode,
    fieldPath,
    actualValue: actualValue === undefined || actualValue !== actualValue ? null : actualValue,
    expectedValue: expectedValue === undefined ? null : expectedValue,
  };
}

/**
 * The most failures one validation may report. One payload can fail a rule
 * once per array element (forEach), so a small payload against a few dozen
 * rules can make hundreds of thousands of failure records and an answer of
 * hundreds of megabytes, with far more resident while it is built.
 * Generated code stops the validation once this is
 * passed (`tooManyFailures`): 100,000 records are tens of megabytes. The
 * service refuses the request (400), naming the bound.
 */
export const MAX_FAILURES_PER_VALIDATION = 100_000;

/** Thrown by a validation that reported more than MAX_FAILURES_PER_VALIDATION failures. */
export class TooManyFailuresError extends RangeError {
  readonly code = 'TOO_MANY_FAILURES';

  constructor() {
    super(`the payload fails rules more than ${MAX_FAILURES_PER_VALIDATION} times`);
  }
}

/** Ends a validation whose failures passed MAX_FAILURES_PER_VALIDATION (generated code calls it). */
export function tooManyFailures(): never {
  throw new TooManyFailuresError();
}

/** Renders a template placeholder (3.6): strings verbatim, containers as JSON, nothing as "", cut at MAX_MESSAGE_LENGTH. */
export function text(x: Json): string {
  switch (typeof x) {
    case 'string':
      return clip(x);
    case 'number':
      return isFiniteNumber(x) ? String(x) : '';
    case 'boolean':
      return x ? 'true' : 'false';
    case 'object':
      return x === null ? '' : clip(jsonPrefix(x, MAX_MESSAGE_LENGTH));
    default:
      return '';
  }
}

/** A container being written by jsonPrefix, and how far. */
type JsonFrame =
  | { array: readonly Json[]; next: number }
  | { array: undefined; object: Readonly<Record<string, Json>>; keys: string[]; next: number; written: boolean };

/**
 * `JSON.stringify(x)` of a JSON value or a value the language built
 * (undefined and the invalid number write as JSON.stringify writes them),
 * but only until it is longer than `limit` characters: the same text when
 * it is not, and a prefix longer than `limit` when it is. A placeholder is
 * cut at MAX_MESSAGE_LENGTH characters, and serializing all of
 * `{{ l.map(x => $) }}` first (the payload once per element of `l`) took
 * seconds for a small payload. Iterative, so depth cannot overflow the
 * call stack.
 *
 * @example
 * jsonPrefix({ a: [1, 'x'] }, 100); // '{"a":[1,"x"]}'
 */
export function jsonPrefix(x: Json, limit: number): string {
  let out = '';
  const stack: JsonFrame[] = [];
  let value: Json = x;
  let pending = true;
  while (out.length <= limit) {
    if (pending) {
      pending = false;
      if (typeof value === 'string') out += quotedPrefix(value, limit - out.length);
      else if (typeof value === 'number') out += isFiniteNumber(value) ? toString(value) : 'null';
      else if (typeof value === 'boolean') out += value ? 'true' : 'false';
      else if (typeof value !== 'object' || value === null) out += 'null';
      else if (isArrayFn(value)) {
        out += '[';
        stack.push({ array: value, next: 0 });
      } else {
        out += '{';
        stack.push({ array: undefined, object: value as Record<string, Json>, keys: objectKeys(value), next: 0, written: false });
      }
      continue;
    }
    const frame = stack[stack.length - 1];
    if (frame === undefined) break;
    if (frame.array !== undefined) {
      if (frame.next >= frame.array.length) {
        out += ']';
        stack.pop();
        continue;
      }
      if (frame.next > 0) out += ',';
      value = frame.array[frame.next++];
      pending = true;
      continue;
    }
    if (frame.next >= frame.keys.length) {
      out += '}';
      stack.pop();
      continue;
    }
    const key = frame.keys[frame.next++];
    value = frame.object[key];
    // Keys whose value is undefined are left out, as JSON.stringify leaves them out.
    if (value === undefined) continue;
    out += `${frame.written ? ',' : ''}${quotedPrefix(key, limit - out.length)}:`;
    frame.written = true;
    pending = true;
  }
  return out;
}

/**
 * JSON.stringify of `s`, or of enough of it to be longer than `room`
 * characters: each character writes at least one, and one more keeps a
 * surrogate pair whole where the cut falls.
 */
function quotedPrefix(s: string, room: number): string {
  return jsonStringify(s.length > room + 1 ? s.slice(0, room + 2) : s);
}

/** Deeply frozen copy of a JSON text; constants are shared by every request. */
export function constant(json: string): Json {
  const value = jsonParse(json) as Json;
  const stack: Json[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v !== null && typeof v === 'object') {
      freeze(v);
      for (const key of objectKeys(v)) stack.push((v as Record<string, Json>)[key]);
    }
  }
  return value;
}

/** The request's clock: the caller's `now`, or the wall clock when none is given. */
export function clock(now: Json): number {
  return typeof now === 'number' && isFiniteNumber(now) ? now : dateNow();
}

/**
 * An object or array whose prototype is Object.prototype or
 * Array.prototype, as every JSON value's is: what generated code checks
 * once per object before reading its fields in place (ruleset-source.ts).
 */
export function plainContainer(x: Json): boolean {
  if (x === null || typeof x !== 'object') return false;
  const proto: unknown = getPrototypeOf(x);
  return proto === objectPrototype || proto === arrayPrototype;
}

/** Everything generated code may use, frozen so that no rule or tenant can swap a helper. */
export const runtime = freeze({
  get, hasOwn, getPrototypeOf, objectPrototype, arrayPrototype, plainContainer, length, eq, ne, lt, le, gt, ge, add, sub, mul, div, mod, pow, neg, pos,
  exists, isEmpty, len, lenAtLeast, lenAtMost, isString, isNumber, isInteger, isBoolean, isArray, isObject,
  sum, avg, min, max, min2, max2, abs, floor, ceil, round, lower, upper, trim,
  matches, isEmail, isUuid, isUri, isDate, date, compareDates, daysBetween, age, distinct, between,
  startsWith, endsWith, includes, meta, check, failure, tooManyFailures, text, constant, clock, table,
});

/** The type of `runtime`; generated code may name only its keys. */
export type Runtime = typeof runtime;
