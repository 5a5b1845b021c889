/**
 * The functions of docs/rule-language.md section 7, one record each. The
 * docs' table is checked against these records (test/docs/rule-language.test.ts).
 */
import {
  ARRAY, BOOLEAN, INVALID, NUMBER, OBJECT, STRING, UNDEFINED, type TypeSet,
} from '../analysis/value-types.ts';
import type { Accepts, FunctionRecord, Otherwise } from './types.ts';

const NUMERIC = NUMBER | INVALID;
const anything: Accepts = () => undefined;
const all = (kinds: TypeSet): Accepts => () => kinds;

type Described = Pick<FunctionRecord, 'forms' | 'doc' | 'examples' | 'aliases'>;

/** A one-argument function that works on `kinds` and is folded by its helper. */
function unary(
  name: string, kinds: TypeSet, otherwise: Otherwise, result: TypeSet, cost: FunctionRecord['cost'], described: Described,
): FunctionRecord {
  return { name, minArgs: 1, maxArgs: 1, accepts: all(kinds), otherwise, result, helper: name, fold: 'call', cost, ...described };
}

/** A type test: any argument, a boolean, false for the other kinds. */
function typeTest(name: string, described: Described): FunctionRecord {
  return {
    name, minArgs: 1, maxArgs: 1, accepts: anything, otherwise: 'false', result: BOOLEAN, helper: name, fold: 'call', typeTest: true,
    cost: 'constant', ...described,
  };
}

/** `min(list)` or `min(a, b, ...)`: one array, or several numbers folded pairwise as generated code does. */
function extreme(name: 'min' | 'max', described: Described): FunctionRecord {
  return {
    name, minArgs: 1, maxArgs: Infinity, accepts: (_index, count) => (count === 1 ? NUMBER | ARRAY : NUMBER),
    otherwise: 'the invalid number', result: NUMERIC, helper: name, pairHelper: `${name}2`, fold: 'call', cost: 'linear', ...described,
  };
}

export const FUNCTION_RECORDS: readonly FunctionRecord[] = [
  {
    name: 'exists', minArgs: 1, maxArgs: 1, accepts: anything, otherwise: 'false', result: BOOLEAN, helper: 'exists', fold: 'call', cost: 'constant',
    forms: ['exists(x)'], doc: '`true` unless `x` is `undefined` or `null`', examples: ['exists(coApplicant)'], aliases: ['isDefined', 'defined', 'isset', 'has'],
  },
  {
    name: 'isEmpty', minArgs: 1, maxArgs: 1, accepts: anything, otherwise: 'false', result: BOOLEAN, helper: 'isEmpty', fold: 'call', cost: 'linear',
    forms: ['isEmpty(x)'], doc: '`true` for `undefined`, `null`, `""`, `[]` and `{}` (`" "`, `0` and `false` are not empty)', examples: ['!isEmpty(name)'],
    aliases: ['empty', 'isBlank', 'blank'],
  },
  unary('len', STRING | ARRAY | OBJECT, 'undefined', NUMBER | UNDEFINED, 'linear', {
    forms: ['len(x)'],
    doc: "characters (code points) of a string, as JSON Schema's `minLength` counts them; elements of an array; keys of an object; `undefined` otherwise",
    examples: ['len(name) <= 40'], aliases: ['length', 'size', 'count', 'strlen'],
  }),
  typeTest('isString', { forms: ['isString(x)'], doc: 'whether `x` is a string', examples: ['isString(iban)'] }),
  typeTest('isNumber', { forms: ['isNumber(x)'], doc: 'whether `x` is a finite number (the invalid number is not)', examples: ['isNumber(amount)'], aliases: ['isNumeric'] }),
  typeTest('isInteger', { forms: ['isInteger(x)'], doc: 'whether `x` is a whole number (`5.0` is)', examples: ['isInteger(termMonths)'], aliases: ['isInt'] }),
  typeTest('isBoolean', { forms: ['isBoolean(x)'], doc: 'whether `x` is `true` or `false`', examples: ['isBoolean(consent)'], aliases: ['isBool'] }),
  typeTest('isArray', { forms: ['isArray(x)'], doc: 'whether `x` is an array', examples: ['isArray(items)'], aliases: ['isList'] }),
  typeTest('isObject', { forms: ['isObject(x)'], doc: 'whether `x` is an object (not `null`, not an array)', examples: ['isObject(address)'] }),
  unary('sum', ARRAY, 'undefined', NUMERIC | UNDEFINED, 'linear', {
    forms: ['sum(list)'],
    doc: 'the sum of an array of numbers; `0` for `[]`; invalid when an element is not a number; `undefined` when `list` is not an array',
    examples: ['sum(items.map(i => i.price)) <= 5000'], aliases: ['total'],
  }),
  unary('avg', ARRAY, 'undefined', NUMERIC | UNDEFINED, 'linear', {
    forms: ['avg(list)'], doc: 'the mean of an array of numbers; `undefined` for `[]` and for a non-array; invalid like `sum`',
    examples: ['avg(scores) >= 3.5'], aliases: ['average', 'mean'],
  }),
  extreme('min', {
    forms: ['min(list)', 'min(a, b, ...)'],
    doc: 'the smallest of one array of numbers, or of several numbers (one number gives itself); invalid for `[]` and when a value is not a number',
    examples: ['min(rates) > 0', 'min(a, b) >= 10'], aliases: ['minimum'],
  }),
  extreme('max', { forms: ['max(list)', 'max(a, b, ...)'], doc: 'the largest, like `min`', examples: ['max(items.map(i => i.qty)) <= 100'], aliases: ['maximum'] }),
  unary('abs', NUMBER, 'the invalid number', NUMERIC, 'constant', {
    forms: ['abs(x)'], doc: 'the absolute value of a number; invalid otherwise', examples: ['abs(balance) < 0.01'],
  }),
  {
    name: 'round', minArgs: 1, maxArgs: 2, accepts: all(NUMBER), otherwise: 'the invalid number', result: NUMERIC, helper: 'round', fold: 'call', cost: 'constant',
    forms: ['round(x)', 'round(x, digits)'],
    doc: '`x` rounded half away from zero to `digits` decimals (0 to 15, default 0), on the number as written: `round(1.005, 2)` is `1.01`, `round(-2.5)` is `-3`; invalid for a non-number or a bad `digits`',
    examples: ['round(total, 2) == round(sum(items.map(i => i.price)), 2)'], aliases: ['toFixed'],
  },
  unary('floor', NUMBER, 'the invalid number', NUMERIC, 'constant', {
    forms: ['floor(x)'], doc: 'the largest whole number not above `x`; invalid for a non-number', examples: ['floor(tenureYears) >= 2'], aliases: ['trunc'],
  }),
  unary('ceil', NUMBER, 'the invalid number', NUMERIC, 'constant', {
    forms: ['ceil(x)'], doc: 'the smallest whole number not below `x`; invalid for a non-number', examples: ['ceil(weightKg) <= 30'], aliases: ['ceiling'],
  }),
  unary('lower', STRING, 'undefined', STRING | UNDEFINED, 'linear', {
    forms: ['lower(s)'], doc: 'the string in lower case; `undefined` for a non-string', examples: ["lower(status) == 'active'"],
    aliases: ['lowercase', 'toLower', 'toLowerCase'],
  }),
  unary('upper', STRING, 'undefined', STRING | UNDEFINED, 'linear', {
    forms: ['upper(s)'], doc: 'the string in upper case; `undefined` for a non-string', examples: ["upper(country) == 'FR'"],
    aliases: ['uppercase', 'toUpper', 'toUpperCase'],
  }),
  unary('trim', STRING, 'undefined', STRING | UNDEFINED, 'linear', {
    forms: ['trim(s)'], doc: 'the string without leading and trailing white space; `undefined` for a non-string', examples: ["trim(name) != ''"],
    aliases: ['strip'],
  }),
  {
    // The pattern is a literal compiled at save time; the walk checks and folds it (lower.ts, expression-analysis.ts).
    name: 'matches', minArgs: 2, maxArgs: 2, accepts: (index) => (index === 0 ? STRING : undefined), otherwise: 'false', result: BOOLEAN,
    helper: 'matches', fold: 'never', cost: 'linear',
    forms: ['matches(s, "pattern")'],
    doc: 'whether the regular expression finds a match anywhere in the string `s`; `false` when `s` is not a string ([section 8](#8-regular-expressions))',
    examples: ["matches(zip, '^[0-9]{5}$')"], aliases: ['match', 'test', 'regex', 'like'],
  },
  unary('isEmail', STRING, 'false', BOOLEAN, 'linear', {
    forms: ['isEmail(s)'], doc: 'whether `s` is an e-mail address, as JSON Schema\'s `"format": "email"`', examples: ['isEmail(contact.email)'],
    aliases: ['email', 'isEmailAddress'],
  }),
  unary('isUuid', STRING, 'false', BOOLEAN, 'linear', {
    forms: ['isUuid(s)'], doc: 'whether `s` is a UUID, as `"format": "uuid"`', examples: ['isUuid(customerId)'], aliases: ['isGuid', 'uuid'],
  }),
  unary('isUri', STRING, 'false', BOOLEAN, 'linear', {
    forms: ['isUri(s)'], doc: 'whether `s` is an absolute URI, as `"format": "uri"`', examples: ['isUri(callbackUrl)'], aliases: ['isUrl', 'url', 'uri'],
  }),
  unary('isDate', STRING, 'false', BOOLEAN, 'linear', {
    forms: ['isDate(s)'],
    doc: 'whether `s` is an ISO-8601 date (`2024-02-29`) or a date-time with an offset (`2024-02-29T10:30:00Z`), as `"format": "date"` or `"date-time"`',
    examples: ['isDate(startDate)'], aliases: ['isDateTime', 'isValidDate'],
  }),
  unary('date', STRING, 'undefined', NUMBER | UNDEFINED, 'linear', {
    forms: ['date(s)'],
    doc: 'the epoch milliseconds of an ISO-8601 date or date-time (without an offset it is UTC); `undefined` for anything else',
    examples: ['date(endDate) > date(startDate)'], aliases: ['parseDate', 'toDate', 'datetime', 'timestamp'],
  }),
  {
    name: 'now', minArgs: 0, maxArgs: 0, accepts: anything, otherwise: 'undefined', result: NUMBER, helper: 'clock', fold: 'never', clock: true,
    cost: 'constant',
    forms: ['now()'], doc: 'the current time in epoch milliseconds: one value for the whole request (a batch shares it)',
    examples: ['date(expiry) > now()'], aliases: ['today', 'currentDate', 'currentTime', 'getdate', 'sysdate'],
  },
  {
    name: 'daysBetween', minArgs: 2, maxArgs: 2, accepts: all(STRING | NUMBER), otherwise: 'undefined', result: NUMBER | UNDEFINED,
    helper: 'daysBetween', fold: 'call', cost: 'linear',
    forms: ['daysBetween(a, b)'],
    doc: 'whole calendar days from `a` to `b` in UTC, negative when `b` is earlier; `a` and `b` are date strings (as `date()` reads them) or epoch milliseconds; `undefined` when either is neither',
    examples: ['daysBetween(checkIn, checkOut) <= 30'], aliases: ['datediff', 'dateDiff', 'days'],
  },
  {
    name: 'age', minArgs: 1, maxArgs: 1, accepts: all(STRING | NUMBER), otherwise: 'undefined', result: NUMBER | UNDEFINED, helper: 'age',
    fold: 'never', clock: true, cost: 'linear',
    forms: ['age(dob)'],
    doc: 'whole years from `dob` (a date string or epoch milliseconds) to `now()`, in UTC; someone born on 29 February turns a year older on 1 March in common years; `undefined` for anything else',
    examples: ['age(applicant.birthDate) >= 18'], aliases: ['years', 'yearsSince'],
  },
  unary('distinct', ARRAY, 'undefined', BOOLEAN | UNDEFINED, 'quadratic', {
    forms: ['distinct(list)'], doc: 'whether no two elements of the array are deeply equal (as `==`); `undefined` for a non-array',
    examples: ['distinct(items.map(i => i.sku))'], aliases: ['unique', 'isUnique', 'uniq', 'allDifferent'],
  }),
  {
    name: 'between', minArgs: 3, maxArgs: 3, accepts: all(NUMBER | STRING), otherwise: 'false', result: BOOLEAN, helper: 'between', fold: 'call',
    cost: 'constant',
    forms: ['between(x, low, high)'],
    doc: 'whether `low <= x` and `x <= high`, compared as `<=` compares (three numbers, or three strings such as ISO dates of one form); `false` otherwise',
    examples: ['between(termMonths, 6, 360)', "between(startDate, '2024-01-01', '2024-12-31')"], aliases: ['inRange', 'range', 'within'],
  },
];
