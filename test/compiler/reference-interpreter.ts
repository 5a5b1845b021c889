/**
 * Reference semantics of the rule language, written straight from
 * docs/rule-language.md as a plain tree-walking interpreter
 * over acorn's AST. It shares no code with `compiler/` on purpose: the
 * differential test trusts it only because it is short enough to read
 * against the spec line by line. Clarity wins over speed everywhere.
 *
 * Left out: `matches()` (the regex engine is the compiler's business) and
 * schema rules; both throw `ReferenceUnsupported` so a generator that
 * produces them fails loudly instead of comparing garbage.
 *
 * Where docs/rule-language.md is loose, the choice made here is marked `SPEC-CHOICE`.
 */
import * as acorn from 'acorn';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { MAX_MESSAGE_LENGTH } from '../../compiler/runtime.ts';
import type { FailureRecord, RuleDefinition, ValidationResult } from '../../compiler/types.ts';

/** Thrown for constructs this reference deliberately does not model. */
export class ReferenceUnsupported extends Error {}

type Node = acorn.Node & Record<string, any>;

/** Everything an expression can see while it runs. */
export interface Scope {
  payload: unknown;
  value: unknown;
  item: unknown;
  index: unknown;
  expected: unknown;
  now: number;
  /** A decision table's `$cell` (in a cell), `$row` and `$rowIndex` (in its rule); table-reference.ts sets them. */
  cell?: unknown;
  row?: unknown;
  rowIndex?: unknown;
  /** Callback parameters, innermost last. */
  params: Array<[string, unknown]>;
}

const DAY_MS = 86_400_000;

// ---------------------------------------------------------------- values

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** 3.2: NaN and infinities are one "invalid number", represented as NaN. */
function num(n: number): number {
  return Number.isFinite(n) ? n : NaN;
}

function truthy(v: unknown): boolean {
  return Boolean(v);
}

/** 3.2: strict and deep; an invalid number equals nothing, not even itself. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (const k of ka) {
      if (!Object.hasOwn(b, k) || !deepEqual(a[k], b[k])) return false;
    }
    return true;
  }
  return false;
}

/**
 * 3.2: own properties of objects and arrays only; anything missing is
 * undefined. SPEC-CHOICE: a string exposes `length` and nothing else (JSON
 * strings are not containers), so `s[0]` is undefined.
 */
export function ownGet(obj: unknown, key: string): unknown {
  if (typeof obj === 'string') return key === 'length' ? obj.length : undefined;
  if (typeof obj !== 'object' || obj === null) return undefined;
  return Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

// ------------------------------------------------------------- functions

// SPEC-CHOICE: RFC 3339 spellings too (`t`, `z`, a space), and offsets `+02`, `+0200`, `+02:00`.
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** 3.4 `date()`: epoch ms of an ISO-8601 date or date-time; no offset means UTC. */
export function isoToMs(s: unknown): number | undefined {
  if (typeof s !== 'string') return undefined;
  const m = ISO_DATE.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', zone = 'Z'] = m;
  const year = Number(y), month = Number(mo), day = Number(d);
  const hour = Number(h), minute = Number(mi), second = Number(sec);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  const ms = frac === '' ? 0 : Math.floor(Number(`0${frac}`) * 1000);
  let offsetMin = 0;
  if (zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const oh = Number(zone.slice(1, 3)), om = Number(zone.slice(3).replace(':', '') || '0');
    if (oh > 23 || om > 59) return undefined;
    offsetMin = sign * (oh * 60 + om);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, ms);
  return utc.getTime() - offsetMin * 60_000;
}

/** The ECMAScript time range: epoch milliseconds beyond it are no instant at all. */
const MAX_EPOCH_MS = 8.64e15;

/**
 * SPEC-CHOICE: date functions take ISO strings or epoch milliseconds (what
 * `date()`/`now()` return); a number outside the time range is not a date.
 */
function toMs(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && Math.abs(v) <= MAX_EPOCH_MS ? v : undefined;
  return isoToMs(v);
}

function formatTest(name: 'email' | 'uuid' | 'uri' | 'date' | 'date-time', s: unknown): boolean {
  if (typeof s !== 'string') return false;
  const f = fullFormats[name] as unknown;
  if (f instanceof RegExp) return f.test(s);
  if (typeof f === 'function') return Boolean(f(s));
  return Boolean((f as { validate: (x: string) => boolean }).validate(s));
}

/**
 * SPEC-CHOICE: `round` rounds half away from zero on the number as it is
 * written (its shortest decimal text), so `round(1.005, 2)` is 1.01 and
 * `round(-2.5)` is -3, as a spreadsheet user expects. Done on decimal
 * digits, never on binary multiplication.
 */
function roundDecimal(x: number, digits: number): number {
  if (!Number.isFinite(x)) return NaN;
  const [mantissa, exponent = '0'] = String(Math.abs(x)).split('e');
  const point = mantissa.indexOf('.');
  const allDigits = mantissa.replace('.', '');
  const intLength = (point < 0 ? mantissa.length : point) + Number(exponent);
  const keep = intLength + digits;
  if (keep >= allDigits.length) return x;
  const sign = x < 0 ? -1 : 1;
  if (keep < 0) return sign * 0;
  const kept = BigInt(allDigits.slice(0, keep) || '0') + (allDigits[keep] >= '5' ? 1n : 0n);
  return sign * Number(`${kept}e${intLength - keep}`);
}

function numbersOf(args: unknown[]): number[] | undefined {
  const list = args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
  return list.every((x) => typeof x === 'number') ? (list) : undefined;
}

type Fn = (args: unknown[], scope: Scope) => unknown;

/** 3.4, one entry per listed function. */
const FUNCTIONS: Record<string, Fn> = {
  exists: ([x]) => x !== undefined && x !== null,
  isEmpty: ([x]) =>
    x === undefined || x === null || x === '' ||
    (Array.isArray(x) && x.length === 0) ||
    (isPlainObject(x) && Object.keys(x).length === 0),
  len: ([x]) => {
    if (typeof x === 'string') return Array.from(x).length;
    if (Array.isArray(x)) return x.length;
    if (isPlainObject(x)) return Object.keys(x).length;
    return undefined;
  },
  isString: ([x]) => typeof x === 'string',
  isNumber: ([x]) => typeof x === 'number' && Number.isFinite(x),
  isInteger: ([x]) => Number.isInteger(x),
  isBoolean: ([x]) => typeof x === 'boolean',
  isArray: ([x]) => Array.isArray(x),
  isObject: ([x]) => isPlainObject(x),
  // SPEC-CHOICE: a non-array gives undefined; a non-number element an invalid number.
  sum: ([x]) => {
    if (!Array.isArray(x)) return undefined;
    let total = 0;
    for (const e of x) {
      if (typeof e !== 'number') return NaN;
      total += e;
    }
    return num(total);
  },
  avg: ([x]) => {
    if (!Array.isArray(x) || x.length === 0) return undefined;
    let total = 0;
    for (const e of x) {
      if (typeof e !== 'number') return NaN;
      total += e;
    }
    return num(total / x.length);
  },
  min: (args) => {
    const list = numbersOf(args);
    return list === undefined || list.length === 0 ? NaN : num(Math.min(...list));
  },
  max: (args) => {
    const list = numbersOf(args);
    return list === undefined || list.length === 0 ? NaN : num(Math.max(...list));
  },
  // SPEC-CHOICE: like the arithmetic operators, a non-number gives an invalid number.
  abs: ([x]) => (typeof x === 'number' ? num(Math.abs(x)) : NaN),
  floor: ([x]) => (typeof x === 'number' ? num(Math.floor(x)) : NaN),
  ceil: ([x]) => (typeof x === 'number' ? num(Math.ceil(x)) : NaN),
  round: ([x, digits = 0]) => {
    if (typeof x !== 'number' || typeof digits !== 'number') return NaN;
    if (!Number.isInteger(digits) || digits < 0 || digits > 15) return NaN;
    return num(roundDecimal(x, digits));
  },
  lower: ([x]) => (typeof x === 'string' ? x.toLowerCase() : undefined),
  upper: ([x]) => (typeof x === 'string' ? x.toUpperCase() : undefined),
  trim: ([x]) => (typeof x === 'string' ? x.trim() : undefined),
  matches: () => {
    throw new ReferenceUnsupported('matches() is not modelled by the reference');
  },
  isEmail: ([x]) => formatTest('email', x),
  isUuid: ([x]) => formatTest('uuid', x),
  isUri: ([x]) => formatTest('uri', x),
  isDate: ([x]) => formatTest('date', x) || formatTest('date-time', x),
  date: ([x]) => isoToMs(x),
  now: (_args, scope) => scope.now,
  // SPEC-CHOICE: "whole UTC days" = difference of UTC calendar dates.
  daysBetween: ([a, b]) => {
    const ma = toMs(a), mb = toMs(b);
    if (ma === undefined || mb === undefined) return undefined;
    return Math.floor(mb / DAY_MS) - Math.floor(ma / DAY_MS);
  },
  age: ([dob], scope) => {
    const ms = toMs(dob);
    if (ms === undefined) return undefined;
    const b = new Date(ms), n = new Date(scope.now);
    let years = n.getUTCFullYear() - b.getUTCFullYear();
    const beforeBirthday = n.getUTCMonth() < b.getUTCMonth() ||
      (n.getUTCMonth() === b.getUTCMonth() && n.getUTCDate() < b.getUTCDate());
    if (beforeBirthday) years -= 1;
    return years;
  },
  // SPEC-CHOICE: a non-array gives undefined.
  distinct: ([x]) => {
    if (!Array.isArray(x)) return undefined;
    for (let i = 0; i < x.length; i++) {
      for (let j = i + 1; j < x.length; j++) if (deepEqual(x[i], x[j])) return false;
    }
    return true;
  },
  // Three numbers or three strings compare; any other mix is false, as `<=` is.
  between: ([x, low, high]) => {
    const same = [x, low, high].every((v) => typeof v === 'number') || [x, low, high].every((v) => typeof v === 'string');
    return same && (low as number) <= (x as number) && (x as number) <= (high as number);
  },
};

/** Names of 3.4, for generators and tests. */
export const FUNCTION_NAMES: readonly string[] = Object.keys(FUNCTIONS);

// --------------------------------------------------------------- methods

const STRING_METHODS: Record<string, (s: string, args: unknown[]) => unknown> = {
  // SPEC-CHOICE: a non-string argument is "the wrong type" and gives undefined.
  startsWith: (s, [a]) => (typeof a === 'string' ? s.startsWith(a) : undefined),
  endsWith: (s, [a]) => (typeof a === 'string' ? s.endsWith(a) : undefined),
  includes: (s, [a]) => (typeof a === 'string' ? s.includes(a) : undefined),
  toLowerCase: (s) => s.toLowerCase(),
  toUpperCase: (s) => s.toUpperCase(),
  trim: (s) => s.trim(),
};

const CALLBACK_METHODS = new Set(['every', 'some', 'filter', 'map', 'find']);

function callMethod(node: Node, scope: Scope): unknown {
  const callee = node.callee as Node;
  const receiver = evaluate(callee.object, scope);
  const name = propertyKey(callee);
  if (typeof receiver === 'string') {
    const m = STRING_METHODS[name];
    if (!m) return undefined;
    return m(receiver, node.arguments.map((a: Node) => evaluate(a, scope)));
  }
  if (!Array.isArray(receiver)) return undefined;
  if (name === 'includes') {
    const needle = evaluate(node.arguments[0], scope);
    return receiver.some((e) => deepEqual(e, needle));
  }
  if (!CALLBACK_METHODS.has(name)) return undefined;
  const arrow = node.arguments[0] as Node;
  const param = (arrow.params[0] as Node).name as string;
  const call = (element: unknown): unknown =>
    evaluate(arrow.body, { ...scope, params: [...scope.params, [param, element]] });
  switch (name) {
    case 'every': return receiver.every((e) => truthy(call(e)));
    case 'some': return receiver.some((e) => truthy(call(e)));
    case 'filter': return receiver.filter((e) => truthy(call(e)));
    case 'map': return receiver.map((e) => call(e));
    default: return receiver.find((e) => truthy(call(e)));
  }
}

// ----------------------------------------------------------- expressions

function propertyKey(member: Node): string {
  const p = member.property as Node;
  if (!member.computed) return p.name as string;
  if (p.type === 'Literal') return String(p.value);
  throw new ReferenceUnsupported('computed key that is not a literal');
}

function lookupName(name: string, scope: Scope): unknown {
  for (let i = scope.params.length - 1; i >= 0; i--) {
    if (scope.params[i][0] === name) return scope.params[i][1];
  }
  switch (name) {
    case '$': return scope.payload;
    case '$value': return scope.value;
    case '$item': return scope.item;
    case '$index': return scope.index;
    case '$expected': return scope.expected;
    case '$cell': return scope.cell;
    case '$row': return scope.row;
    case '$rowIndex': return scope.rowIndex;
    default: return ownGet(scope.payload, name);
  }
}

function both<T extends 'number' | 'string'>(a: unknown, b: unknown, t: T): boolean {
  return typeof a === t && typeof b === t;
}

function binary(op: string, a: any, b: any): unknown {
  switch (op) {
    case '==': case '===': return deepEqual(a, b);
    case '!=': case '!==': return !deepEqual(a, b);
    case '<': return (both(a, b, 'number') || both(a, b, 'string')) && a < b;
    case '<=': return (both(a, b, 'number') || both(a, b, 'string')) && a <= b;
    case '>': return (both(a, b, 'number') || both(a, b, 'string')) && a > b;
    case '>=': return (both(a, b, 'number') || both(a, b, 'string')) && a >= b;
    case '+':
      if (both(a, b, 'string')) return a + b;
      return both(a, b, 'number') ? num(a + b) : NaN;
  }
  if (!both(a, b, 'number')) return NaN;
  switch (op) {
    case '-': return num(a - b);
    case '*': return num(a * b);
    case '/': return num(a / b);
    case '%': return num(a % b);
    case '**': return num(a ** b);
  }
  throw new ReferenceUnsupported(`operator ${op}`);
}

/** Evaluates one AST node of 3.1-3.4. */
export function evaluate(node: Node, scope: Scope): unknown {
  switch (node.type) {
    case 'Literal':
      if (node.regex || node.bigint !== undefined) throw new ReferenceUnsupported('regex or BigInt literal');
      return node.value;
    case 'Identifier':
      return lookupName(node.name, scope);
    case 'ArrayExpression':
      return node.elements.map((e: Node) => evaluate(e, scope));
    case 'MemberExpression':
      return ownGet(evaluate(node.object, scope), propertyKey(node));
    case 'UnaryExpression': {
      const v = evaluate(node.argument, scope);
      if (node.operator === '!') return !truthy(v);
      if (typeof v !== 'number') return NaN;
      return node.operator === '-' ? -v : v;
    }
    case 'BinaryExpression':
      return binary(node.operator, evaluate(node.left, scope), evaluate(node.right, scope));
    case 'LogicalExpression': {
      const left = evaluate(node.left, scope);
      if (node.operator === '&&') return truthy(left) ? evaluate(node.right, scope) : left;
      if (node.operator === '||') return truthy(left) ? left : evaluate(node.right, scope);
      return left === undefined || left === null ? evaluate(node.right, scope) : left;
    }
    case 'ConditionalExpression':
      return truthy(evaluate(node.test, scope)) ? evaluate(node.consequent, scope) : evaluate(node.alternate, scope);
    case 'CallExpression': {
      const callee = node.callee as Node;
      if (callee.type === 'MemberExpression') return callMethod(node, scope);
      const fn = FUNCTIONS[callee.name as string];
      if (!fn) throw new ReferenceUnsupported(`call of ${callee.name}`);
      return fn(node.arguments.map((a: Node) => evaluate(a, scope)), scope);
    }
  }
  throw new ReferenceUnsupported(`node ${node.type}`);
}

/** Parses one expression of the language (no checks: the reference trusts its input). */
export function parseExpression(src: string): Node {
  const program = acorn.parse(src, { ecmaVersion: 2022 }) as Node;
  if (program.body.length !== 1 || program.body[0].type !== 'ExpressionStatement') {
    throw new ReferenceUnsupported('not exactly one expression');
  }
  return program.body[0].expression as Node;
}

/** Evaluates an expression's source text; `$value` defaults to the payload root, as in a rule without fieldPath. */
export function evaluateSource(src: string, scope: Partial<Scope> = {}): unknown {
  const payload = scope.payload ?? {};
  return evaluate(parseExpression(src), {
    payload, value: payload, item: undefined, index: undefined,
    expected: null, now: 0, params: [], ...scope,
  });
}

// ------------------------------------------------------------- templates

/** 3.6: strings verbatim, numbers and booleans as JS prints them, arrays/objects as JSON, the rest "", cut as the service cuts them. */
export function renderValue(v: unknown): string {
  if (typeof v === 'string') return cut(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return '';
  return cut(JSON.stringify(v));
}

/** Messages and placeholders longer than MAX_MESSAGE_LENGTH end in an ellipsis at that length. */
export function cut(s: string): string {
  return s.length <= MAX_MESSAGE_LENGTH ? s : `${s.slice(0, MAX_MESSAGE_LENGTH - 1)}…`;
}

/** Renders `{{ expression }}` placeholders; a placeholder ends at the first `}}`. */
export function renderTemplate(template: string, scope: Scope): string {
  let out = '';
  let rest = template;
  for (;;) {
    const open = rest.indexOf('{{');
    if (open < 0) return out + rest;
    const close = rest.indexOf('}}', open + 2);
    if (close < 0) throw new ReferenceUnsupported('unterminated placeholder');
    out += rest.slice(0, open) + renderValue(evaluate(parseExpression(rest.slice(open + 2, close)), scope));
    rest = rest.slice(close + 2);
  }
}

// ----------------------------------------------------------------- paths

/** One segment of a 2.4 path; `raw` is how it was written. */
export interface PathSegment {
  kind: 'key' | 'index' | 'each';
  key: string;
  raw: string;
}

const PATH_TOKEN = /^(?:\.?([A-Za-z_$][A-Za-z0-9_$]*)|\[(\d+)\]|\[\]|\[("(?:[^"\\]|\\.)*")\])/;

/**
 * Splits a 2.4 path into segments. SPEC-CHOICE: a leading `$` followed by
 * `.` or `[` (as in `$["first-name"]`) is the root and adds no segment.
 */
export function parsePath(path: string): PathSegment[] {
  const segments: PathSegment[] = [];
  let rest = path;
  if (rest.startsWith('$[') || rest.startsWith('$.')) rest = rest.slice(rest[1] === '.' ? 2 : 1);
  while (rest.length > 0) {
    const m = PATH_TOKEN.exec(rest);
    if (!m) throw new ReferenceUnsupported(`bad path ${path}`);
    const raw = m[0];
    if (m[1] !== undefined) segments.push({ kind: 'key', key: m[1], raw });
    else if (m[2] !== undefined) segments.push({ kind: 'index', key: String(Number(m[2])), raw });
    else if (m[3] !== undefined) segments.push({ kind: 'key', key: JSON.parse(m[3]) as string, raw });
    else segments.push({ kind: 'each', key: '', raw });
    rest = rest.slice(raw.length);
  }
  return segments;
}

export function resolve(root: unknown, segments: PathSegment[], index: number): unknown {
  let v = root;
  for (const s of segments) v = ownGet(v, s.kind === 'each' ? String(index) : s.key);
  return v;
}

/** The reported form: the path as written, `[]` replaced by the element index. */
function reportPath(path: string, segments: PathSegment[], index: number): string {
  const prefix = path.startsWith('$[') ? '$' : path.startsWith('$.') ? '$.' : '';
  return prefix + segments.map((s) => (s.kind === 'each' ? `[${index}]` : s.raw)).join('');
}

// --------------------------------------------------- expected-value inference

function literalValue(node: Node): { ok: boolean; value?: unknown } {
  if (node.type === 'Literal' && !node.regex && node.bigint === undefined) return { ok: true, value: node.value };
  if (node.type === 'UnaryExpression' && node.operator === '-' &&
      node.argument.type === 'Literal' && typeof node.argument.value === 'number') {
    return { ok: true, value: -node.argument.value };
  }
  if (node.type === 'ArrayExpression') {
    const values: unknown[] = [];
    for (const e of node.elements as Node[]) {
      const l = e === null ? { ok: false } : literalValue(e);
      if (!l.ok) return { ok: false };
      values.push(l.value);
    }
    return { ok: true, value: values };
  }
  return { ok: false };
}

/** Segments of a plain path expression (`a.b[0]["c"]`, `$item.x`), or undefined. */
function expressionPath(node: Node): { root: string; keys: string[] } | undefined {
  if (node.type === 'Identifier') return { root: node.name, keys: [] };
  if (node.type !== 'MemberExpression') return undefined;
  if (node.computed && node.property.type !== 'Literal') return undefined;
  const inner = expressionPath(node.object);
  return inner && { root: inner.root, keys: [...inner.keys, propertyKey(node)] };
}

export function isSubject(node: Node, rule: RuleDefinition): boolean {
  const p = expressionPath(node);
  if (!p) return false;
  if (p.root === '$value' && p.keys.length === 0) return true;
  if (!rule.fieldPath) return false;
  const field = parsePath(rule.fieldPath);
  const keysOf = (segs: PathSegment[]) => segs.map((s) => s.key);
  const each = field.findIndex((s) => s.kind === 'each');
  if (rule.forEach && each >= 0) {
    if (p.root !== '$item') return false;
    const tail = keysOf(field.slice(each + 1));
    return tail.length === p.keys.length && tail.every((k, i) => k === p.keys[i]);
  }
  // A forEach rule's fieldPath outside the array is a path like any other: "the path equal to the rule's fieldPath".
  if (field.some((s) => s.kind === 'each')) return false;
  // SPEC-CHOICE: `$.a`, `$["a"]` and `a` are one path.
  if (p.root.startsWith('$') && p.root !== '$') return false;
  const want = keysOf(field);
  const got = p.root === '$' ? p.keys : [p.root, ...p.keys];
  return want.length === got.length && want.every((k, i) => k === got[i]);
}

/** SPEC-CHOICE: `===`/`!==` are the same operators as `==`/`!=` in this language, so they infer too. */
const INFERRING_OPERATORS = new Set(['<', '<=', '>', '>=', '==', '!=', '===', '!==']);

/** 3.6: the expected value implied by `F op L`, `L op F` or `[literals].includes(F)`, else null. */
export function inferExpected(rule: RuleDefinition): unknown {
  if (!rule.expression) return null;
  const e = parseExpression(rule.expression);
  if (e.type === 'BinaryExpression' && INFERRING_OPERATORS.has(e.operator)) {
    const r = literalValue(e.right), l = literalValue(e.left);
    if (r.ok && isSubject(e.left, rule)) return r.value;
    if (l.ok && isSubject(e.right, rule)) return l.value;
  }
  if (e.type === 'CallExpression' && e.callee.type === 'MemberExpression' &&
      propertyKey(e.callee) === 'includes' && e.arguments.length === 1) {
    const list = literalValue(e.callee.object);
    if (list.ok && Array.isArray(list.value) && isSubject(e.arguments[0], rule)) return list.value;
  }
  return null;
}

// ----------------------------------------------------------------- rules

interface PendingFailure {
  priority: number;
  code: string;
  element: number;
  record: FailureRecord;
}

function evaluateRule(rule: RuleDefinition, payload: unknown, now: number, out: PendingFailure[]): boolean {
  const given = rule.expectedValue;
  const expected = given === undefined || given === null ? inferExpected(rule) : given;
  const field = rule.fieldPath ? parsePath(rule.fieldPath) : undefined;
  const when = rule.when === undefined ? undefined : parseExpression(rule.when);
  const expression = rule.expression === undefined ? undefined : parseExpression(rule.expression);

  const valueAt = (element: number): unknown => (field ? resolve(payload, field, element) : payload);
  const scopeFor = (item: unknown, index: number | undefined): Scope =>
    ({ payload, value: valueAt(index ?? 0), item, index, expected, now, params: [] });
  const skipped = (scope: Scope): boolean => {
    if (when && evaluate(when, scope) !== true) return true;
    return field !== undefined && (scope.value === undefined || scope.value === null) && !rule.required;
  };

  const judge = (scope: Scope, element: number): void => {
    const value = scope.value;
    const present = value !== undefined && value !== null;
    const passed = field && !present ? false : expression ? evaluate(expression, scope) === true : true;
    if (passed) return;
    out.push({
      priority: rule.priority ?? 0,
      code: rule.code,
      element,
      record: {
        ruleCode: rule.code,
        ruleName: rule.name,
        severity: (rule.severity ?? 'Error'),
        message: rule.message === undefined ? `${rule.name} failed` : cut(renderTemplate(rule.message, scope)),
        errorCode: rule.errorCode ?? rule.code,
        fieldPath: field && rule.fieldPath ? reportPath(rule.fieldPath, field, element) : '',
        actualValue: field && present ? value : null,
        expectedValue: expected === undefined ? null : expected,
      },
    });
  };

  if (rule.forEach !== undefined) {
    const target = resolve(payload, parsePath(rule.forEach), 0);
    if (!Array.isArray(target)) return false;
    // A fieldPath outside the array is one value for every element: missing and not
    // required, the rule is skipped as a whole and not counted (docs/rule-language.md).
    const shared = field !== undefined && !field.some((s) => s.kind === 'each');
    if (shared && !rule.required && (valueAt(0) === undefined || valueAt(0) === null)) return false;
    target.forEach((item, i) => {
      const scope = scopeFor(item, i);
      if (!skipped(scope)) judge(scope, i);
    });
    return true;
  }
  const scope = scopeFor(undefined, undefined);
  if (skipped(scope)) return false;
  judge(scope, 0);
  return true;
}

/**
 * Reference result of a whole ruleset (2.1-2.4): failures by ascending
 * priority, then code (UTF-16 order), then element index.
 */
export function referenceValidate(rules: RuleDefinition[], payload: unknown, now: number): ValidationResult {
  const pending: PendingFailure[] = [];
  let evaluated = 0;
  for (const rule of rules) {
    if (rule.enabled === false) continue;
    if (rule.schema !== undefined) throw new ReferenceUnsupported('schema rules are not modelled');
    if (evaluateRule(rule, payload, now, pending)) evaluated += 1;
  }
  pending.sort((a, b) =>
    a.priority - b.priority || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0) || a.element - b.element);
  const failures = pending.map((p) => p.record);
  return { isValid: failures.length === 0, totalRulesEvaluated: evaluated, failures };
}
