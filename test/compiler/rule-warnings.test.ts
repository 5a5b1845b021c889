/**
 * Save-time warnings (compiler/analysis): each row is a rule, with or
 * without a payload schema, and the exact warnings an author would read.
 * Ordinary good rules (the demo and the loan benchmark) give none; constant
 * folding agrees with what a compiled expression computes; analysis of
 * expressions at the compile limits is bounded.
 */
import { describe, expect, it } from 'vitest';
import {
  analyzeRule, checkRule, compileExpressionFunction, DEFAULT_LIMITS,
  type RuleDefinition, type RuleWarning,
} from '../../compiler/index.ts';
import { CALLBACK_METHODS, FUNCTIONS, VALUE_METHODS } from '../../compiler/expression/catalog.ts';
import { CALLBACK_RESULTS, FUNCTION_SIGNATURES, METHOD_SIGNATURES } from '../../compiler/analysis/function-types.ts';
import { closestKey, editDistance } from '../../compiler/analysis/closest-path.ts';
import { DEMO_RULES } from '../../src/startup/demo-seed.ts';
import { loanApplicationSuite } from '../../bench/suites/loan-application.ts';

/** A shop order's payload schema: every way of declaring a path the analysis reads. */
const ORDER_SCHEMA = {
  type: 'object',
  $defs: {
    money: { type: 'object', properties: { amount: { type: 'number' }, currency: { type: 'string' } } },
    node: {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
    },
    loop: { $ref: '#/$defs/loop' },
  },
  properties: {
    status: { type: 'string' },
    total: { type: 'number' },
    flag: { type: 'boolean' },
    'first-name': { type: 'string' },
    customer: { type: 'object', properties: { type: { enum: ['person', 'business'] }, email: { type: 'string' } } },
    applicant: { type: 'object', properties: { income: { type: 'number' }, name: { type: 'string' } } },
    items: {
      type: 'array',
      items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } } },
    },
    tags: { type: 'array', items: { type: 'string' } },
    price: { $ref: '#/$defs/money' },
    tree: { $ref: '#/$defs/node' },
    cyclic: { $ref: '#/$defs/loop' },
    scores: { type: 'object', additionalProperties: { type: 'number' } },
    labels: { type: 'object', patternProperties: { '^x-': { type: 'string' } } },
    pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
    either: {
      anyOf: [
        { type: 'object', properties: { a: { type: 'string' } } },
        { type: 'object', properties: { b: { type: 'number' } } },
      ],
    },
    meta: {},
    company: {
      type: 'object',
      properties: { kind: { enum: ['sole', 'limited'] } },
      if: { properties: { kind: { const: 'limited' } } },
      then: { properties: { registration: { type: 'string' } } },
      dependentSchemas: { vat: { properties: { vat: { type: 'string' }, vatCountry: { type: 'string' } } } },
    },
  },
} as const;

type Row = [title: string, rule: Partial<RuleDefinition>, schema: object | undefined, warnings: RuleWarning[]];

function warn(
  code: RuleWarning['code'],
  path: RuleWarning['path'],
  message: string,
  at?: [line: number, column: number],
  suggestion?: string,
): RuleWarning {
  const w: RuleWarning = { code, path, message };
  if (at !== undefined) [w.line, w.column] = at;
  if (suggestion !== undefined) w.suggestion = suggestion;
  return w;
}

function analyze(rule: Partial<RuleDefinition>, schema?: object): RuleWarning[] {
  const full = { code: 'R-1', name: 'Rule', ...rule } as RuleDefinition;
  return analyzeRule(full, schema === undefined ? undefined : { payloadSchema: schema });
}

function table(rows: Row[]): void {
  it.each(rows)('%s', (_title, rule, schema, warnings) => {
    // Warnings are about rules that save: every row compiles.
    expect(checkRule({ code: 'R-1', name: 'Rule', ...rule })).toEqual([]);
    expect(analyze(rule, schema)).toEqual(warnings);
  });
}

describe('CONSTANT and NEVER_EVALUATED: values that do not depend on the payload', () => {
  table([
    ['a comparison of literals', { expression: '1 > 0' }, undefined, [
      warn('CONSTANT', 'expression', '`1 > 0` is always true: the expression does not depend on the payload, so the rule never fails', [1, 1]),
    ]],
    ['the constant false', { expression: 'false' }, undefined, [
      warn('CONSTANT', 'expression', '`false` is always false: the expression does not depend on the payload, so the rule always fails', [1, 1]),
    ]],
    ['two different strings', { expression: '"a" == "b"' }, undefined, [
      warn('CONSTANT', 'expression', '`"a" == "b"` is always false: the expression does not depend on the payload, so the rule always fails', [1, 1]),
    ]],
    ['a function of a literal', { expression: 'len("abc") > 2' }, undefined, [
      warn('CONSTANT', 'expression', '`len("abc") > 2` is always true: the expression does not depend on the payload, so the rule never fails', [1, 1]),
    ]],
    ['a value that is not a boolean', { expression: '"yes"' }, undefined, [
      warn('CONSTANT', 'expression', '`"yes"` is always "yes": the expression does not depend on the payload, so the rule always fails', [1, 1]),
    ]],
    ['a boolean or true', { expression: 'total > 0 || true' }, undefined, [
      warn('CONSTANT', 'expression', '`total > 0 || true` is always true: the expression does not depend on the payload, so the rule never fails', [1, 1]),
    ]],
    ['a callback over a literal list', { expression: '[1, 2, 3].every(x => x > 0)' }, undefined, [
      warn('CONSTANT', 'expression', '`[1, 2, 3].every(x => x > 0)` does not depend on the payload: the rule passes for every payload or fails for every one', [1, 1]),
    ]],
    ['a constant condition inside', { expression: 'total > 0 && 1 > 0' }, undefined, [
      warn('CONSTANT', 'expression', '`1 > 0` is always true: it does not depend on the payload', [1, 14]),
    ]],
    ['only the outermost constant condition', { expression: '!(1 > 0) || total > 0' }, undefined, [
      warn('CONSTANT', 'expression', '`!(1 > 0)` is always false: it does not depend on the payload', [1, 1]),
    ]],
    ['a constant test on a later line', { expression: 'total > 0\n  && (isString("a") ? total < 10 : true)' }, undefined, [
      warn('CONSTANT', 'expression', '`isString("a")` is always true: it does not depend on the payload', [2, 7]),
    ]],
    ['a when that is always true', { when: '1 > 0', expression: 'total > 0' }, undefined, [
      warn('CONSTANT', 'when', '`1 > 0` is always true: the condition does not depend on the payload, so it never skips the rule', [1, 1]),
    ]],
    ['a when that is always false', { when: 'false', expression: 'total > 0' }, undefined, [
      warn('NEVER_EVALUATED', 'when', '`false` is always false: the condition does not depend on the payload, so the rule never runs', [1, 1]),
    ]],
    ['a when that is never exactly true', { when: '"yes"', expression: 'total > 0' }, undefined, [
      warn('NEVER_EVALUATED', 'when', '`"yes"` is always "yes": the condition does not depend on the payload, so the rule never runs', [1, 1]),
    ]],
    ['a disabled rule', { expression: 'total > 0', enabled: false }, undefined, [
      warn('NEVER_EVALUATED', 'enabled', 'the rule is disabled: it is never evaluated'),
    ]],
    ['forEach over a value declared as a string', { forEach: 'status', expression: '$item == "a"' }, ORDER_SCHEMA, [
      warn('NEVER_EVALUATED', 'forEach', '`status` is declared a string, not an array: the rule never runs', [1, 1]),
    ]],
    ['now() is not constant', { expression: 'now() > 0' }, undefined, []],
    ['age() reads the clock', { expression: 'age("2000-01-01") >= 18' }, undefined, []],
    ['$expected is the same for every payload', { expression: '$expected > 0', expectedValue: 5 }, undefined, [
      warn('CONSTANT', 'expression', '`$expected > 0` is always true: the expression does not depend on the payload, so the rule never fails', [1, 1]),
    ]],
    ['a literal branch of a conditional is fine', { expression: 'exists(total) ? total > 0 : true' }, undefined, []],
    ['constant placeholders in a message are fine', { expression: 'total > 0', message: 'over {{ 60 * 60 }} seconds' }, undefined, []],
  ]);
});

describe('TYPE_MISMATCH: operations that cannot succeed for the kinds involved', () => {
  table([
    ['a declared number ordered against a string', { expression: "total > '5'" }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', "`total > '5'` is always false: `total` is declared a number and `'5'` is a string", [1, 1], 'total > 5'),
    ]],
    ['a declared string compared with a number', { expression: 'status == 5' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`status == 5` is always false: `status` is declared a string and `5` is a number', [1, 1], 'status == "5"'),
    ]],
    ['!= of kinds that never meet', { expression: 'status != 5' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`status != 5` is always true: `status` is declared a string and `5` is a number', [1, 1], 'status != "5"'),
    ]],
    ['an enum compared with another kind', { expression: 'customer.type == 1' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`customer.type == 1` is always false: `customer.type` is declared a string and `1` is a number', [1, 1], 'customer.type == "1"'),
    ]],
    ['ordering a declared boolean', { expression: 'flag > true' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`flag > true` is always false: `flag` is declared a boolean and `true` is a boolean; only two numbers or two strings are ordered', [1, 1]),
    ]],
    ['ordering against a boolean, no schema', { expression: 'flag > true' }, undefined, [
      warn('TYPE_MISMATCH', 'expression', '`flag > true` is always false: `true` is a boolean; only two numbers or two strings are ordered', [1, 1]),
    ]],
    ['a string literal ordered against a number literal', { expression: '"5" > 3' }, undefined, [
      warn('TYPE_MISMATCH', 'expression', '`"5" > 3` is always false: `"5"` is a string and `3` is a number', [1, 1]),
    ]],
    ['arithmetic on a string literal', { expression: 'total * "2" > 10' }, undefined, [
      warn('TYPE_MISMATCH', 'expression', '`total * "2"` is always the invalid number: `"2"` is a string; `*` takes numbers', [1, 1]),
    ]],
    ['+ of a number and a string', { expression: 'total + "x" == "1x"' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`total + "x"` is always the invalid number: `total` is declared a number and `"x"` is a string', [1, 1]),
    ]],
    ['a string function on a number', { expression: 'upper(total) == "X"' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`upper(total)` is always undefined: `total` is declared a number; upper() takes a string', [1, 1]),
    ]],
    ['a string method on a number', { expression: 'total.startsWith("1")' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`total.startsWith("1")` is always undefined: `total` is declared a number; .startsWith() works on a string', [1, 1]),
    ]],
    ['matches() on a number', { expression: 'matches(total, "^1")' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`matches(total, "^1")` is always false: `total` is declared a number; matches() takes a string', [1, 1]),
    ]],
    ['a callback on a string', { expression: 'status.every(c => c == "a")' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`status.every(c => c == "a")` is always undefined: `status` is declared a string; .every() works on an array', [1, 1]),
    ]],
    ['a number looked for in a list of strings', { expression: '["A", "B"].includes(total)' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`["A", "B"].includes(total)` is always false: `total` is declared a number and every element of `["A", "B"]` is a string', [1, 1]),
    ]],
    ['a number looked for in a declared array of strings', { expression: 'tags.includes(5)' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`tags.includes(5)` is always false: `5` is a number and every element of `tags` is a string', [1, 1]),
    ]],
    ['a callback parameter typed by items', { expression: 'tags.some(t => t > 3)' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`t > 3` is always false: `t` is declared a string and `3` is a number', [1, 16]),
    ]],
    ['an operation over two lines is quoted on one', { expression: 'total > 0 &&\n  status ==\n    5' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`status == 5` is always false: `status` is declared a string and `5` is a number', [2, 3], 'status ==\n    "5"'),
    ]],
    ['null where the schema allows none', { expression: 'status != null' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`status != null` is always true: `status` is declared a string and `null` is null', [1, 1]),
    ]],
    ['one mistake, one warning', { expression: 'upper(total) > 5 && total * "2" > 1' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`upper(total)` is always undefined: `total` is declared a number; upper() takes a string', [1, 1]),
      warn('TYPE_MISMATCH', 'expression', '`total * "2"` is always the invalid number: `"2"` is a string; `*` takes numbers', [1, 21]),
    ]],
    ['a field used as a number and ordered against a string', { expression: 'total > 0 && total < "100"' }, undefined, [
      warn('TYPE_MISMATCH', 'expression', '`total < "100"` compares `total` with a string, but `total > 0` uses it as a number: one of them is always false', [1, 14], 'total < 100'),
    ]],
    ['the uses may be in when and expression, through $value', { fieldPath: 'total', when: '$value * 2 > 10', expression: 'total <= "z"' }, undefined, [
      warn('TYPE_MISMATCH', 'expression', '`total <= "z"` compares `total` with a string, but `$value * 2` uses it as a number: one of them is always false', [1, 1]),
    ]],
    ['a type test makes either use legitimate', { expression: 'isNumber(x) ? x > 0 : x > "a"' }, undefined, []],
    ['unknown kinds alone are never a mismatch', { expression: 'a > "5" && b == 5 && c * 2 > 1 && upper(d) == "X"' }, undefined, []],
    ['declared kinds that match', { expression: 'total > 5 && status == "open" && len(tags) > 0 && price.amount >= 1' }, ORDER_SCHEMA, []],
  ]);
});

describe('UNKNOWN_FIELD: paths the payload schema does not declare', () => {
  table([
    ['a misspelled nested field', { expression: 'applicant.incme > 5' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`applicant.incme` is not in the payload schema: did you mean `applicant.income`?', [1, 1], 'applicant.income'),
    ]],
    ['a misspelled fieldPath', { fieldPath: 'custmer.email', required: true }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'fieldPath', '`custmer.email` is not in the payload schema: did you mean `customer.email`?', [1, 1], 'customer.email'),
    ]],
    ['a misspelled forEach', { forEach: 'itmes', expression: '$item.qty > 0' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'forEach', '`itmes` is not in the payload schema: did you mean `items`?', [1, 1], 'items'),
    ]],
    ['$item paths and [] paths are read through items', {
      forEach: 'items', fieldPath: 'items[].qtty', expression: '$item.qtty > 0 && $item.sku != ""',
    }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`$item.qtty` is not in the payload schema: did you mean `$item.qty`?', [1, 1], '$item.qty'),
      warn('UNKNOWN_FIELD', 'fieldPath', '`items[].qtty` is not in the payload schema: did you mean `items[].qty`?', [1, 1], 'items[].qty'),
    ]],
    ['a callback parameter is an element', { expression: 'items.every(i => i.qtty > 0)' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`i.qtty` is not in the payload schema: did you mean `i.qty`?', [1, 18], 'i.qty'),
    ]],
    ['map and filter keep track of elements', { expression: 'sum(items.filter(i => i.qty > 1).map(j => j.prise)) > 0' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`j.prise` is not in the payload schema', [1, 43]),
    ]],
    ['message placeholders, positioned in the template', { expression: 'total > 0', message: 'Applicant\n {{ applicant.nme }} failed' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'message', '`applicant.nme` is not in the payload schema: did you mean `applicant.name`?', [2, 5], 'applicant.name'),
    ]],
    ['a bracketed key', { expression: '$["first-nam"] == "Ann"' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`$["first-nam"]` is not in the payload schema: did you mean `$["first-name"]`?', [1, 1], '$["first-name"]'),
    ]],
    ['a bracketed fieldPath', { fieldPath: '$["first-nam"]', required: true }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'fieldPath', '`$["first-nam"]` is not in the payload schema: did you mean `$["first-name"]`?', [1, 1], '$["first-name"]'),
    ]],
    ['through $ref to $defs', { expression: 'price.amount > 0 && price.amont > 0' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`price.amont` is not in the payload schema: did you mean `price.amount`?', [1, 21], 'price.amount'),
    ]],
    ['through a recursive $ref', { expression: 'tree.children[0].children[1].name == "x" && tree.children[0].nme == "y"' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`tree.children[0].nme` is not in the payload schema: did you mean `tree.children[0].name`?', [1, 45], 'tree.children[0].name'),
    ]],
    ['$value is the fieldPath', { fieldPath: 'price', expression: '$value.amont > 0' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`$value.amont` is not in the payload schema: did you mean `$value.amount`?', [1, 1], '$value.amount'),
    ]],
    ['an additionalProperties schema declares every key, with its type', { expression: 'scores.math > 5 && scores.art > "5"' }, ORDER_SCHEMA, [
      warn('TYPE_MISMATCH', 'expression', '`scores.art > "5"` is always false: `scores.art` is declared a number and `"5"` is a string', [1, 20], 'scores.art > 5'),
    ]],
    ['if/then and dependentSchemas declare their paths, not their types for certain', {
      expression: 'company.registration == 5 || company.vatCountry != "" || company.regstration != ""',
    }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`company.regstration` is not in the payload schema: did you mean `company.registration`?', [1, 58], 'company.registration'),
    ]],
    ['patternProperties declare matching keys', { expression: 'labels["x-a"] != "" && labels.y != ""' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`labels.y` is not in the payload schema', [1, 24]),
    ]],
    ['prefixItems with items: false', { expression: 'pair[1] > 0 && pair[2] > 0' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`pair[2]` is not in the payload schema', [1, 16]),
    ]],
    ['anyOf declares the union of its branches', { expression: 'either.a == "x" && either.b == 1 && either.c == 1' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`either.c` is not in the payload schema', [1, 37]),
    ]],
    ['a field below a string', { expression: 'status.code == "A"' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`status.code` is not in the payload schema: `status` is declared a string', [1, 1]),
    ]],
    ['.length of a string or an array is not a field', { expression: 'status.length > 2 && tags.length > 1' }, ORDER_SCHEMA, []],
    ['a schema that says nothing leaves paths open', { expression: 'meta.a.b > 0 && cyclic.x > 0' }, ORDER_SCHEMA, []],
    ['no suggestion when nothing is near', { expression: 'zzz > 1' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`zzz` is not in the payload schema', [1, 1]),
    ]],
    ['a path written twice is reported once', { expression: 'applicant.incme > 1 && applicant.incme < 9' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`applicant.incme` is not in the payload schema: did you mean `applicant.income`?', [1, 1], 'applicant.income'),
    ]],
    ['without a payload schema, no path is unknown', { expression: 'applicant.incme > 5', fieldPath: 'custmer.email' }, undefined, []],
    ["a schema rule's message: $value is the refused value", {
      fieldPath: 'status', schema: { type: 'string' }, message: 'bad {{ $value.code }}',
    }, ORDER_SCHEMA, []],
  ]);
});

describe('BARE_NAME: names written where a quoted value was meant', () => {
  table([
    ['an all-caps value', { expression: 'status == ACTIVE' }, ORDER_SCHEMA, [
      warn('BARE_NAME', 'expression', '`ACTIVE` reads a payload field that the payload schema does not declare; to compare with the text, quote it: "ACTIVE"', [1, 11], '"ACTIVE"'),
    ]],
    ['a lower-case value in when', { when: 'customer.type == business', expression: 'total > 0' }, ORDER_SCHEMA, [
      warn('BARE_NAME', 'when', '`business` reads a payload field that the payload schema does not declare; to compare with the text, quote it: "business"', [1, 18], '"business"'),
    ]],
    ['a name in an includes list', { expression: '[ACTIVE, "PENDING"].includes(status)' }, ORDER_SCHEMA, [
      warn('BARE_NAME', 'expression', '`ACTIVE` reads a payload field that the payload schema does not declare; to compare with the text, quote it: "ACTIVE"', [1, 2], '"ACTIVE"'),
    ]],
    ['undefined is a field name in the language', { expression: 'status != undefined' }, ORDER_SCHEMA, [
      warn('BARE_NAME', 'expression', '`undefined` reads a payload field that the payload schema does not declare: the language has no `undefined`; test presence with exists()', [1, 11]),
    ]],
    ['a name near a declared field is a misspelled field', { expression: 'status == stauts' }, ORDER_SCHEMA, [
      warn('UNKNOWN_FIELD', 'expression', '`stauts` is not in the payload schema: did you mean `status`?', [1, 11], 'status'),
    ]],
    ['a declared field compared with another is fine', { expression: 'status == customer.type' }, ORDER_SCHEMA, []],
    ['without a payload schema, a bare name is a field', { expression: 'status == ACTIVE' }, undefined, []],
  ]);
});

describe('NO_FOREACH: $item and $index without forEach', () => {
  table([
    ['$item in the expression', { expression: '$item.qty > 0' }, undefined, [
      warn('NO_FOREACH', 'expression', '`$item` is always undefined: the rule has no forEach', [1, 1]),
    ]],
    ['$index in the message', { expression: 'total > 0', message: 'line {{ $index }}' }, undefined, [
      warn('NO_FOREACH', 'message', '`$index` is always undefined: the rule has no forEach', [1, 9]),
    ]],
    ['with forEach they are fine', { forEach: 'items', expression: '$item.qty > $index', message: 'line {{ $index + 1 }}' }, ORDER_SCHEMA, []],
  ]);
});

/** What the loan and demo payloads look like, declared as a context would. */
const LOAN_SCHEMA = {
  type: 'object',
  $defs: {
    address: {
      type: 'object',
      properties: { line1: { type: 'string' }, city: { type: 'string' }, postcode: { type: 'string' }, country: { enum: ['GB', 'IE', 'FR', 'DE', 'NL'] } },
    },
    item: {
      type: 'object',
      properties: {
        sku: { type: 'string' }, kind: { enum: ['equipment', 'service'] }, description: { type: 'string' },
        qty: { type: 'number' }, unitPrice: { type: 'number' },
      },
    },
  },
  properties: {
    applicationId: { type: 'string' },
    submittedAt: { type: 'string', format: 'date' },
    channel: { type: 'string' },
    applicant: {
      type: 'object',
      properties: {
        firstName: { type: 'string' }, lastName: { type: 'string' }, email: { type: 'string' }, phone: { type: 'string' },
        dob: { type: 'string' }, income: { type: 'number' },
        employment: { type: 'object', properties: { status: { type: 'string' }, employer: { type: 'string' }, years: { type: 'integer' } } },
        address: { $ref: '#/$defs/address' },
      },
    },
    loan: {
      type: 'object',
      properties: {
        amount: { type: 'number' }, currency: { type: 'string' }, termMonths: { type: 'integer' },
        purpose: { type: 'string' }, startDate: { type: 'string' },
      },
    },
    collateral: { type: 'object', properties: { type: { type: 'string' }, value: { type: 'number' } } },
    items: { type: 'array', items: { $ref: '#/$defs/item' } },
    consents: { type: 'object', properties: { creditCheck: { type: 'boolean' }, marketing: { type: 'boolean' } } },
  },
};

const DEMO_SCHEMA = {
  type: 'object',
  properties: {
    amount: { type: 'number' },
    product: { type: 'string', enum: ['auto', 'personal'] },
    applicant: { type: 'object', properties: { name: { type: 'string' }, income: { type: 'number' }, email: { type: 'string' }, country: { type: 'string' } } },
    items: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } } } },
  },
};

/**
 * The loan benchmark's required rules whose messages show `$value`, as the
 * other engines of the benchmark word them: a missing field fails them
 * with an empty value in the message (`born )`), which MISSING_VALUE_MESSAGE
 * says and nothing else should.
 */
const LOAN_RULES_SHOWING_A_MISSING_VALUE = new Set([
  'APPLICATION_ID', 'APPLICANT_AGE', 'EMPLOYMENT_YEARS', 'COLLATERAL_COVERAGE', 'LOAN_AMOUNT_RANGE', 'LOAN_TERM', 'LINE_QTY', 'LINE_SKU',
]);

describe('ordinary good rules have no warnings', () => {
  const demo = DEMO_RULES.map(({ code, content }) => ({ code, ...content }));
  it.each([
    ['the demo rules', demo, DEMO_SCHEMA],
    ['the loan benchmark rules', loanApplicationSuite.rules, LOAN_SCHEMA],
  ] as const)('%s, with and without their payload schema', (_title, rules, schema) => {
    for (const rule of rules) {
      expect(checkRule(rule)).toEqual([]);
      const expected = LOAN_RULES_SHOWING_A_MISSING_VALUE.has(rule.code) ? ['MISSING_VALUE_MESSAGE'] : [];
      const codes = (warnings: RuleWarning[]): string[] => warnings.map((warning) => warning.code);
      expect({ code: rule.code, warnings: codes(analyzeRule(rule)) }).toEqual({ code: rule.code, warnings: expected });
      expect({ code: rule.code, warnings: codes(analyzeRule(rule, { payloadSchema: schema })) }).toEqual({ code: rule.code, warnings: expected });
    }
  });

  it('MISSING_VALUE_MESSAGE: where in the message, and only for an unguarded $value of a required rule', () => {
    const base = { code: 'R', name: 'R', fieldPath: 'amount', required: true, expression: '$value > 0' };
    const text = '`$value` shows as nothing when the field is missing, which is when this required rule fails: say what is missing ' +
      "without it, or say what to show then (`{{ $value ?? 'nothing' }}`)";
    expect(analyzeRule({ ...base, message: 'Amount {{ $value }} is not positive' })).toEqual([warn('MISSING_VALUE_MESSAGE', 'message', text, [1, 11])]);
    expect(analyzeRule({ ...base, message: 'Amount\n{{ 1 + $value }}' })).toEqual([warn('MISSING_VALUE_MESSAGE', 'message', text, [2, 8])]);
    for (const message of ["{{ $value ?? 'none' }}", "{{ $value || 'none' }}", "{{ $value ? $value : 'none' }}", '{{ $path }}', 'no placeholder']) {
      expect(analyzeRule({ ...base, message }), message).toEqual([]);
    }
    expect(analyzeRule({ ...base, required: false, message: '{{ $value }}' })).toEqual([]);
  });

  it('the loan schema does catch a misspelling in a loan rule', () => {
    const rule = { ...loanApplicationSuite.rules.find((r) => r.code === 'LOAN_TO_INCOME')!, expression: 'loan.amount <= applicant.incom * 5' };
    expect(analyzeRule(rule, { payloadSchema: LOAN_SCHEMA })).toEqual([
      warn('UNKNOWN_FIELD', 'expression', '`applicant.incom` is not in the payload schema: did you mean `applicant.income`?', [1, 16], 'applicant.income'),
    ]);
  });
});

describe('constant folding computes what a validator computes', () => {
  const expressions = [
    'len("Zoë😀") == 4', 'round(1.005, 2) == 1.01', '"a" + "b" == "ab"', '[1, [2]] == [1, [2]]', '[1, 2].includes(2)',
    'min(3, 1, 2) == 1', 'max([1, 5, 3]) == 5', 'matches("ab12", "^[0-9]+$")', 'daysBetween("2024-01-01", "2024-03-01") == 60',
    'date("2024-02-30") == null', 'isDate("2024-02-29")', 'distinct([1, 2, 1])', '"Zoë".startsWith("Z")', '"  Ab ".trim().toLowerCase() == "ab"',
    '10 < "9"', '"10" < "9"', '7 % 3 == 1', '2 ** 3 ** 2 == 512', '1 / 0 != 1 / 0', '(0 ?? 5) == 0', '"" || "none"', '[10, 20][1] == 20',
    '"abc".length == 3', 'upper("straße") == "STRASSE"', 'sum([1, 2, 3]) == 6', 'avg([1, 2, 3, 4]) == 2.5', 'isEmail("ann@example")',
  ];
  it.each(expressions)('%s', (expression) => {
    const compiled = compileExpressionFunction(expression);
    if (!compiled.ok) throw new Error(compiled.error.message);
    const value = compiled.evaluate();
    const warnings = analyzeRule({ code: 'R-1', name: 'Rule', expression });
    expect(warnings).toHaveLength(1);
    // Operands of kinds that never meet (`10 < "9"`) are a TYPE_MISMATCH; either way the value is said.
    expect(['CONSTANT', 'TYPE_MISMATCH']).toContain(warnings[0].code);
    const said = `\`${expression}\` is always ${JSON.stringify(value)}: `;
    expect(warnings[0].message.slice(0, said.length)).toBe(said);
  });
});

describe('the analysis knows every function and method of the language', () => {
  it('has a signature for each', () => {
    const functions = Object.keys(FUNCTIONS).filter((name) => name !== 'matches');
    expect(functions.filter((name) => FUNCTION_SIGNATURES[name] === undefined)).toEqual([]);
    expect(Object.keys(VALUE_METHODS).filter((name) => METHOD_SIGNATURES[name] === undefined)).toEqual([]);
    expect(Object.keys(CALLBACK_METHODS).filter((name) => CALLBACK_RESULTS[name] === undefined)).toEqual([]);
  });
});

describe('suggestions are near misses only', () => {
  it.each([
    ['emial', 'email', 1], ['incme', 'income', 1], ['custmer', 'customer', 1], ['abc', 'xyz', 3], ['kitten', 'sitting', 3],
  ] as const)('editDistance(%s, %s) is %i', (a, b, d) => {
    expect(editDistance(a, b, 5)).toBe(d);
  });
  it.each([
    ['incme', ['name', 'income'], 'income'],
    ['Email', ['email', 'emails'], 'email'],
    ['x', ['y', 'z'], undefined],
    ['address', ['amount', 'status'], undefined],
  ] as const)('closestKey(%s)', (key, candidates, expected) => {
    expect(closestKey(key, candidates)).toBe(expected);
  });
});

describe('analysis is bounded by the compile limits', () => {
  it('walks a 200-line expression at the length limit to its last line', () => {
    const lines = Array.from({ length: 199 }, (_, i) => `total > ${i} &&`);
    lines.push('applicant.incme > 0');
    let source = lines.join('\n');
    source += ' '.repeat(DEFAULT_LIMITS.maxExpressionLength - source.length);
    expect(source.length).toBe(DEFAULT_LIMITS.maxExpressionLength);
    const rule = { code: 'R-1', name: 'Rule', expression: source };
    expect(checkRule(rule)).toEqual([]);
    expect(analyzeRule(rule, { payloadSchema: ORDER_SCHEMA })).toEqual([
      warn('UNKNOWN_FIELD', 'expression', '`applicant.incme` is not in the payload schema: did you mean `applicant.income`?', [200, 1], 'applicant.income'),
    ]);
  });

  it('finds a constant at the nesting limit', () => {
    const depth = DEFAULT_LIMITS.maxNestingDepth;
    const expression = `${'('.repeat(depth)}1 > 0${')'.repeat(depth)}`;
    expect(checkRule({ code: 'R-1', name: 'Rule', expression })).toEqual([]);
    expect(analyze({ expression })).toEqual([
      warn('CONSTANT', 'expression', '`1 > 0` is always true: the expression does not depend on the payload, so the rule never fails', [1, depth + 1]),
    ]);
  });

  it('gives no warning, and does not fail, for expressions too deep to compile', () => {
    const chain = `${Array.from({ length: 1000 }, () => 'a').join(' + ')} > 0`;
    const parens = `${'('.repeat(2000)}1${')'.repeat(2000)} > 0`;
    for (const expression of [chain, parens]) {
      expect(checkRule({ code: 'R-1', name: 'Rule', expression }).map((e) => e.code)).toEqual(['TOO_DEEP']);
      expect(analyze({ expression }, ORDER_SCHEMA)).toEqual([]);
    }
  });

  it('gives a field that parses but does not compile its compile error and no warning, and the other fields theirs', () => {
    // `today` is no function of the language and `$cell` belongs to decision tables: both parse as JavaScript.
    for (const expression of ['today() > 0 && applicant.incme > 0', '$cell == 1 && applicant.incme > 0']) {
      const rule = { code: 'R-1', name: 'Rule', expression, message: 'Income {{ applicant.incme }} is too low' };
      expect(checkRule(rule).map((e) => [e.field, e.code])).toEqual([['expression', expression.startsWith('today') ? 'UNKNOWN_FUNCTION' : 'NOT_ALLOWED']]);
      expect(analyzeRule(rule, { payloadSchema: ORDER_SCHEMA })).toEqual([
        warn('UNKNOWN_FIELD', 'message', '`applicant.incme` is not in the payload schema: did you mean `applicant.income`?', [1, 11], 'applicant.income'),
      ]);
    }
  });

  it('analyses a pattern the regex policy refuses without letting the compiler accept it afterwards', () => {
    // Warnings build no regex automaton (lowerForAnalysis); the IR they read must never be the one the compiler reuses.
    const rule = { code: 'R-1', name: 'Rule', expression: 'matches(customer.email, "(unclosed") && applicant.incme > 0' };
    expect(analyzeRule(rule, { payloadSchema: ORDER_SCHEMA }).map((w) => w.code)).toEqual(['UNKNOWN_FIELD']);
    expect(checkRule(rule).map((e) => [e.field, e.code])).toEqual([['expression', 'INVALID_PATTERN']]);
    expect(analyzeRule(rule, { payloadSchema: ORDER_SCHEMA }).map((w) => w.code)).toEqual(['UNKNOWN_FIELD']);
  });

  it('reports every unknown path of a long rule, with suggestions for the first sixteen', () => {
    const properties = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`field${i}`, { type: 'number' }]));
    const expression = Array.from({ length: 20 }, (_, i) => `fieId${i} > 0`).join(' && ');
    const warnings = analyze({ expression }, { type: 'object', properties });
    expect(warnings.map((w) => w.code)).toEqual(Array(20).fill('UNKNOWN_FIELD'));
    expect(warnings.map((w) => w.suggestion)).toEqual(Array.from({ length: 20 }, (_, i) => (i < 16 ? `field${i}` : undefined)));
  });

  it('reads a schema whose references loop or fan out in bounded time', () => {
    const branches = Array.from({ length: 20 }, () => ({ $ref: '#/$defs/wide' }));
    const schema = {
      type: 'object',
      $defs: { wide: { anyOf: branches, properties: { a: { $ref: '#/$defs/wide' } } }, self: { allOf: [{ $ref: '#/$defs/self' }] } },
      properties: { wide: { $ref: '#/$defs/wide' }, self: { $ref: '#/$defs/self' } },
    };
    const expression = `wide${'.a'.repeat(30)}.b > 0 && self.x > 0`;
    expect(checkRule({ code: 'R-1', name: 'Rule', expression })).toEqual([]);
    // Each node is read once per segment: `b` is found undeclared however many references lead to `wide`.
    expect(analyze({ expression }, schema)).toEqual([
      warn('UNKNOWN_FIELD', 'expression', `\`wide${'.a'.repeat(27)}.…\` is not in the payload schema`, [1, 1]),
    ]);
  });
});
