/**
 * The methods of docs/rule-language.md section 6, one record each. The
 * docs' table is checked against these records (test/docs/rule-language.test.ts).
 */
import { ARRAY, BOOLEAN, FIELD_VALUE, INVALID, STRING, UNDEFINED, type TypeSet } from '../analysis/value-types.ts';
import type { CallbackMethodRecord, MethodUse, ValueMethodRecord } from './types.ts';

const all = (kinds: TypeSet) => (): TypeSet => kinds;

/** A method of strings with string arguments. */
function onStrings(
  name: string, helper: string, args: number, result: TypeSet, use: Omit<MethodUse, 'on'>, form: string, aliases?: readonly string[],
): ValueMethodRecord {
  return {
    name, minArgs: args, maxArgs: args, accepts: all(STRING), otherwise: 'undefined', result, helper, cost: 'linear',
    form, uses: [{ on: 'string', ...use }], ...(aliases === undefined ? {} : { aliases }),
  };
}

export const VALUE_METHOD_RECORDS: readonly ValueMethodRecord[] = [
  onStrings('startsWith', 'startsWith', 1, BOOLEAN | UNDEFINED,
    { doc: 'whether it starts with the string `s`', example: "iban.startsWith('DE')" }, '.startsWith(s)', ['startswith', 'beginsWith', 'hasPrefix']),
  onStrings('endsWith', 'endsWith', 1, BOOLEAN | UNDEFINED,
    { doc: 'whether it ends with `s`', example: "email.endsWith('.gov')" }, '.endsWith(s)', ['endswith', 'hasSuffix']),
  {
    name: 'includes', minArgs: 1, maxArgs: 1,
    // A string's `.includes` takes a string; an array's takes anything (the walk checks the pair).
    accepts: (index) => (index === 0 ? STRING | ARRAY : undefined),
    otherwise: 'undefined', result: BOOLEAN | UNDEFINED, helper: 'includes', cost: 'linear',
    form: '.includes(v)',
    uses: [
      { on: 'string', doc: 'whether the string `v` occurs in it', example: "note.includes('urgent')" },
      { on: 'array', doc: 'whether an element is deeply equal to `v` (as `==`)', example: "['EUR', 'USD'].includes(currency)" },
    ],
    aliases: ['contains', 'has', 'in', 'indexOf', 'containsKey'],
  },
  onStrings('toLowerCase', 'lower', 0, STRING | UNDEFINED,
    { doc: 'the string in lower case', example: "status.toLowerCase() == 'active'" }, '.toLowerCase()', ['lower', 'toLower', 'lowercase']),
  onStrings('toUpperCase', 'upper', 0, STRING | UNDEFINED,
    { doc: 'the string in upper case', example: "country.toUpperCase() == 'FR'" }, '.toUpperCase()', ['upper', 'toUpper', 'uppercase']),
  onStrings('trim', 'trim', 0, STRING | UNDEFINED,
    { doc: 'the string without leading and trailing white space', example: "name.trim() != ''" }, '.trim()', ['strip']),
];

function callback(name: string, result: TypeSet, doc: string, example: string, aliases: readonly string[]): CallbackMethodRecord {
  return { name, result, cost: 'linear', form: `.${name}(x => ...)`, uses: [{ on: 'array', doc, example }], aliases };
}

export const CALLBACK_METHOD_RECORDS: readonly CallbackMethodRecord[] = [
  callback('every', BOOLEAN | UNDEFINED, 'whether the callback is truthy for every element (`true` for `[]`)', 'items.every(i => i.qty > 0)', ['all', 'allMatch', 'forAll']),
  callback('some', BOOLEAN | UNDEFINED, 'whether it is truthy for at least one', "roles.some(r => r == 'owner')", ['any', 'anyMatch', 'exists']),
  callback('filter', ARRAY | UNDEFINED, 'the elements for which it is truthy', 'items.filter(i => i.gift).length <= 3', ['where', 'select']),
  callback('map', ARRAY | UNDEFINED, "the callback's value for each element", 'sum(items.map(i => i.price * i.qty)) <= budget', ['collect', 'transform']),
  callback('find', FIELD_VALUE | INVALID, 'the first element for which it is truthy, else `undefined`', "accounts.find(a => a.primary).currency == 'EUR'", ['first', 'findFirst', 'detect']),
];
