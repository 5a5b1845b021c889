/**
 * fast-check generators for the differential test: well-formed expressions
 * of the rule language (docs/rule-language.md), whole rules (2.1-2.4, 3.6) and
 * JSON payloads with the awkward corners (missing fields, nulls, wrong
 * types, -0, huge and fractional numbers, surrogate pairs, own
 * `__proto__` keys).
 *
 * Expressions are built as text with every compound operand parenthesised,
 * so precedence never depends on the generator (JavaScript refuses
 * `-2 ** 2` and `a ?? b || c` unparenthesised). Callback parameters are
 * `x` at the first level and `y` at the second; a third level is never
 * generated (3.5 refuses it).
 */
import fc from 'fast-check';
import type { RuleDefinition } from '../../compiler/types.ts';

// -------------------------------------------------------------- payloads

/** A JSON value kept as a tree so that object keys can be anything, `__proto__` included. */
export type Json = number | string | boolean | null | Json[] | { entries: Array<[string, Json]> };

/** JSON text of a `Json` tree; unlike JSON.stringify it keeps `-0`. */
export function jsonText(v: Json): string {
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : JSON.stringify(v);
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`).join(',')}}`;
}

const obj = (entries: Array<[string, Json] | undefined>): Json => ({
  entries: entries.filter((e): e is [string, Json] => e !== undefined),
});

export const numberArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -20, max: 120 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(0, -0, 0.1, 0.2, 0.5, 1.5, 2.5, -2.5, 1.005, 2 ** 53, 1e21, -1e21, 5e-324, 1.7976931348623157e308, -1.7976931348623157e308),
  },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);

const DATE_STRINGS = [
  '2020-01-01', '2020-02-29', '2021-02-29', '2020-13-01', '1990-06-15', '2024-06-15', '2024-06-16',
  '2000-02-29', '1984-12-31', '2020-01-01T10:20:30Z', '2020-01-01T23:59:59.999Z', '2020-01-02T00:00:00+02:00',
  '2020-01-01T10:20:30', '2020-1-1', 'yesterday',
];

export const stringArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('', 'a', 'abc', 'ABC', ' pad ', 'héllo', '😀', 'a😀b', '\ud800', 'İ', 'ß', 'Straße', 'a@b.co', 'not an email', 'http://x.org/a?b', '123e4567-e89b-12d3-a456-426614174000', '10', 'true', 'null', 'constructor', '__proto__') },
  { weight: 2, arbitrary: fc.constantFrom(...DATE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 5 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);

/** Any small JSON value: the "wrong type" of every field. */
export const anyJson: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { maxDepth: 2, depthIdentifier: 'anyJson' },
    fc.oneof(numberArb, stringArb, fc.boolean(), fc.constant(null)),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.array(fc.tuple(fc.constantFrom('k', 'qty', 'a b', 'z', '0'), tie('v')), { maxLength: 3 })
      .map((entries) => ({ entries: dedupe(entries) })),
  ),
})).v;

function dedupe(entries: Array<[string, Json]>): Array<[string, Json]> {
  const seen = new Set<string>();
  return entries.filter(([k]) => (seen.has(k) ? false : (seen.add(k), true)));
}

/** A field that usually has its intended type, sometimes null, another type, or nothing. */
function field(name: string, usual: fc.Arbitrary<Json>): fc.Arbitrary<[string, Json] | undefined> {
  return fc.oneof(
    { weight: 10, arbitrary: usual.map((v): [string, Json] => [name, v]) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant<[string, Json]>([name, null]) },
    { weight: 1, arbitrary: anyJson.map((v): [string, Json] => [name, v]) },
  );
}

const itemArb: fc.Arbitrary<Json> = fc.tuple(
  field('qty', fc.oneof(fc.integer({ min: -2, max: 5 }), numberArb)),
  field('price', numberArb),
  field('name', stringArb),
  field('tags', fc.array(stringArb, { maxLength: 3 })),
  field('ok', fc.boolean()),
).map(obj);

const itemsArb: fc.Arbitrary<Json> = fc.oneof(
  { weight: 6, arbitrary: fc.array(itemArb, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.array(anyJson, { maxLength: 3 }) },
);

const innerArb: fc.Arbitrary<Json> = fc.tuple(field('z', numberArb)).map(obj);

const objArb: fc.Arbitrary<Json> = fc.tuple(
  field('k', numberArb),
  field('a b', stringArb),
  field('inner', innerArb),
  field('list', fc.array(numberArb, { maxLength: 3 })),
  fc.option(fc.constantFrom<[string, Json]>(['__proto__', { entries: [['k', 1]] }], ['constructor', 5], ['length', 2], ['toString', 'x'])),
).map(([k, ab, inner, list, extra]) => obj([k, ab, inner, list, extra ?? undefined]));

/** JSON text of a random payload over the field vocabulary the expression generator reads. */
export const payloadArb: fc.Arbitrary<string> = fc.tuple(
  field('n', numberArb),
  field('m', numberArb),
  field('s', stringArb),
  field('t', stringArb),
  field('flag', fc.boolean()),
  field('items', itemsArb),
  field('nums', fc.array(numberArb, { maxLength: 4 })),
  field('tags', fc.array(stringArb, { maxLength: 4 })),
  field('obj', objArb),
  field('d', fc.constantFrom(...DATE_STRINGS)),
  field('first-name', stringArb),
  fc.option(fc.constant<[string, Json]>(['nul', null])),
).map((entries) => jsonText(obj(entries.map((e) => e ?? undefined))));

// ----------------------------------------------------------- expressions

/** Functions of 3.4 the generator calls (`matches` is left out: the reference does not model it). */
const ANY_TO_BOOL = ['exists', 'isEmpty', 'isString', 'isNumber', 'isInteger', 'isBoolean', 'isArray', 'isObject', 'isEmail', 'isUuid', 'isUri', 'isDate'] as const;
const COMPARISONS = ['==', '!=', '===', '!==', '<', '<=', '>', '>='] as const;
const ORDERINGS = ['<', '<=', '>', '>='] as const;
const ARITHMETIC = ['+', '-', '*', '/', '%', '**'] as const;
const LOGICAL = ['&&', '||', '??'] as const;
const CALLBACKS = ['every', 'some', 'filter', 'map', 'find'] as const;

/** A number literal as source text (negative ones are unary minus, as in JavaScript). */
const numberLiteral = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 100 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('0.5', '2.5', '1e3', '1e21', '0.1', '1.005', '3', '-1', '-0', '-2.5', '1.7976931348623157e308') },
);
const stringLiteral = stringArb.map((s) => JSON.stringify(s));

/** A literal of 3.2 as source text. */
export const literalArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: numberLiteral },
  { weight: 3, arbitrary: stringLiteral },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null') },
);

/** What a sub-expression is meant to produce; mismatches still happen on purpose (wrong-type payloads). */
type Kind = 'num' | 'str' | 'bool' | 'arr' | 'any';
const KINDS: readonly Kind[] = ['num', 'str', 'bool', 'arr', 'any'];
type Key = `${Kind}${0 | 1 | 2}`;

/** Leaves per kind; `x`/`y` are the callback parameters of levels 1 and 2. */
function leaves(kind: Kind, depth: number, forEach: boolean): string[] {
  const p = depth === 2 ? ['x', 'y'] : depth === 1 ? ['x'] : [];
  const each = forEach ? ['$item', '$item.qty', '$item.name', '$index'] : [];
  switch (kind) {
    case 'num':
      return ['n', 'm', 'items[0].qty', 'obj.k', 'obj.inner.z', 'nums[0]', 'nums[1]', '$.n', 'obj.list[0]',
        ...p.flatMap((v) => [v, `${v}.qty`, `${v}.price`]), ...(forEach ? ['$index', '$item.qty', '$item', '$value'] : [])];
    case 'str':
      return ['s', 't', 'd', '$["first-name"]', 'obj["a b"]', 'tags[0]', 'items[1].name', ...p.flatMap((v) => [v, `${v}.name`]),
        ...(forEach ? ['$item', '$item.name', '$value'] : [])];
    case 'bool':
      return ['flag', 'items[0].ok', ...p.map((v) => `${v}.ok`)];
    case 'arr':
      return ['items', 'nums', 'tags', 'obj.list', 'items[0].tags', ...p.flatMap((v) => [v, `${v}.tags`]), ...(forEach ? ['$item.tags'] : [])];
    case 'any':
      return ['n', 's', 'flag', 'items', 'obj', 'obj.inner', 'nul', 'missing', '$', '$value', 'obj.__proto__', 'obj.constructor',
        'obj.length', 's.length', 'items.length', 'n.qty', ...p, ...each];
  }
}

function leafArb(kind: Kind, depth: number, forEach: boolean): fc.Arbitrary<string> {
  const paths = fc.constantFrom(...leaves(kind, depth, forEach));
  const literal = kind === 'num' ? numberLiteral : kind === 'str' ? stringLiteral
    : kind === 'bool' ? fc.constantFrom('true', 'false') : kind === 'arr' ? fc.constantFrom('[]', '[1, 2]', '["a", "b"]', '[[1], 2]') : literalArb;
  return fc.oneof({ weight: 3, arbitrary: paths }, { weight: 2, arbitrary: literal });
}

/**
 * Expressions for the three callback depths, typed loosely so that most
 * comparisons compare like with like. `forEach` adds `$item` and `$index`.
 * `maxDepth` bounds the tree, so sources stay far below the 4096-char limit.
 */
export function expressionArb(forEach: boolean, maxDepth = 4, kind: Kind = 'bool'): fc.Arbitrary<string> {
  const tree = fc.letrec<Record<Key, string>>((tie) => {
    const out = {} as Record<Key, fc.Arbitrary<string>>;
    for (const depth of [0, 1, 2] as const) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tie answers Arbitrary<unknown>; every arbitrary tied here yields a string
      const t = (k: Kind): fc.Arbitrary<string> => tie(`${k}${depth}`) as fc.Arbitrary<string>;
      const par = (k: Kind): fc.Arbitrary<string> => t(k).map((s) => `(${s})`);
      const next = (k: Kind): fc.Arbitrary<string> | undefined =>
        depth < 2 ? (tie(`${k}${depth + 1}`) as fc.Arbitrary<string>) : undefined;
      const param = depth === 0 ? 'x' : 'y';
      const callback = (methods: readonly string[], body: Kind): fc.Arbitrary<string> | undefined => {
        const inner = next(body);
        return inner && fc.tuple(t('arr'), fc.constantFrom(...methods), inner)
          .map(([r, m, b]) => `(${r}).${m}(${param} => ${b})`);
      };
      const cond = (k: Kind) => fc.tuple(t('bool'), t(k), t(k)).map(([a, b, c]) => `(${a}) ? (${b}) : (${c})`);
      const logical = (k: Kind) => fc.tuple(t(k), fc.constantFrom(...LOGICAL), t(k)).map(([a, op, b]) => `(${a}) ${op} (${b})`);
      const branches: Record<Kind, Array<fc.Arbitrary<string> | undefined>> = {
        num: [
          fc.tuple(t('num'), fc.constantFrom(...ARITHMETIC), t('num')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
          fc.tuple(fc.constantFrom('-', '+'), t('num')).map(([op, a]) => `${op}(${a})`),
          fc.tuple(fc.constantFrom('abs', 'floor', 'ceil', 'round'), t('num')).map(([f, a]) => `${f}(${a})`),
          fc.tuple(t('num'), fc.integer({ min: 0, max: 15 })).map(([a, d]) => `round(${a}, ${d})`),
          fc.tuple(fc.constantFrom('sum', 'avg', 'min', 'max'), t('arr')).map(([f, a]) => `${f}(${a})`),
          fc.tuple(fc.constantFrom('min', 'max'), fc.array(t('num'), { minLength: 1, maxLength: 3 })).map(([f, xs]) => `${f}(${xs.join(', ')})`),
          fc.tuple(fc.constantFrom('len'), fc.oneof(t('str'), t('arr'), t('any'))).map(([f, a]) => `${f}(${a})`),
          fc.tuple(fc.oneof(par('str'), par('arr')), fc.constant('.length')).map(([r, a]) => r + a),
          fc.tuple(t('str'), t('str')).map(([a, b]) => `daysBetween(${a}, ${b})`),
          fc.tuple(fc.constantFrom('age', 'date'), t('str')).map(([f, a]) => `${f}(${a})`),
          fc.constant('now()'),
          cond('num'),
          logical('num'),
          callback(['filter'], 'bool')?.map((s) => `${s}.length`),
          callback(['find'], 'bool')?.map((s) => `${s}.qty`),
        ],
        str: [
          fc.tuple(t('str'), t('str')).map(([a, b]) => `(${a}) + (${b})`),
          fc.tuple(fc.constantFrom('lower', 'upper', 'trim'), t('str')).map(([f, a]) => `${f}(${a})`),
          fc.tuple(par('str'), fc.constantFrom('toLowerCase', 'toUpperCase', 'trim')).map(([r, m]) => `${r}.${m}()`),
          cond('str'),
          logical('str'),
          callback(['find'], 'bool')?.map((s) => `${s}.name`),
        ],
        bool: [
          fc.tuple(t('num'), fc.constantFrom(...COMPARISONS), t('num')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
          fc.tuple(t('str'), fc.constantFrom(...ORDERINGS, '==', '!='), t('str')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
          fc.tuple(t('any'), fc.constantFrom(...COMPARISONS), t('any')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
          fc.tuple(t('arr'), fc.constantFrom('==', '!='), t('arr')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
          t('bool').map((a) => `!(${a})`),
          fc.tuple(t('bool'), fc.constantFrom('&&', '||'), t('bool')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
          fc.tuple(fc.constantFrom(...ANY_TO_BOOL), t('any')).map(([f, a]) => `${f}(${a})`),
          fc.tuple(fc.constantFrom('isEmail', 'isUuid', 'isUri', 'isDate'), t('str')).map(([f, a]) => `${f}(${a})`),
          t('arr').map((a) => `distinct(${a})`),
          fc.tuple(t('num'), t('num'), t('num')).map(([x, a, b]) => `between(${x}, ${a}, ${b})`),
          fc.tuple(t('str'), t('str'), t('any')).map(([x, a, b]) => `between(${x}, ${a}, ${b})`),
          fc.tuple(par('str'), fc.constantFrom('startsWith', 'endsWith', 'includes'), t('str')).map(([r, m, a]) => `${r}.${m}(${a})`),
          fc.tuple(par('arr'), fc.oneof(t('num'), t('str'), t('any'))).map(([r, a]) => `${r}.includes(${a})`),
          cond('bool'),
          callback(['every', 'some'], 'bool'),
        ],
        arr: [
          fc.array(fc.oneof(t('num'), t('any')), { maxLength: 3 }).map((xs) => `[${xs.join(', ')}]`),
          callback(['filter'], 'bool'),
          callback(['map'], 'num'),
          callback(['map'], 'any'),
          cond('arr'),
          logical('arr'),
        ],
        any: [
          t('num'), t('str'), t('bool'), t('arr'),
          fc.tuple(par('any'), fc.constantFrom('.length', '[0]', '.qty', '["k"]', '.name')).map(([r, a]) => r + a),
          fc.tuple(par('any'), fc.constantFrom('startsWith', 'endsWith', 'includes'), t('any')).map(([r, m, a]) => `${r}.${m}(${a})`),
          fc.tuple(par('any'), fc.constantFrom('toLowerCase', 'toUpperCase', 'trim')).map(([r, m]) => `${r}.${m}()`),
          fc.tuple(fc.constantFrom('sum', 'avg', 'abs', 'lower', 'len', 'distinct', 'date', 'age', 'round'), t('any')).map(([f, a]) => `${f}(${a})`),
          fc.tuple(fc.constantFrom('min', 'max'), fc.array(t('any'), { minLength: 1, maxLength: 3 })).map(([f, xs]) => `${f}(${xs.join(', ')})`),
          fc.tuple(t('any'), fc.constantFrom(...ARITHMETIC, ...LOGICAL), t('any')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
          fc.tuple(fc.constantFrom('!', '-', '+'), t('any')).map(([op, a]) => `${op}(${a})`),
          fc.tuple(par('any'), fc.constantFrom(...CALLBACKS), next('any') ?? fc.constant('1'))
            .map(([r, m, b]) => (depth < 2 ? `${r}.${m}(${param} => ${b})` : `${r}.includes(${b})`)),
          fc.tuple(t('any'), t('any')).map(([a, b]) => `daysBetween(${a}, ${b})`),
        ],
      };
      for (const k of KINDS) {
        const compound = branches[k].filter((b): b is fc.Arbitrary<string> => b !== undefined);
        out[`${k}${depth}`] = fc.oneof(
          { maxDepth, depthIdentifier: `expr-${forEach}` },
          { weight: 4, arbitrary: leafArb(k, depth, forEach) },
          ...compound.map((arbitrary) => ({ weight: 1, arbitrary })),
        );
      }
    }
    return out;
  });
  return (tree[`${kind}0`]).filter((s) => s.length <= 1500);
}

// ------------------------------------------------------------ edge values

/** Source texts of values at the corners of 3.2-3.4. */
const EDGE_NUMBERS = ['0', '-0', '1', '-1', '2.5', '-2.5', '0.5', '-0.5', '1.005', '1.45', '2.675', '-1.005', '1e21', '1e-7',
  '123456789.123456', '9007199254740993', '1.7976931348623157e308', '5e-324', '0.1', '3', '1e300', '4.35', '8.345'];
const EDGE_STRINGS = ['', 'a', 'abc', 'ABC', ' a ', '😀', 'a😀', '\ud800', '\udc00a', '2020-01-01', '2020-01-01t10:00:00z',
  '2020-01-01 10:00:00Z', '2020-01-01T10:00+02:00', '2020-01-01T10:00:00+0200', '2020-02-30', '2024-02-29', '2016-12-31T23:59:60Z',
  '2000-02-29', '1990-06-15T23:30:00-02:00', 'a@b.co', 'http://x', 'mailto:a@b.c', '123e4567-e89b-12d3-a456-426614174000',
  '10', 'İ', 'ß', 'Σ', '\u00a0x\u2028', 'B', 'b'].map((s) => JSON.stringify(s));
const EDGE_OTHER = ['true', 'false', 'null', 'missing', 'obj', 'obj.inner', 'nums', 'items', 'tags', 's', 'n', '[]', '[1, 2]',
  '[2, 1]', '[1, "1"]', '[[1], [1]]', '[1, [1]]', '[null]', '["a", "b"]', '[0.1, 0.2]', '[1e308, 1e308]', '[-0, 0]',
  '[2.5, -2.5]', '[3, "3"]', '["b", "a", "b"]'];

export const edgeValueArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...EDGE_NUMBERS), fc.constantFrom(...EDGE_STRINGS), fc.constantFrom(...EDGE_OTHER),
);

const ALL_UNARY = ['exists', 'isEmpty', 'len', 'isString', 'isNumber', 'isInteger', 'isBoolean', 'isArray', 'isObject',
  'sum', 'avg', 'min', 'max', 'abs', 'round', 'floor', 'ceil', 'lower', 'upper', 'trim', 'isEmail', 'isUuid', 'isUri',
  'isDate', 'date', 'age', 'distinct'];

/**
 * Operators, callbacks and variadic calls on edge values (the unary
 * functions and methods are covered exhaustively by `exhaustiveExpressions`).
 */
export const edgeExpressionArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(edgeValueArb, fc.constantFrom(...COMPARISONS, ...ARITHMETIC, ...LOGICAL), edgeValueArb).map(([a, op, b]) => `(${a}) ${op} (${b})`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('min', 'max'), fc.array(edgeValueArb, { minLength: 3, maxLength: 4 })).map(([f, xs]) => `${f}(${xs.join(', ')})`) },
  { weight: 3, arbitrary: fc.tuple(edgeValueArb, fc.constantFrom(...CALLBACKS), fc.constantFrom('x', 'x > 1', 'x == "a"', 'len(x)', 'x.qty', 'abs(x)', '!x', 'x ?? 0', 'x.qty > 1', '[x] == [1]'))
    .map(([r, m, b]) => `(${r}).${m}(x => ${b})`) },
  { weight: 2, arbitrary: fc.tuple(edgeValueArb, edgeValueArb).map(([a, b]) => `[${a}].includes(${b})`) },
  { weight: 2, arbitrary: fc.tuple(edgeValueArb, edgeValueArb, edgeValueArb).map(([a, b, c]) => `(${a}) ? (${b}) : (${c})`) },
);

/**
 * Every listed function on every edge value, and the two-argument forms on
 * the interesting pairs: the exhaustive table, grouped by family so that a
 * failure names the function at fault.
 */
export function exhaustiveExpressions(): Map<string, string[]> {
  const values = [...EDGE_NUMBERS, ...EDGE_STRINGS, ...EDGE_OTHER];
  const numbersAndSome = [...EDGE_NUMBERS, '"1"', 'null', 'missing', 'true', '[1, 2]'];
  const stringsAndSome = [...EDGE_STRINGS, '1', 'null', 'missing', '[]', 'obj'];
  const table = new Map<string, string[]>();
  const add = (family: string, expression: string) => table.set(family, [...(table.get(family) ?? []), expression]);
  for (const f of ALL_UNARY) for (const v of values) add(f, `${f}(${v})`);
  for (const v of numbersAndSome) for (let d = 0; d <= 15; d++) add('round(x, digits)', `round(${v}, ${d})`);
  for (const v of EDGE_NUMBERS) for (const d of ['-1', '16', '1.5', '"2"', 'null', 'missing']) add('round(x, digits)', `round(${v}, ${d})`);
  for (const f of ['min', 'max']) for (const a of numbersAndSome) for (const b of numbersAndSome) add(`${f}(a, b)`, `${f}(${a}, ${b})`);
  for (const a of stringsAndSome) for (const b of [...stringsAndSome, ...EDGE_NUMBERS]) add('daysBetween', `daysBetween(${a}, ${b})`);
  for (const x of [...numbersAndSome, ...stringsAndSome]) {
    for (const [low, high] of [['0', '1'], ['-1', '1e308'], ['"a"', '"z"'], ['"2024-01-01"', '"2024-12-31"'], ['1', '"9"'], ['missing', '1']]) {
      add('between', `between(${x}, ${low}, ${high})`);
    }
  }
  for (const m of ['startsWith', 'endsWith', 'includes']) {
    for (const r of [...stringsAndSome, '[1, 2]', '["a", "b"]', '[[1], [1]]']) for (const a of stringsAndSome) add(`.${m}()`, `(${r}).${m}(${a})`);
  }
  for (const m of ['toLowerCase', 'toUpperCase', 'trim']) for (const r of values) add(`.${m}()`, `(${r}).${m}()`);
  for (const r of values) for (const a of ['.length', '[0]', '["0"]', '["length"]', '.k']) add('member access', `(${r})${a}`);
  for (const op of ['-', '+', '!']) for (const v of values) add(`unary ${op}`, `${op}(${v})`);
  return table;
}

// ----------------------------------------------------------------- rules

const CODES = ['a', 'B', 'c1', 'Rule.1', 'rule-2', '_x', 'Z9', 'b'];
const NAMES = ['Amount', 'Ünïcode name', 'Quote "q"', 'Back`tick ${x}', 'Slash */ end', 'Line\u2028sep'];

const textChunk = fc.oneof(
  fc.constantFrom('Value ', ' is ', ': ', '`', '${x}', '*/', '\u2028', '"', "'", '\\', '😀', ' '),
  fc.string({ maxLength: 4 }).map((s) => s.replace(/[{}]/g, '')),
);

/** A 3.6 message template whose placeholders hold expressions of the given level. */
export function templateArb(expression: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.array(fc.oneof(textChunk, expression.filter((e) => e.length < 300).map((e) => `{{ ${e} }}`)), { minLength: 1, maxLength: 4 })
    .map((parts) => parts.join(''));
}

/** Expressions whose expectedValue 3.6 infers: `F op L`, `L op F`, `[L, ...].includes(F)`. */
function inferableArb(subjects: string[]): fc.Arbitrary<string> {
  const f = fc.constantFrom(...subjects);
  const op = fc.constantFrom('<', '<=', '>', '>=', '==', '!=', '===', '!==');
  return fc.oneof(
    fc.tuple(f, op, literalArb).map(([a, o, l]) => `${a} ${o} ${l}`),
    fc.tuple(literalArb, op, f).map(([l, o, a]) => `${l} ${o} ${a}`),
    fc.tuple(fc.array(literalArb, { minLength: 1, maxLength: 3 }), f).map(([ls, a]) => `[${ls.join(', ')}].includes(${a})`),
  );
}

interface FieldChoice {
  path: string;
  subject: string;
}

const FIELD_PATHS: FieldChoice[] = [
  { path: 'n', subject: 'n' },
  { path: 'n', subject: '$.n' },
  { path: '$.m', subject: 'm' },
  { path: 'obj.k', subject: '$["obj"]["k"]' },
  { path: 'nums[1]', subject: 'nums[1]' },
  { path: 's', subject: 's' },
  { path: 'obj.k', subject: 'obj.k' },
  { path: 'obj["a b"]', subject: 'obj["a b"]' },
  { path: 'obj.inner.z', subject: 'obj.inner.z' },
  { path: 'items[0].qty', subject: 'items[0].qty' },
  { path: '$["first-name"]', subject: '$value' },
  { path: 'nul', subject: 'nul' },
  { path: 'flag', subject: 'flag' },
];

const EACH_PATHS: Array<{ forEach: string; fieldPath?: string; subject: string }> = [
  { forEach: 'items', fieldPath: 'items[].qty', subject: '$item.qty' },
  { forEach: 'items', fieldPath: 'items[].name', subject: '$item.name' },
  { forEach: 'items', subject: '$value' },
  { forEach: 'items', fieldPath: 'items[].tags[0]', subject: '$item.tags[0]' },
  { forEach: 'nums', fieldPath: 'nums[]', subject: '$item' },
  { forEach: 'obj.list', fieldPath: 'obj.list[]', subject: '$value' },
  { forEach: 'nums', subject: '$item' },
  { forEach: 'tags', subject: '$item' },
  { forEach: 'obj.list', subject: '$item' },
  // A fieldPath outside the array: one value for every element.
  { forEach: 'items', fieldPath: 'obj.k', subject: 'obj.k' },
];

const common = fc.record(
  {
    severity: fc.constantFrom<'Error' | 'Warning' | 'Info'>('Error', 'Warning', 'Info'),
    errorCode: fc.constantFrom('E1', 'AMOUNT_TOO_HIGH', 'ünï', ''),
    priority: fc.integer({ min: -2, max: 2 }),
    enabled: fc.boolean(),
    expectedValue: fc.oneof(fc.constant(0), fc.constant(false), fc.constant(''), fc.constant([1, 2]), fc.constant({ max: 5 }), fc.constant(null)),
  },
  { requiredKeys: [] },
);

// Built once: fast-check arbitraries are immutable, and rebuilding the
// expression grammars inside a `chain` costs more than the whole test.
const plainExpr = expressionArb(false, 3);
const plainWhen = expressionArb(false, 2);
const plainAny = expressionArb(false, 2, 'any');
const eachExpr = expressionArb(true, 3);
const eachWhen = expressionArb(true, 2);
const eachAny = expressionArb(true, 2, 'any');

const plainShape: fc.Arbitrary<Partial<RuleDefinition>> = fc.record(
  { expression: plainExpr, when: plainWhen, message: templateArb(plainAny) },
  { requiredKeys: ['expression'] },
);

const fieldShape: fc.Arbitrary<Partial<RuleDefinition>> = fc.oneof(...FIELD_PATHS.map((f) =>
  fc.record(
    {
      fieldPath: fc.constant(f.path),
      required: fc.boolean(),
      expression: fc.oneof(inferableArb([f.subject, '$value']), plainExpr),
      when: plainWhen,
      message: templateArb(fc.oneof(fc.constantFrom('$value', '$expected'), plainAny)),
    },
    { requiredKeys: ['fieldPath'] },
  ).filter((r) => r.expression !== undefined || r.required === true)));

const eachShape: fc.Arbitrary<Partial<RuleDefinition>> = fc.oneof(...EACH_PATHS.map((f) =>
  fc.record(
    {
      forEach: fc.constant(f.forEach),
      ...(f.fieldPath === undefined ? {} : { fieldPath: fc.constant(f.fieldPath), required: fc.boolean() }),
      expression: fc.oneof(inferableArb([f.subject, '$value']), eachExpr),
      when: eachWhen,
      message: templateArb(fc.oneof(fc.constantFrom('$value', '$expected', '$index', '$item'), eachAny)),
    },
    { requiredKeys: f.fieldPath === undefined ? ['forEach', 'expression'] : ['forEach', 'expression', 'fieldPath'] },
  ) as fc.Arbitrary<Partial<RuleDefinition>>));

/** One rule of any shape the reference models (no schema, no `matches`), without its code. */
const ruleBodyArb: fc.Arbitrary<Omit<RuleDefinition, 'code'>> = fc
  .tuple(fc.constantFrom(...NAMES), common, fc.oneof(plainShape, fieldShape, eachShape))
  .map(([name, c, shape]) => ({ name, ...c, ...shape }));

/** A ruleset of 1-5 rules with distinct codes. */
export const rulesetArb: fc.Arbitrary<RuleDefinition[]> = fc
  .tuple(fc.shuffledSubarray(CODES, { minLength: 1, maxLength: 5 }), fc.array(ruleBodyArb, { minLength: 5, maxLength: 5 }))
  .map(([codes, bodies]) => codes.map((code, i) => ({ code, ...bodies[i] })));
