/**
 * Hostile rules: escape attempts against the compiler, one table row each,
 * with the outcome docs/rule-language.md promises. A row is either refused by
 * `checkRule` (right code, right field, a line and column), or compiles and
 * then evaluates harmlessly: it never throws on hostile payloads, adds no
 * global, leaves the built-in prototypes alone, keeps every user string a
 * string literal of the generated source, and (where given) returns the
 * result the spec implies.
 *
 * Escapes are written to set `globalThis.PWNED`, so a successful one shows
 * up as a new global rather than as silence.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as acorn from 'acorn';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRule, compileRuleset } from '../../compiler/index.ts';
import type { CompileError, CompileErrorCode, RuleDefinition, RuleField } from '../../compiler/types.ts';

const NOW = Date.UTC(2024, 5, 15, 12, 30);
const MARK = 'PWNED';

/** Payloads thrown at every accepted rule; own `__proto__`/`constructor` keys come from JSON.parse as on the wire. */
const HOSTILE_PAYLOADS: Array<[string, unknown]> = [
  ['empty object', {}],
  ['own __proto__, constructor, prototype', JSON.parse('{"__proto__":{"polluted":1,"PWNED":1},"constructor":{"prototype":{"polluted":2}},"prototype":3,"x":{"__proto__":{"a":1},"constructor":"c"}}')],
  ['Object.prototype names as keys', { valueOf: 1, toString: 'x', hasOwnProperty: 5, __defineGetter__: 1, __lookupGetter__: 2, isPrototypeOf: 3, propertyIsEnumerable: 4, toLocaleString: 6, length: 1e308, x: { hasOwnProperty: 1, constructor: { constructor: 'x' } } }],
  ['wrong types everywhere', { x: 5, s: { startsWith: 1, length: 'x' }, items: [null, 1, 'x', [], {}, { qty: '3' }], a: { b: null }, n: 'NaN', t: [] }],
  ['nulls', { x: null, s: null, items: null, n: null, a: null }],
  ['strings with surrogates', { s: '\ud800\udc00\ud800', x: '😀'.repeat(1000), n: -0, items: ['\u2028', '`${x}`', '{{ constructor }}'] }],
  ['numeric extremes', { n: 1.7976931348623157e308, x: -1.7976931348623157e308, a: 5e-324, items: [1e308, 1e308] }],
  ['deeply nested', JSON.parse(`${'{"x":'.repeat(60)}1${'}'.repeat(60)}`)],
  ['large array', { items: Array.from({ length: 5000 }, (_, i) => ({ qty: i, x: i })) }],
  ['payload is an array', [1, 2, 3]],
  ['payload is null', null],
  ['payload is a string', 'constructor'],
];

type Outcome =
  /** Refused by checkRule with one of these codes, on this field, with a position. */
  | { refused: CompileErrorCode[]; field?: RuleField; at?: [number, number] }
  /** Compiles; evaluates harmlessly; optionally with these results. */
  | { accepted: true; runs?: Array<{ payload: unknown; isValid: boolean; message?: string }> }
  /** The spec leaves both open: refused with a position, or compiles and runs harmlessly. */
  | { refusedOrHarmless: true; runs?: Array<{ payload: unknown; isValid: boolean }> };

interface HostileCase {
  name: string;
  rule: Partial<RuleDefinition>;
  outcome: Outcome;
}

const CALL_REFUSED = { refused: ['UNKNOWN_FUNCTION', 'NOT_ALLOWED'] as CompileErrorCode[] };
const NOT_ALLOWED = { refused: ['NOT_ALLOWED'] as CompileErrorCode[] };
const SYNTAX = { refused: ['SYNTAX_ERROR'] as CompileErrorCode[] };
const ex = (expression: string): Partial<RuleDefinition> => ({ expression });
const parsed = (text: string): unknown => JSON.parse(text);

const CASES: HostileCase[] = [
  // ---------------------------------------------------------- Function and friends
  { name: 'constructor.constructor("...")() from a bare identifier', rule: ex(`constructor.constructor("globalThis.${MARK}=1")()`), outcome: { ...CALL_REFUSED, at: [1, 1] } },
  { name: 'x.constructor.constructor("...")()', rule: ex(`x.constructor.constructor("globalThis.${MARK}=1")()`), outcome: CALL_REFUSED },
  { name: '(1).constructor.constructor("...")()', rule: ex(`(1).constructor.constructor("globalThis.${MARK}=1")()`), outcome: CALL_REFUSED },
  { name: '"".constructor.fromCharCode()', rule: ex('"".constructor.fromCharCode(65) == "A"'), outcome: CALL_REFUSED },
  {
    name: 'x.constructor reads only an own key',
    rule: ex('!exists(x.constructor) || x.constructor == "c"'),
    outcome: { accepted: true, runs: [{ payload: { x: {} }, isValid: true }, { payload: { x: 'str' }, isValid: true }, { payload: parsed('{"x":{"constructor":"c"}}'), isValid: true }, { payload: parsed('{"x":{"constructor":"d"}}'), isValid: false }] },
  },
  {
    name: 'x.__proto__ reads only an own key',
    rule: ex('!exists(x.__proto__) || x.__proto__.a == 1'),
    outcome: { accepted: true, runs: [{ payload: { x: {} }, isValid: true }, { payload: { x: [] }, isValid: true }, { payload: parsed('{"x":{"__proto__":{"a":1}}}'), isValid: true }, { payload: parsed('{"x":{"__proto__":{"a":2}}}'), isValid: false }] },
  },
  {
    name: 'x["__proto__"] and x["constructor"] read only own keys',
    rule: ex('x["__proto__"] == missing && x["constructor"] == missing'),
    outcome: { accepted: true, runs: [{ payload: { x: {} }, isValid: true }, { payload: parsed('{"x":{"__proto__":1}}'), isValid: false }] },
  },
  {
    name: 'x.prototype / x.__proto__.constructor chain gives undefined',
    rule: ex('!exists(x.prototype) && !exists(x.__proto__.constructor) && !exists(s.constructor.name)'),
    outcome: { accepted: true, runs: [{ payload: { x: {}, s: 'abc' }, isValid: true }] },
  },
  {
    name: 'Object.prototype names as bare identifiers are payload fields',
    rule: ex('!exists(toString) && !exists(valueOf) && !exists(hasOwnProperty) && !exists(constructor) && !exists(__proto__) && !exists(__defineGetter__) && !exists(isPrototypeOf)'),
    outcome: { accepted: true, runs: [{ payload: {}, isValid: true }, { payload: { valueOf: 1 }, isValid: false }] },
  },
  {
    name: 'payload keys shadow hasOwnProperty/valueOf/toString without breaking reads',
    rule: ex('x.hasOwnProperty == 1 && valueOf == 1 && toString == "x" && len(x) == 2'),
    outcome: { accepted: true, runs: [{ payload: { valueOf: 1, toString: 'x', x: { hasOwnProperty: 1, constructor: 2 } }, isValid: true }] },
  },
  { name: 'x.valueOf() is not a listed method', rule: ex('x.valueOf() == 1'), outcome: CALL_REFUSED },
  { name: 'x.toString() is not a listed method', rule: ex('x.toString() == "1"'), outcome: CALL_REFUSED },
  { name: 'x.hasOwnProperty("a") is not a listed method', rule: ex('x.hasOwnProperty("a")'), outcome: CALL_REFUSED },
  { name: '__defineGetter__ call', rule: ex('__defineGetter__("x", min)'), outcome: CALL_REFUSED },
  { name: 'x.__defineGetter__("toString", ...)', rule: ex('x.__defineGetter__("toString", x.constructor)'), outcome: CALL_REFUSED },
  { name: 'x.__lookupGetter__("__proto__")', rule: ex('x.__lookupGetter__("__proto__")'), outcome: CALL_REFUSED },

  // ---------------------------------------------------------- globals and scope
  {
    name: 'globalThis is a payload field, never the global object',
    rule: ex('!exists(globalThis) && !exists(globalThis.process)'),
    outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: true }] },
  },
  { name: 'process.exit()', rule: ex('process.exit(1)'), outcome: CALL_REFUSED },
  {
    name: 'process / require / module / arguments as values are payload fields',
    rule: ex('!exists(process) && !exists(require) && !exists(module) && !exists(arguments) && !exists(exports) && !exists(Function) && !exists(eval) && !exists(Object)'),
    outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: true }] },
  },
  { name: 'require("fs")', rule: ex('require("fs")'), outcome: { refused: ['UNKNOWN_FUNCTION'], at: [1, 1] } },
  { name: 'Function("...")()', rule: ex(`Function("globalThis.${MARK}=1")()`), outcome: CALL_REFUSED },
  { name: 'eval("...")', rule: ex(`eval("globalThis.${MARK}=1")`), outcome: { refused: ['UNKNOWN_FUNCTION'] } },
  { name: 'this', rule: ex('x && this'), outcome: { ...NOT_ALLOWED, at: [1, 6] } },
  { name: 'this on a second line', rule: ex('x &&\n  this.constructor'), outcome: { ...NOT_ALLOWED, at: [2, 3] } },
  { name: 'import("fs")', rule: ex('import("fs")'), outcome: NOT_ALLOWED },
  { name: 'import.meta', rule: ex('import.meta'), outcome: { refused: ['SYNTAX_ERROR', 'NOT_ALLOWED'] } },
  { name: 'new', rule: ex('1 + new Function("x")'), outcome: { ...NOT_ALLOWED, at: [1, 5] } },
  { name: 'new.target', rule: ex('new.target'), outcome: { refused: ['SYNTAX_ERROR', 'NOT_ALLOWED'] } },
  {
    name: 'NaN / Infinity / undefined are payload fields, not globals',
    rule: ex('!(Infinity > 1) && !(NaN != NaN) && undefined == missing'),
    outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: true }] },
  },

  // ---------------------------------------------------------- syntax outside the allow-list
  { name: 'template literal', rule: ex('`${x}` == "1"'), outcome: NOT_ALLOWED },
  { name: 'template literal with code in ${}', rule: ex(`\`\${constructor.constructor("globalThis.${MARK}=1")()}\``), outcome: { refused: ['NOT_ALLOWED', 'UNKNOWN_FUNCTION'] } },
  { name: 'tagged template', rule: ex('String.raw`x` == "x"'), outcome: { refused: ['NOT_ALLOWED', 'UNKNOWN_FUNCTION'] } },
  { name: 'unicode escape \\u0063onstructor call', rule: ex(`x.\\u0063onstructor.\\u0063onstructor("globalThis.${MARK}=1")()`), outcome: CALL_REFUSED },
  { name: 'unicode escape \\u{63}onstructor call', rule: ex(`\\u{63}onstructor.\\u{63}onstructor("globalThis.${MARK}=1")()`), outcome: CALL_REFUSED },
  {
    name: 'unicode-escaped member read stays an own-key read',
    rule: ex('x.\\u0063onstructor == missing && x.\\u{5f}_proto__ == missing'),
    outcome: { refusedOrHarmless: true, runs: [{ payload: { x: {} }, isValid: true }] },
  },
  { name: 'escaped keyword n\\u0065w', rule: ex('n\\u0065w Function("1")'), outcome: SYNTAX },
  { name: 'computed key from an expression', rule: ex('x["con" + "structor"]'), outcome: NOT_ALLOWED },
  { name: 'computed key from a field', rule: ex('x[k]'), outcome: NOT_ALLOWED },
  { name: 'computed key from a call', rule: ex('x[lower("CONSTRUCTOR")]'), outcome: NOT_ALLOWED },
  { name: 'min.constructor (function as value)', rule: ex('min.constructor'), outcome: { refused: ['NOT_ALLOWED', 'UNKNOWN_FUNCTION'] } },
  { name: 'listed function used as a value', rule: ex('exists(len)'), outcome: { refused: ['NOT_ALLOWED', 'UNKNOWN_FUNCTION'] } },
  { name: 'listed function passed as callback', rule: ex('items.every(isNumber)'), outcome: { refused: ['NOT_ALLOWED', 'BAD_ARGUMENTS'] } },
  { name: 'method used as a value', rule: ex('s.startsWith'), outcome: { refusedOrHarmless: true, runs: [{ payload: { s: 'a' }, isValid: false }] } },
  { name: 'assignment', rule: ex('x = 1'), outcome: { ...NOT_ALLOWED, at: [1, 1] } },
  { name: 'assignment to the prototype', rule: ex(`x.__proto__.${MARK} = 1`), outcome: NOT_ALLOWED },
  { name: 'compound assignment', rule: ex('x += 1'), outcome: NOT_ALLOWED },
  { name: 'update ++', rule: ex('x++'), outcome: NOT_ALLOWED },
  { name: 'delete', rule: ex('delete x.a'), outcome: NOT_ALLOWED },
  { name: 'typeof', rule: ex('typeof x == "object"'), outcome: NOT_ALLOWED },
  { name: 'void', rule: ex('void 0'), outcome: NOT_ALLOWED },
  { name: 'in', rule: ex('"a" in x'), outcome: NOT_ALLOWED },
  { name: 'instanceof', rule: ex('x instanceof y'), outcome: NOT_ALLOWED },
  { name: 'bitwise operators', rule: ex('(n | 0) == n'), outcome: NOT_ALLOWED },
  { name: 'sequence a, b', rule: ex(`exists(x), globalThis.${MARK}`), outcome: NOT_ALLOWED },
  { name: 'trailing statement', rule: ex(`a > 1; constructor.constructor("globalThis.${MARK}=1")()`), outcome: { refused: ['SYNTAX_ERROR', 'NOT_ALLOWED'] } },
  { name: 'closing parenthesis smuggling 1)*(2', rule: ex('1)*(2'), outcome: SYNTAX },
  { name: 'closing parenthesis smuggling with a call', rule: ex(`1); globalThis.${MARK} = (1`), outcome: SYNTAX },
  { name: 'block statement', rule: ex(`{ globalThis.${MARK} = 1 }`), outcome: { refused: ['SYNTAX_ERROR', 'NOT_ALLOWED'] } },
  { name: 'labelled statement', rule: ex('a: 1'), outcome: { refused: ['SYNTAX_ERROR', 'NOT_ALLOWED'] } },
  { name: 'function declaration', rule: ex('function f() {}'), outcome: { refused: ['SYNTAX_ERROR', 'NOT_ALLOWED'] } },
  { name: 'empty expression', rule: ex('   '), outcome: { refused: ['SYNTAX_ERROR', 'INVALID_RULE'] } },
  {
    name: 'line comment at the end does not swallow generated code',
    rule: ex('n > 1 // */ ) ; globalThis.PWNED = 1'),
    outcome: { accepted: true, runs: [{ payload: { n: 2 }, isValid: true }, { payload: { n: 0 }, isValid: false }] },
  },
  {
    name: 'block comments around and inside',
    rule: ex('/* ) */ n /* */ > /* */ 1 /* ; globalThis.PWNED = 1 */'),
    outcome: { accepted: true, runs: [{ payload: { n: 2 }, isValid: true }, { payload: { n: 0 }, isValid: false }] },
  },
  {
    name: 'comment ending in a line separator',
    rule: ex('n > 1 // \u2028 && false'),
    outcome: { accepted: true, runs: [{ payload: { n: 2 }, isValid: false }] },
  },
  {
    name: 'HTML-like comment <!-- hides nothing',
    rule: ex(`true <!-- globalThis.${MARK} = 1`),
    outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: true }] },
  },
  { name: 'optional chaining ?.', rule: ex('x?.y == 1'), outcome: NOT_ALLOWED },
  { name: 'optional call ?.()', rule: ex('min?.(1)'), outcome: { refused: ['NOT_ALLOWED', 'UNKNOWN_FUNCTION'] } },
  { name: 'spread in a call', rule: ex('min(...nums) > 1'), outcome: NOT_ALLOWED },
  { name: 'spread in an array', rule: ex('[...nums] == []'), outcome: NOT_ALLOWED },
  { name: 'array hole', rule: ex('[1,,2] == [1, 2]'), outcome: { refused: ['NOT_ALLOWED', 'SYNTAX_ERROR'] } },
  { name: 'object literal', rule: ex('({}) == x'), outcome: NOT_ALLOWED },
  { name: 'object literal with __proto__', rule: ex('({ __proto__: null }).a'), outcome: NOT_ALLOWED },
  { name: 'regex literal', rule: ex('/a/ == s'), outcome: { ...NOT_ALLOWED, at: [1, 1] } },
  { name: 'regex literal with a method call', rule: ex('/a/.test(s)'), outcome: CALL_REFUSED },
  { name: 'BigInt literal', rule: ex('n == 1n'), outcome: NOT_ALLOWED },
  { name: 'async arrow', rule: ex('items.some(async x => x)'), outcome: NOT_ALLOWED },
  { name: 'await', rule: ex('await x'), outcome: { refused: ['SYNTAX_ERROR', 'NOT_ALLOWED'] } },
  { name: 'yield expression', rule: ex('yield x'), outcome: { refused: ['SYNTAX_ERROR', 'NOT_ALLOWED'] } },
  { name: 'class expression', rule: ex('(class { static x = globalThis }).x'), outcome: NOT_ALLOWED },
  { name: 'function expression', rule: ex('(function () { return this })()'), outcome: { refused: ['NOT_ALLOWED', 'UNKNOWN_FUNCTION'] } },
  { name: 'arrow with a block body', rule: ex(`items.every(x => { globalThis.${MARK} = 1; return true })`), outcome: NOT_ALLOWED },
  { name: 'arrow as a value', rule: ex('(x => x)'), outcome: NOT_ALLOWED },
  { name: 'immediately invoked arrow', rule: ex('(x => x)(1)'), outcome: { refused: ['NOT_ALLOWED', 'UNKNOWN_FUNCTION'] } },
  { name: 'arrow with two parameters', rule: ex('items.every((x, i) => i < 3)'), outcome: { refused: ['NOT_ALLOWED', 'BAD_ARGUMENTS'] } },
  { name: 'arrow with a destructured parameter', rule: ex('items.every(({ constructor }) => constructor)'), outcome: { refused: ['NOT_ALLOWED', 'BAD_ARGUMENTS'] } },
  { name: 'arrow with a default parameter', rule: ex('items.every((x = globalThis) => x)'), outcome: { refused: ['NOT_ALLOWED', 'BAD_ARGUMENTS'] } },
  { name: 'three callback levels', rule: ex('a.every(x => x.b.some(y => y.c.every(z => z > 0)))'), outcome: { refused: ['TOO_DEEP'] } },
  {
    name: 'two callback levels are allowed',
    rule: ex('a.every(x => x.b.some(y => y > 0))'),
    outcome: { accepted: true, runs: [{ payload: { a: [{ b: [0, 1] }, { b: [2] }] }, isValid: true }, { payload: { a: [{ b: [0] }] }, isValid: false }] },
  },
  {
    name: 'callback parameters named after dangerous globals',
    rule: ex('items.every(constructor => exists(constructor.qty)) && items.some(__proto__ => __proto__.qty > 1) && items.map(process => process.qty) == [1, 2]'),
    outcome: { refusedOrHarmless: true, runs: [{ payload: { items: [{ qty: 1 }, { qty: 2 }] }, isValid: true }] },
  },
  { name: 'identifier $foo', rule: ex('$foo == 1'), outcome: { ...NOT_ALLOWED, at: [1, 1] } },
  { name: 'identifier $$', rule: ex('$$ == 1'), outcome: NOT_ALLOWED },
  { name: 'callback parameter $item', rule: ex('items.every($item => $item)'), outcome: NOT_ALLOWED },

  // ---------------------------------------------------------- sizes and depth
  { name: '2000 nested parentheses', rule: ex(`${'('.repeat(2000)}1${')'.repeat(2000)} == 1`), outcome: { refused: ['TOO_DEEP'] } },
  { name: '100k-char expression', rule: ex(`n == ${'1+'.repeat(50_000)}1`), outcome: { refused: ['TOO_LONG'] } },
  { name: '100k nested parentheses', rule: ex(`${'('.repeat(50_000)}1${')'.repeat(50_000)}`), outcome: { refused: ['TOO_LONG'] } },
  { name: '3000 chained !', rule: ex(`${'!'.repeat(3000)}x`), outcome: { refused: ['TOO_DEEP'] } },
  { name: '1000 nested arrays', rule: ex(`${'['.repeat(1000)}${']'.repeat(1000)} == x`), outcome: { refused: ['TOO_DEEP'] } },
  { name: '1500 chained unary minus', rule: ex(`${'- '.repeat(1500)}1 == 1`), outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: true }] } },
  { name: '1500-term sum (deep left-leaning tree)', rule: ex(`${'1+'.repeat(1499)}1 == 1500`), outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: true }] } },
  { name: '60 nested parentheses are fine', rule: ex(`${'('.repeat(60)}n${')'.repeat(60)} == 1`), outcome: { accepted: true, runs: [{ payload: { n: 1 }, isValid: true }] } },
  { name: 'huge numeric literal 1e400', rule: ex('n < 1e400'), outcome: { refused: ['NOT_ALLOWED', 'BAD_ARGUMENTS', 'SYNTAX_ERROR'], at: [1, 5] } },
  { name: 'legacy octal literal 010 (sloppy-only syntax)', rule: ex('n == 010'), outcome: { refusedOrHarmless: true, runs: [{ payload: { n: 8 }, isValid: true }] } },
  { name: 'legacy octal escape "\\101" (sloppy-only syntax)', rule: ex('s == "\\101"'), outcome: { refusedOrHarmless: true, runs: [{ payload: { s: 'A' }, isValid: true }] } },
  { name: 'numeric separators and hex literals', rule: ex('n == 1_000 && m == 0x10'), outcome: { refusedOrHarmless: true, runs: [{ payload: { n: 1000, m: 16 }, isValid: true }] } },
  { name: '"use strict" directive as the expression', rule: ex('"use strict"'), outcome: { accepted: true, runs: [{ payload: {}, isValid: false }] } },

  // ---------------------------------------------------------- strings that must stay data
  {
    name: 'string literal with quotes, backslashes, line separators and ${}',
    rule: ex(`s == "\\"); globalThis.${MARK} = 1; (\\"\\u2028\u2029\`\${x}\`*/"`),
    outcome: { accepted: true, runs: [{ payload: { s: `"); globalThis.${MARK} = 1; ("\u2028\u2029\`\${x}\`*/` }, isValid: true }] },
  },
  {
    name: 'rule name, errorCode and message text with */, U+2028, backticks and ${}',
    rule: {
      expression: 'false',
      name: `*/ globalThis.${MARK} = 1; /* \u2028 globalThis.${MARK}=2 // \`\${globalThis.${MARK}=3}\``,
      errorCode: `'); globalThis.${MARK} = 1; ('\u2029`,
      message: `\`\${globalThis.${MARK}=4}\` */ \u2028 ${MARK} \\ " '`,
    },
    outcome: { accepted: true, runs: [{ payload: {}, isValid: false, message: `\`\${globalThis.${MARK}=4}\` */ \u2028 ${MARK} \\ " '` }] },
  },
  // The code grammar (docs/rule-language.md) may be enforced by the API layer; the compiler must stay safe either way.
  { name: 'rule code with */', rule: { code: `a*/ globalThis.${MARK}=1 /*`, expression: 'false' }, outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: false }] } },
  { name: 'rule code with a line separator', rule: { code: `a\u2028globalThis.${MARK}=1//`, expression: 'false' }, outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: false }] } },
  {
    name: 'regex pattern text that would close a regex literal stays data',
    rule: { fieldPath: 's', expression: `matches(s, "^a/, globalThis.${MARK} = 1, /b\\u2028$")` },
    outcome: { accepted: true, runs: [{ payload: { s: `a/, globalThis.${MARK} = 1, /b\u2028` }, isValid: true }, { payload: { s: 'a/' }, isValid: false }] },
  },
  {
    name: 'regex pattern with a named group and a slash class',
    rule: { fieldPath: 's', expression: `matches(s, "(?<${MARK}>[/])")` },
    outcome: { accepted: true, runs: [{ payload: { s: 'x/y' }, isValid: true }, { payload: { s: 'xy' }, isValid: false }] },
  },
  { name: 'matches() with a pattern that is not a literal', rule: ex('matches(s, t)'), outcome: { refused: ['BAD_ARGUMENTS'], at: [1, 12] } },
  { name: 'matches() with a pattern over 512 chars', rule: ex(`matches(s, "${'a'.repeat(513)}")`), outcome: { refused: ['TOO_LONG'] } },
  {
    name: 'message {{ constructor }} renders the own key only',
    rule: { expression: 'false', message: 'c={{ constructor }} p={{ __proto__ }} t={{ toString }}' },
    outcome: { accepted: true, runs: [{ payload: {}, isValid: false, message: 'c= p= t=' }, { payload: parsed('{"constructor":"C","__proto__":"P"}'), isValid: false, message: 'c=C p=P t=' }] },
  },
  { name: 'message calling constructor.constructor', rule: { expression: 'false', message: `{{ constructor.constructor("globalThis.${MARK}=1")() }}` }, outcome: { refused: ['UNKNOWN_FUNCTION', 'NOT_ALLOWED'], field: 'message' } },
  { name: 'message placeholder with a statement', rule: { expression: 'false', message: `{{ 1; globalThis.${MARK} = 1 }}` }, outcome: { refused: ['SYNTAX_ERROR', 'NOT_ALLOWED'], field: 'message' } },
  { name: 'message placeholder error is positioned in the message', rule: { expression: 'false', message: 'ab {{ this }}' }, outcome: { refused: ['NOT_ALLOWED'], field: 'message', at: [1, 7] } },
  { name: 'message placeholder error on a second line', rule: { expression: 'false', message: 'line one\nx {{ new X() }}' }, outcome: { refused: ['NOT_ALLOWED'], field: 'message', at: [2, 6] } },
  { name: 'when error is positioned in when', rule: { expression: 'true', when: 'a &&\n this' }, outcome: { refused: ['NOT_ALLOWED'], field: 'when', at: [2, 2] } },
  { name: 'message with an unterminated placeholder', rule: { expression: 'false', message: 'amount {{ $value' }, outcome: { refused: ['SYNTAX_ERROR'], field: 'message' } },
  { name: 'message with an empty placeholder', rule: { expression: 'false', message: 'a {{ }} b' }, outcome: { refused: ['SYNTAX_ERROR'], field: 'message' } },
  {
    name: 'message with stray }} and a lone {',
    rule: { expression: 'false', message: 'a }} b { c }' },
    outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: false }] },
  },
  {
    name: 'message placeholder whose string holds }}',
    rule: { expression: 'false', message: 'x{{ "}}" }}y' },
    outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: false }] },
  },
  {
    name: 'payload text that looks like a placeholder is rendered verbatim',
    rule: { expression: 'false', fieldPath: 's', message: 'got {{ $value }}' },
    outcome: { accepted: true, runs: [{ payload: { s: '{{ constructor.constructor("globalThis.PWNED=1")() }}' }, isValid: false, message: 'got {{ constructor.constructor("globalThis.PWNED=1")() }}' }] },
  },
  {
    name: 'template in when',
    rule: { expression: 'true', when: `\`\${globalThis.${MARK} = 1}\`` },
    outcome: { refused: ['NOT_ALLOWED'], field: 'when' },
  },

  // ---------------------------------------------------------- paths
  { name: 'fieldPath injection', rule: { expression: 'true', fieldPath: `a"];globalThis.${MARK}=1;//` }, outcome: { refused: ['INVALID_PATH'], field: 'fieldPath' } },
  { name: 'forEach injection', rule: { expression: 'true', forEach: `a"];globalThis.${MARK}=1;//` }, outcome: { refused: ['INVALID_PATH'], field: 'forEach' } },
  { name: 'fieldPath with a newline and a call', rule: { expression: 'true', fieldPath: `a\n;globalThis.${MARK}=1` }, outcome: { refused: ['INVALID_PATH'], field: 'fieldPath' } },
  { name: 'fieldPath with a computed expression', rule: { expression: 'true', fieldPath: 'a[b]' }, outcome: { refused: ['INVALID_PATH'], field: 'fieldPath' } },
  {
    name: 'quoted fieldPath key holding code stays a key',
    rule: { expression: '$value == 1', fieldPath: `$["a\\"];globalThis.${MARK}=1;//"]` },
    outcome: { refusedOrHarmless: true, runs: [{ payload: { [`a"];globalThis.${MARK}=1;//`]: 1 }, isValid: true }, { payload: { [`a"];globalThis.${MARK}=1;//`]: 2 }, isValid: false }] },
  },
  {
    name: 'fieldPath __proto__ reads only an own key',
    rule: { expression: '$value == 1', fieldPath: 'x.__proto__' },
    outcome: { refusedOrHarmless: true, runs: [{ payload: { x: {} }, isValid: true }, { payload: parsed('{"x":{"__proto__":1}}'), isValid: true }, { payload: parsed('{"x":{"__proto__":2}}'), isValid: false }] },
  },
  {
    name: 'fieldPath constructor.prototype reads only own keys',
    rule: { fieldPath: 'x.constructor.prototype', required: true },
    outcome: { refusedOrHarmless: true, runs: [{ payload: { x: {} }, isValid: false }, { payload: parsed('{"x":{"constructor":{"prototype":1}}}'), isValid: true }] },
  },
  {
    name: 'forEach over an own __proto__ array',
    rule: { forEach: '__proto__', expression: '$item > 0' },
    outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: true }, { payload: parsed('{"__proto__":[1,0]}'), isValid: false }] },
  },
  {
    name: '$index outside forEach',
    rule: ex('$index == missing'),
    outcome: { refusedOrHarmless: true, runs: [{ payload: {}, isValid: true }] },
  },
];

// ---------------------------------------------------------------- helpers

function snapshot(target: object): string[] {
  return Reflect.ownKeys(target).map((k) => {
    const d = Object.getOwnPropertyDescriptor(target, k);
    return `${String(k)}:${typeof d?.value}:${d?.get ? 'get' : ''}:${d?.writable}`;
  });
}

const PROTOTYPES: Array<[string, object]> = [
  ['Object.prototype', Object.prototype], ['Array.prototype', Array.prototype],
  ['String.prototype', String.prototype], ['Function.prototype', Function.prototype],
  ['Number.prototype', Number.prototype],
];
const globalsBefore = new Set(Reflect.ownKeys(globalThis).map(String));
const prototypesBefore = PROTOTYPES.map(([, p]) => snapshot(p));

function newGlobals(): string[] {
  return Reflect.ownKeys(globalThis).map(String).filter((k) => !globalsBefore.has(k) && k !== '__vitest_worker__');
}

/** Parses generated source as a script, a function body or a module, whichever it is. */
function parseGenerated(source: string): acorn.Token[] {
  const tokens: acorn.Token[] = [];
  const attempts: Array<[string, acorn.Options]> = [
    [source, { ecmaVersion: 'latest', sourceType: 'script', allowReturnOutsideFunction: true }],
    [source, { ecmaVersion: 'latest', sourceType: 'module', allowReturnOutsideFunction: true }],
    // A bare `function (rt, refs) { ... }` is an expression, not a statement.
    [`(${source}\n)`, { ecmaVersion: 'latest', sourceType: 'script' }],
  ];
  let lastError: unknown;
  for (const [text, options] of attempts) {
    tokens.length = 0;
    try {
      acorn.parse(text, { ...options, onToken: tokens });
      if (text !== source) for (const t of tokens) { t.start -= 1; t.end -= 1; }
      return tokens;
    } catch (e) {
      lastError = e;
    }
  }
  throw lastError;
}

/** Every occurrence of `needle` in the source lies inside a string-literal token. */
function onlyInStringLiterals(source: string, tokens: acorn.Token[], needle: string): string[] {
  const strings = tokens.filter((t) => t.type.label === 'string');
  const outside: string[] = [];
  for (let i = source.indexOf(needle); i >= 0; i = source.indexOf(needle, i + 1)) {
    if (!strings.some((t) => t.start < i && i + needle.length < t.end)) {
      outside.push(source.slice(Math.max(0, i - 40), i + 40));
    }
  }
  return outside;
}

function withBase(rule: Partial<RuleDefinition>): RuleDefinition {
  return { code: 'hostile', name: 'hostile rule', ...rule };
}

function describeErrors(errors: CompileError[]): string {
  return JSON.stringify(errors.map((e) => ({ ...e, message: e.message.slice(0, 120) })));
}

// ------------------------------------------------------------------ tests

describe('hostile rules', () => {
  it('has at least 40 distinct escape attempts', () => {
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
    expect(CASES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const rule = withBase(c.rule);
    let errors: CompileError[] = [];
    expect(() => { errors = checkRule(rule); }, 'checkRule must never throw').not.toThrow();
    const outcome = c.outcome;

    if ('refused' in outcome || ('refusedOrHarmless' in outcome && errors.length > 0)) {
      expect(errors.length, 'expected a refusal, got none').toBeGreaterThan(0);
      const field = 'refused' in outcome ? outcome.field ?? 'expression' : undefined;
      const relevant = field ? errors.filter((e) => e.field === field) : errors;
      expect(relevant.length, `no error on ${field}: ${describeErrors(errors)}`).toBeGreaterThan(0);
      const first = relevant[0];
      if ('refused' in outcome) expect(outcome.refused, describeErrors(errors)).toContain(first.code);
      expect(first.ruleCode).toBe(rule.code);
      const positional = !['code', 'fieldPath', 'forEach'].includes(first.field) && c.name !== 'empty expression';
      if (positional) {
        expect(first.line, `position of ${describeErrors([first])}`).toBeGreaterThanOrEqual(1);
        expect(first.column, `position of ${describeErrors([first])}`).toBeGreaterThanOrEqual(1);
      }
      if ('refused' in outcome && outcome.at) expect([first.line, first.column]).toEqual(outcome.at);
      const compiled = compileRuleset([rule]);
      expect(compiled.ruleCount).toBe(0);
      expect(compiled.errors.map((e) => e.code)).toContain(first.code);
      return;
    }

    expect(errors, describeErrors(errors)).toEqual([]);
    const compiled = compileRuleset([rule]);
    expect(compiled.errors).toEqual([]);
    expect(compiled.ruleCount).toBe(1);

    const tokens = parseGenerated(compiled.source);
    expect(onlyInStringLiterals(compiled.source, tokens, MARK), 'user text outside string literals').toEqual([]);

    const runs = 'runs' in outcome ? outcome.runs ?? [] : [];
    const payloads: unknown[] = [...HOSTILE_PAYLOADS.map(([, p]) => p), ...runs.map((r) => r.payload)];
    for (const payload of payloads) {
      const result = compiled.validate(structuredClone(payload), NOW);
      expect(typeof result.isValid).toBe('boolean');
      expect(Array.isArray(result.failures)).toBe(true);
      expect(() => JSON.stringify(result)).not.toThrow();
    }
    for (const run of runs) {
      const result = compiled.validate(run.payload, NOW);
      expect(result.isValid, `payload ${JSON.stringify(run.payload)}`).toBe(run.isValid);
      if ('message' in run && run.message !== undefined) {
        expect(result.failures[0]?.message).toBe(run.message);
        expect(result.failures[0]?.ruleName).toBe(rule.name);
        expect(result.failures[0]?.errorCode).toBe(rule.errorCode ?? rule.code);
      }
    }
    expect(newGlobals()).toEqual([]);
    PROTOTYPES.forEach(([name, p], i) => expect(snapshot(p), name).toEqual(prototypesBefore[i]));
  });

  it('one ruleset holding every accepted hostile rule still compiles to well-formed source', () => {
    const accepted = CASES.map((c, i) => withBase({ ...c.rule, code: c.rule.code ?? `h${i}` }))
      .filter((r) => checkRule(r).length === 0);
    const compiled = compileRuleset(accepted);
    expect(compiled.errors).toEqual([]);
    expect(compiled.ruleCount).toBe(accepted.length);
    const tokens = parseGenerated(compiled.source);
    expect(onlyInStringLiterals(compiled.source, tokens, MARK)).toEqual([]);
    for (const [, payload] of HOSTILE_PAYLOADS) {
      expect(() => compiled.validate(structuredClone(payload), NOW)).not.toThrow();
    }
    expect(newGlobals()).toEqual([]);
  });

  afterAll(() => {
    expect(newGlobals()).toEqual([]);
    expect((Object.prototype as Record<string, unknown>)[MARK]).toBeUndefined();
  });
});

describe('hostile payloads and options', () => {
  it('never throws on a payload nested 100,000 deep (deep equality, includes, distinct, rendering)', () => {
    const deep = (): string => `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const payload = JSON.parse(`{"a":${deep()},"b":${deep()},"items":[${deep()}]}`);
    const rules: RuleDefinition[] = [
      'a == b', 'a != b', '[a].includes(b)', 'distinct([a, b])', 'isEmpty(a)', 'len(a) == 1', 'items.includes(a)',
      'items.every(x => x == a)', 'items.map(x => x) == [a]',
    ].map((expression, i) => ({ code: `d${i}`, name: 'deep', expression, message: '{{ a }}|{{ [a] }}|{{ $ }}' }));
    rules.push({ code: 'each', name: 'deep', forEach: 'items', fieldPath: 'items[]', expression: 'false', message: '{{ $value }}' });
    const compiled = compileRuleset(rules);
    expect(compiled.errors).toEqual([]);
    expect(() => compiled.validate(payload, NOW)).not.toThrow();
    expect(compiled.validate(payload, NOW).totalRulesEvaluated).toBe(rules.length);
  });

  it('honours lowered limits (MAX_EXPRESSION_LENGTH and nesting)', () => {
    const rule = withBase({ expression: 'amount > 100 && amount < 1000' });
    expect(checkRule(rule)).toEqual([]);
    const short = checkRule(rule, { limits: { maxExpressionLength: 10 } });
    expect(short.map((e) => e.code)).toEqual(['TOO_LONG']);
    const shallow = checkRule(withBase({ expression: '((((amount)))) > 1' }), { limits: { maxNestingDepth: 2 } });
    expect(shallow.map((e) => e.code)).toContain('TOO_DEEP');
    expect(compileRuleset([rule], { limits: { maxExpressionLength: 10 } }).ruleCount).toBe(0);
  });

  it('a refused rule leaves the rest of the ruleset working', () => {
    const compiled = compileRuleset([
      withBase({ code: 'bad', expression: `constructor.constructor("globalThis.${MARK}=1")()` }),
      withBase({ code: 'good', expression: 'n > 1', fieldPath: 'n' }),
    ]);
    expect(compiled.errors.map((e) => e.ruleCode)).toEqual(['bad']);
    expect(compiled.ruleCount).toBe(1);
    expect(compiled.validate({ n: 0 }, NOW).failures.map((f) => f.ruleCode)).toEqual(['good']);
    expect(newGlobals()).toEqual([]);
  });
});

// ------------------------------------------------------------------ ReDoS

/** Patterns that backtrack catastrophically on a native engine, with an input that triggers it. */
const REDOS: Array<[string, string]> = [
  ['^(a|a)*$', `${'a'.repeat(32)}!`],
  ['(a+)+$', `${'a'.repeat(32)}!`],
  ['(a*)*b', 'a'.repeat(32)],
  ['(x+x+)+y', 'x'.repeat(32)],
  ['^(a|aa)+$', `${'a'.repeat(40)}!`],
  ['^(\\w+\\s?)*$', `${'word '.repeat(8)}!`],
  ['^(a+)\\1*$', `${'a'.repeat(32)}!`],
  ['^(?=(a+))\\1*b', 'a'.repeat(32)],
  ['(?<=a+)+b', 'a'.repeat(32)],
  ['^((?!b).)*$', `${'a'.repeat(32)}b`],
];

describe('regex policy of matches()', () => {
  const accepted: Array<[string, string]> = [];

  it.each(REDOS)('%s is refused or runs in linear time', (pattern, input) => {
    const rule = withBase({ expression: `matches(s, ${JSON.stringify(pattern)})` });
    const errors = checkRule(rule);
    if (errors.length > 0) {
      expect(['UNSAFE_PATTERN', 'INVALID_PATTERN']).toContain(errors[0].code);
      expect(errors[0].field).toBe('expression');
      expect(errors[0].line).toBeGreaterThanOrEqual(1);
      return;
    }
    accepted.push([pattern, input]);
    // A short input is safe even on a backtracking engine: check the meaning.
    const short = input.slice(-6);
    const compiled = compileRuleset([rule]);
    expect(compiled.validate({ s: short }, NOW).isValid).toBe(new RegExp(pattern).test(short));
    expect(compiled.validate({ s: 5 }, NOW).isValid).toBe(false);
  });

  it('accepted patterns finish on adversarial inputs (child process, generous bound)', () => {
    if (accepted.length === 0) return;
    const compilerUrl = new URL('../../compiler/index.ts', import.meta.url).href;
    const script = `
      import { compileRuleset } from ${JSON.stringify(compilerUrl)};
      const cases = JSON.parse(process.argv[1]);
      for (const [pattern, input] of cases) {
        const c = compileRuleset([{ code: 'r', name: 'r', expression: 'matches(s, ' + JSON.stringify(pattern) + ')' }]);
        c.validate({ s: input }, 0);
        c.validate({ s: input.repeat(4) }, 0);
        console.log(JSON.stringify(pattern));
      }`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, JSON.stringify(accepted)], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      timeout: 20_000,
      encoding: 'utf8',
    });
    const finished = child.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as string);
    const hung = accepted.map(([p]) => p).filter((p) => !finished.includes(p));
    expect(child.stderr.includes('Error') ? child.stderr : '', 'child failed').toBe('');
    expect(hung, 'patterns that did not finish within 20 s').toEqual([]);
  });
});
