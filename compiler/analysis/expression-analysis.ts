/**
 * The typed walk of one expression: acorn's tree in, what is known of each
 * value out (its kinds, whether it reads the payload, its constant value,
 * the payload path it is read from), with warnings for paths the payload
 * schema does not declare, bare names used as values, `$item` without
 * forEach, and operations that cannot succeed for the kinds involved.
 *
 * Constants are folded with the run-time helpers, so a folded value is what
 * a validator would compute. The walk reads only what the allow-list
 * admits; anything else is "nothing known", so an expression that does not
 * compile gives no false warning. Its depth is bounded like the checker's
 * (four times the nesting limit), and member chains are walked in a loop.
 */
import type * as acorn from 'acorn';
import { CALLBACK_METHODS, DOLLAR_NAMES, FUNCTIONS, VALUE_METHODS } from '../expression/catalog.ts';
import type { Position, PositionMap } from '../expression/errors.ts';
import { parseSource } from '../expression/parse.ts';
import { compilePattern } from '../regex/index.ts';
import { runtime } from '../runtime.ts';
import type { CompilerLimits } from '../types.ts';
import type { PathSegment } from '../paths.ts';
import { CALLBACK_RESULTS, FUNCTION_SIGNATURES, METHOD_SIGNATURES, lengthTypes, type Otherwise } from './function-types.ts';
import { UNKNOWN, constant, type Place, type RuleScope, type Value } from './rule-scope.ts';
import {
  ARRAY, BOOLEAN, FIELD_VALUE, INVALID, JSON_VALUE, NULL, NUMBER, OBJECT, STRING, UNDEFINED,
  canBeAdded, canBeEqual, canBeOrdered, describeTypes, onlyBooleans, type TypeSet,
} from './value-types.ts';
import type { WarningPath, WarningSink } from './warnings.ts';

/** One expression to analyse: the field it belongs to, its text, and where that text sits in the field. */
export interface ExpressionText {
  path: WarningPath;
  source: string;
  map: PositionMap;
}

/** A sub-expression used as a condition (operand of `!`, `&&`, `||`, test of `?:`). */
export interface Condition {
  node: acorn.Node;
  value: Value;
}

export interface ExpressionAnalysis {
  node: acorn.Expression;
  value: Value;
  /** Conditions that are not literals, in the order met. */
  conditions: Condition[];
  /** The node's text as messages quote it. */
  quote(node: acorn.Node): string;
  position(node: acorn.Node): Position;
}

/**
 * Analyses one expression; undefined when it does not parse or is too deep
 * to walk (compile errors say why).
 *
 * @example
 * analyzeExpression({ path: 'expression', source: '1 > 0', map: identity }, scope, sink, DEFAULT_LIMITS);
 * // { value: { types: BOOLEAN, depends: false, known: { value: true } }, ... }
 */
export function analyzeExpression(
  text: ExpressionText,
  scope: RuleScope,
  sink: WarningSink,
  limits: CompilerLimits,
): ExpressionAnalysis | undefined {
  const parsed = parseSource(text.source, limits, text.map, text.path);
  if (!parsed.ok) return undefined;
  const walk = new Walk(text, scope, sink, limits.maxNestingDepth * 4);
  try {
    const value = walk.value(parsed.expression);
    return {
      node: parsed.expression,
      value,
      conditions: walk.conditions,
      quote: (node) => walk.quote(node),
      position: (node) => walk.position(node),
    };
  } catch (err) {
    if (err instanceof TooDeep || err instanceof RangeError) return undefined;
    throw err;
  }
}

/** Thrown when the walk goes deeper than the checker allows. */
class TooDeep extends Error {}

const QUOTE_LENGTH = 60;
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PROPERTY_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** A name written in capitals (`ACTIVE`, `NOT_FOUND`) reads as a value, not a field. */
const CAPITALS = /^[A-Z][A-Z0-9_]*$/;
/** Bare names people write for values the language spells differently. */
const NOT_LITERALS = new Set(['undefined', 'NaN', 'Infinity']);

const EQUALITY = new Set(['==', '===', '!=', '!==']);
const ORDERING: Readonly<Record<string, (a: unknown, b: unknown) => boolean>> = {
  '<': runtime.lt, '<=': runtime.le, '>': runtime.gt, '>=': runtime.ge,
};
const ARITHMETIC: Readonly<Record<string, (a: unknown, b: unknown) => unknown>> = {
  '-': runtime.sub, '*': runtime.mul, '/': runtime.div, '%': runtime.mod, '**': runtime.pow,
};

function truthy(value: unknown): boolean {
  return Boolean(value);
}

function segmentOf(key: string | number): PathSegment {
  return typeof key === 'number' ? { index: key } : { key };
}

/** `a.b` / `a["b"]` / `a[0]` keys as the checker reads them; undefined for what it refuses. */
function memberKey(n: acorn.MemberExpression): string | number | undefined {
  const property = n.property;
  if (!n.computed) return property.type === 'Identifier' ? property.name : undefined;
  if (property.type !== 'Literal' || property.regex !== undefined || property.bigint !== undefined) return undefined;
  const value = property.value;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return Number.isSafeInteger(value) && value >= 0 ? value : String(value);
  return undefined;
}

/** A path written after `root` (`$item`, `i`, or nothing for a bare payload name). */
function renderPath(root: string, keys: readonly (string | number)[]): string {
  let out = root;
  keys.forEach((key, i) => {
    if (typeof key === 'number') out += `${out === '' ? '$' : ''}[${key}]`;
    else if (i === 0 && root === '') out += PLAIN_NAME.test(key) && FUNCTIONS[key] === undefined ? key : `$[${JSON.stringify(key)}]`;
    else out += PROPERTY_NAME.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  });
  return out;
}

const DECIMAL = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;

/** The number a string literal spells in decimal (`"5"`, `"-1.5"`), if any. */
function numberIn(text: string): number | undefined {
  const n = DECIMAL.test(text) ? Number(text) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

class Walk {
  readonly conditions: Condition[] = [];
  readonly #text: ExpressionText;
  readonly #scope: RuleScope;
  readonly #sink: WarningSink;
  readonly #maxFrames: number;
  readonly #params: { name: string; value: Value }[] = [];
  #frames = 0;

  constructor(text: ExpressionText, scope: RuleScope, sink: WarningSink, maxFrames: number) {
    this.#text = text;
    this.#scope = scope;
    this.#sink = sink;
    this.#maxFrames = maxFrames;
  }

  /** `slot`: the node is compared with `==`/`!=` or listed for `.includes`, where a bare name may be meant as text. */
  value(node: acorn.Node, slot = false): Value {
    if (++this.#frames > this.#maxFrames) throw new TooDeep();
    const value = this.node(node as acorn.Expression, slot);
    this.#frames--;
    return value;
  }

  position(node: acorn.Node): Position {
    const loc = node.loc?.start;
    return this.#text.map(loc === undefined ? { line: 1, column: node.start + 1 } : { line: loc.line, column: loc.column + 1 });
  }

  quote(node: acorn.Node): string {
    // A multi-line expression is quoted on one line; spaces inside it (and inside strings) stay as written.
    const text = this.#text.source.slice(node.start, node.end).replace(/[ \t]*[\r\n\u2028\u2029]+\s*/g, ' ');
    return text.length <= QUOTE_LENGTH ? text : `${text.slice(0, QUOTE_LENGTH - 1)}…`;
  }

  private node(n: acorn.Expression, slot: boolean): Value {
    switch (n.type) {
      case 'Literal':
        return n.regex !== undefined || n.bigint !== undefined ? UNKNOWN : constant(n.value);
      case 'Identifier':
        return this.identifier(n, slot);
      case 'MemberExpression':
        return this.member(n);
      case 'ArrayExpression':
        return this.array(n, false);
      case 'UnaryExpression':
        return this.unary(n);
      case 'BinaryExpression':
        return this.binary(n);
      case 'LogicalExpression':
        return this.logical(n);
      case 'ConditionalExpression':
        return this.conditional(n);
      case 'CallExpression':
        return this.call(n);
      default:
        return UNKNOWN;
    }
  }

  private condition(node: acorn.Node, value: Value): void {
    if (node.type !== 'Literal') this.conditions.push({ node, value });
  }

  // ---- names and paths ----------------------------------------------------

  /** A payload field named by a bare identifier (not a `$`-name, parameter or function). */
  private isPayloadName(name: string): boolean {
    return !name.startsWith('$') && FUNCTIONS[name] === undefined && !this.#params.some((p) => p.name === name);
  }

  private identifier(n: acorn.Identifier, slot: boolean): Value {
    const name = n.name;
    if (name.startsWith('$')) return this.dollar(n);
    for (let i = this.#params.length - 1; i >= 0; i--) if (this.#params[i].name === name) return this.#params[i].value;
    if (FUNCTIONS[name] !== undefined) return UNKNOWN;
    if (slot && this.bareValue(n)) return UNKNOWN;
    return this.path(n, this.#scope.payload, '', [name]);
  }

  private dollar(n: acorn.Identifier): Value {
    const scope = this.#scope;
    switch (DOLLAR_NAMES[n.name]) {
      case 'payload':
        return scope.payload;
      case 'value':
        return scope.value;
      case 'expected':
        return scope.expected;
      case 'item':
        return scope.item ?? this.noForEach(n);
      case 'index':
        return scope.index ?? this.noForEach(n);
      default:
        return UNKNOWN;
    }
  }

  private noForEach(n: acorn.Identifier): Value {
    this.#sink.add('NO_FOREACH', this.#text.path, `\`${n.name}\` is always undefined: the rule has no forEach`, this.position(n));
    return UNKNOWN;
  }

  /**
   * A bare name compared with `==` or listed for `.includes`: when the
   * payload schema does not declare it, it is most likely a value written
   * without quotes, or a misspelled field when a declared one is near.
   * True when it was reported.
   */
  private bareValue(n: acorn.Identifier): boolean {
    const places = this.#scope.places;
    if (places.schema === undefined || places.at([{ key: n.name }]).lookup.status !== 'undeclared') return false;
    const name = n.name;
    const near = CAPITALS.test(name) || NOT_LITERALS.has(name) ? undefined : places.closestTopLevelKey(name);
    if (near !== undefined) return false;
    if (NOT_LITERALS.has(name)) {
      this.#sink.add(
        'BARE_NAME',
        this.#text.path,
        `\`${name}\` reads a payload field that the payload schema does not declare: the language has no \`${name}\`${name === 'undefined' ? '; test presence with exists()' : ''}`,
        this.position(n),
      );
      return true;
    }
    const quoted = JSON.stringify(name);
    this.#sink.add(
      'BARE_NAME',
      this.#text.path,
      `\`${name}\` reads a payload field that the payload schema does not declare; to compare with the text, quote it: ${quoted}`,
      this.position(n),
      quoted,
    );
    return true;
  }

  private member(n: acorn.MemberExpression): Value {
    const keys: (string | number)[] = [];
    let base: acorn.Node = n;
    // Member chains are paths: walked in a loop, however long.
    while (base.type === 'MemberExpression') {
      const m = base as acorn.MemberExpression;
      if (m.optional || m.object.type === 'Super') return UNKNOWN;
      const key = memberKey(m);
      if (key === undefined) return UNKNOWN;
      keys.push(key);
      base = m.object;
    }
    keys.reverse();
    if (base.type === 'Identifier' && this.isPayloadName((base as acorn.Identifier).name)) {
      return this.path(n, this.#scope.payload, '', [(base as acorn.Identifier).name, ...keys]);
    }
    return this.path(n, this.value(base), this.#text.source.slice(base.start, base.end), keys);
  }

  /**
   * Reads `keys` from `start`, written `root` + keys at `node`. A key the
   * payload schema does not declare is reported once for the whole path,
   * with the nearest declared path as a suggestion.
   */
  private path(node: acorn.Node, start: Value, root: string, keys: readonly (string | number)[]): Value {
    let current = start;
    /** For each key, the index of its segment in the place's path (-1: not a payload path segment). */
    const segmentIndex: number[] = [];
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const before = current;
      current = this.read(before, key);
      segmentIndex.push(current.place !== undefined && current.place !== before.place && before.place !== undefined
        ? current.place.segments.length - 1
        : -1);
      const place = current.place;
      if (place !== undefined && place.lookup.status === 'undeclared') {
        this.unknownField(node, root, keys, i, place, segmentIndex);
        return UNKNOWN;
      }
    }
    return current;
  }

  private read(v: Value, key: string | number): Value {
    if (v.known !== undefined) {
      return constant(key === 'length' ? runtime.length(v.known.value) : runtime.get(v.known.value, key));
    }
    if (key === 'length' && (v.types & (STRING | ARRAY)) !== 0) return { types: lengthTypes(v.types), depends: v.depends };
    if (v.place !== undefined) {
      const place = this.#scope.places.at([...v.place.segments, segmentOf(key)]);
      return { types: place.lookup.types, depends: v.depends, place };
    }
    if (v.elements !== undefined && typeof key === 'number') {
      return { types: v.elements.lookup.types, depends: v.depends, place: v.elements };
    }
    return { types: (v.types & (OBJECT | ARRAY)) === 0 ? UNDEFINED : FIELD_VALUE, depends: v.depends };
  }

  private unknownField(
    node: acorn.Node,
    root: string,
    keys: readonly (string | number)[],
    failed: number,
    place: Place,
    segmentIndex: readonly number[],
  ): void {
    const places = this.#scope.places;
    const lookup = place.lookup;
    if (places.schema === undefined || lookup.status !== 'undeclared') return;
    const written = this.quote(node);
    if (lookup.parentTypes !== undefined) {
      const parent = renderPath(root, keys.slice(0, failed)) || '$';
      this.#sink.add(
        'UNKNOWN_FIELD',
        this.#text.path,
        `\`${written}\` is not in the payload schema: \`${parent}\` is declared ${describeTypes(lookup.parentTypes)}`,
        this.position(node),
      );
      return;
    }
    // The whole path as segments, the keys after the failed one included, to correct it as written.
    const full = [...place.segments, ...keys.slice(failed + 1).map(segmentOf)];
    const indexes = [...segmentIndex, ...keys.slice(failed + 1).map((_, j) => place.segments.length + j)];
    const first = indexes.find((x) => x >= 0) ?? full.length;
    const corrected = places.closestPath(full, first);
    let suggestion: string | undefined;
    if (corrected !== undefined) {
      const fixed = keys.map((key, i) => {
        const segment = indexes[i] >= 0 ? corrected[indexes[i]] : undefined;
        return segment !== undefined && 'key' in segment ? segment.key : key;
      });
      suggestion = renderPath(root, fixed);
    }
    this.#sink.add(
      'UNKNOWN_FIELD',
      this.#text.path,
      `\`${written}\` is not in the payload schema${suggestion === undefined ? '' : `: did you mean \`${suggestion}\`?`}`,
      this.position(node),
      suggestion,
    );
  }

  // ---- operators ----------------------------------------------------------

  /** `slot`: elements are listed for `.includes` (bare names there may be meant as text). */
  private array(n: acorn.ArrayExpression, slot: boolean): Value {
    const items: Value[] = [];
    for (const element of n.elements) {
      if (element === null || element.type === 'SpreadElement') return UNKNOWN;
      items.push(this.value(element, slot));
    }
    const value: Value = {
      types: ARRAY,
      depends: items.some((v) => v.depends),
      elementTypes: items.reduce<TypeSet>((set, v) => set | v.types, 0),
    };
    if (items.every((v) => v.known !== undefined)) value.known = { value: items.map((v) => v.known!.value) };
    return value;
  }

  private unary(n: acorn.UnaryExpression): Value {
    const op = n.operator;
    if (op !== '!' && op !== '-' && op !== '+') return UNKNOWN;
    const argument = this.value(n.argument);
    if (op === '!') {
      this.condition(n.argument, argument);
      return argument.known === undefined
        ? { types: BOOLEAN, depends: argument.depends }
        : { ...constant(!truthy(argument.known.value)), depends: argument.depends };
    }
    this.numberUse(n.argument, argument, n);
    if ((argument.types & NUMBER) === 0) {
      return this.mismatch(n, 'the invalid number', `${this.describe(n.argument, argument)}; \`${op}\` takes a number`);
    }
    if (argument.known !== undefined) {
      return constant(op === '-' ? runtime.neg(argument.known.value) : runtime.pos(argument.known.value));
    }
    return { types: NUMBER | INVALID, depends: argument.depends };
  }

  private binary(n: acorn.BinaryExpression): Value {
    const op = n.operator;
    if (n.left.type === 'PrivateIdentifier') return UNKNOWN;
    const equality = EQUALITY.has(op);
    if (!equality && ORDERING[op] === undefined && ARITHMETIC[op] === undefined && op !== '+') return UNKNOWN;
    const left = this.value(n.left, equality);
    const right = this.value(n.right, equality);
    const depends = left.depends || right.depends;
    const both = left.known !== undefined && right.known !== undefined;
    if (equality) {
      const equal = op === '==' || op === '===';
      if (!canBeEqual(left.types, right.types)) {
        return this.mismatch(
          n,
          equal ? 'false' : 'true',
          `${this.describe(n.left, left)} and ${this.describe(n.right, right)}`,
          this.numberTextSuggestion(n, left, right, true),
        );
      }
      if (both) return constant(runtime.eq(left.known!.value, right.known!.value) === equal);
      return { types: BOOLEAN, depends };
    }
    const compare = ORDERING[op];
    if (compare !== undefined) {
      this.orderingUse(n, left, right);
      if (!canBeOrdered(left.types, right.types)) {
        const reason = this.numberOrString(n, left, right, 'only two numbers or two strings are ordered');
        return this.mismatch(n, 'false', reason, this.numberTextSuggestion(n, left, right, false));
      }
      if (both) return constant(compare(left.known!.value, right.known!.value));
      return { types: BOOLEAN, depends };
    }
    if (op === '+') {
      if (left.known !== undefined && typeof left.known.value === 'number') this.numberUse(n.right, right, n);
      if (right.known !== undefined && typeof right.known.value === 'number') this.numberUse(n.left, left, n);
      if (!canBeAdded(left.types, right.types)) {
        return this.mismatch(n, 'the invalid number', this.numberOrString(n, left, right, '`+` adds two numbers or joins two strings'));
      }
      if (both) return constant(runtime.add(left.known!.value, right.known!.value));
      const types = ((left.types & right.types & STRING) !== 0 ? STRING : 0)
        | ((left.types & right.types & NUMBER) !== 0 ? NUMBER : 0) | INVALID;
      return { types, depends };
    }
    this.numberUse(n.left, left, n);
    this.numberUse(n.right, right, n);
    if ((left.types & NUMBER) === 0 || (right.types & NUMBER) === 0) {
      return this.mismatch(n, 'the invalid number', `${this.culprits(n, left, right, NUMBER)}; \`${op}\` takes numbers`);
    }
    if (both) return constant(ARITHMETIC[op](left.known!.value, right.known!.value));
    return { types: NUMBER | INVALID, depends };
  }

  private logical(n: acorn.LogicalExpression): Value {
    const left = this.value(n.left);
    const right = this.value(n.right);
    const depends = left.depends || right.depends;
    if (n.operator === '??') {
      if (left.known !== undefined) return left.known.value === null || left.known.value === undefined ? right : left;
      return { types: (left.types & ~(UNDEFINED | NULL)) | right.types, depends };
    }
    this.condition(n.left, left);
    this.condition(n.right, right);
    const and = n.operator === '&&';
    if (left.known !== undefined) return truthy(left.known.value) === and ? right : left;
    const result: Value = { types: left.types | right.types, depends };
    // `bool && false` is false and `bool || true` true, whatever the boolean.
    if (onlyBooleans(left.types) && right.known !== undefined && right.known.value === !and) result.known = { value: !and };
    return result;
  }

  private conditional(n: acorn.ConditionalExpression): Value {
    const test = this.value(n.test);
    this.condition(n.test, test);
    const consequent = this.value(n.consequent);
    const alternate = this.value(n.alternate);
    if (test.known !== undefined) return truthy(test.known.value) ? consequent : alternate;
    const result: Value = {
      types: consequent.types | alternate.types,
      depends: test.depends || consequent.depends || alternate.depends,
    };
    if (consequent.known !== undefined && alternate.known !== undefined
      && Object.is(consequent.known.value, alternate.known.value)) {
      result.known = consequent.known;
    }
    return result;
  }

  // ---- calls --------------------------------------------------------------

  private call(n: acorn.CallExpression): Value {
    if (n.optional) return UNKNOWN;
    const callee = n.callee;
    if (callee.type === 'Identifier') return callee.name === 'matches' ? this.matches(n) : this.functionCall(n, callee.name);
    if (callee.type !== 'MemberExpression' || callee.computed || callee.optional || callee.property.type !== 'Identifier') {
      return UNKNOWN;
    }
    const name = callee.property.name;
    if (CALLBACK_METHODS[name] !== undefined) return this.callback(n, callee, name);
    return this.methodCall(n, callee, name);
  }

  private args(n: acorn.CallExpression, slot = false): Value[] | undefined {
    const values: Value[] = [];
    for (const arg of n.arguments) {
      if (arg.type === 'SpreadElement') return undefined;
      values.push(this.value(arg, slot));
    }
    return values;
  }

  private functionCall(n: acorn.CallExpression, name: string): Value {
    const spec = FUNCTIONS[name];
    const signature = FUNCTION_SIGNATURES[name];
    if (spec === undefined || signature === undefined) return UNKNOWN;
    const args = this.args(n);
    if (args === undefined || args.length < spec.min || args.length > spec.max) return UNKNOWN;
    for (let i = 0; i < args.length; i++) {
      const accepts = signature.accepts(i, args.length);
      const place = args[i].place;
      if (signature.typeTest && place !== undefined) this.#scope.evidence.typeTested(place.key);
      if (accepts === NUMBER) this.numberUse(n.arguments[i], args[i], n);
      if (accepts !== undefined && (args[i].types & accepts) === 0) {
        return this.mismatch(
          n,
          signature.otherwise,
          `${this.describe(n.arguments[i], args[i])}; ${name}() takes ${describeTypes(accepts)}`,
        );
      }
    }
    const depends = signature.clock === true || args.some((a) => a.depends);
    if (!depends && signature.fold !== undefined && args.every((a) => a.known !== undefined)) {
      return constant(signature.fold(args.map((a) => a.known!.value)));
    }
    return { types: signature.result, depends };
  }

  private matches(n: acorn.CallExpression): Value {
    const [subjectNode, patternNode] = n.arguments;
    if (n.arguments.length !== 2 || subjectNode.type === 'SpreadElement'
      || patternNode.type !== 'Literal' || typeof patternNode.value !== 'string') {
      return UNKNOWN;
    }
    const subject = this.value(subjectNode);
    if ((subject.types & STRING) === 0) {
      return this.mismatch(n, 'false', `${this.describe(subjectNode, subject)}; matches() takes a string`);
    }
    if (subject.known !== undefined) {
      const compiled = compilePattern(patternNode.value);
      if (compiled.ok) return constant(runtime.matches(compiled.matcher, subject.known.value));
    }
    return { types: BOOLEAN, depends: subject.depends };
  }

  private methodCall(n: acorn.CallExpression, callee: acorn.MemberExpression, name: string): Value {
    const spec = VALUE_METHODS[name];
    const signature = METHOD_SIGNATURES[name];
    if (spec === undefined || signature === undefined) return UNKNOWN;
    const includes = name === 'includes';
    const receiver = includes && callee.object.type === 'ArrayExpression'
      ? this.array(callee.object, true)
      : this.value(callee.object);
    const args = this.args(n, includes);
    if (args === undefined || args.length < spec.min || args.length > spec.max) return UNKNOWN;
    const receiverKinds = signature.accepts(0, args.length + 1)!;
    if ((receiver.types & receiverKinds) === 0) {
      return this.mismatch(
        n,
        signature.otherwise,
        `${this.describe(callee.object, receiver)}; .${name}() works on ${describeTypes(receiverKinds)}`,
      );
    }
    const onStrings = (receiver.types & ARRAY) === 0;
    for (let i = 0; i < args.length; i++) {
      const accepts = includes ? (onStrings ? STRING : undefined) : signature.accepts(i + 1, args.length + 1);
      if (accepts !== undefined && (args[i].types & accepts) === 0) {
        return this.mismatch(
          n,
          signature.otherwise,
          `${this.describe(n.arguments[i], args[i])}; .${name}() on a string takes ${describeTypes(accepts)}`,
        );
      }
    }
    if (includes && !onStrings && (receiver.types & STRING) === 0) {
      const elements = this.elementTypes(receiver);
      if (elements !== undefined && !canBeEqual(elements, args[0].types)) {
        return this.mismatch(
          n,
          'false',
          `${this.describe(n.arguments[0], args[0])} and every element of \`${this.quote(callee.object)}\` is ${describeTypes(elements)}`,
        );
      }
    }
    const depends = receiver.depends || args.some((a) => a.depends);
    if (!depends && signature.fold !== undefined && receiver.known !== undefined && args.every((a) => a.known !== undefined)) {
      return constant(signature.fold([receiver.known.value, ...args.map((a) => a.known!.value)]));
    }
    return { types: includes && (receiver.types & ~ARRAY) === 0 ? BOOLEAN : signature.result, depends };
  }

  /** The kinds of an array's elements when known: listed, or declared by the payload schema. */
  private elementTypes(array: Value): TypeSet | undefined {
    if (array.elementTypes !== undefined) return array.elementTypes;
    const element = this.elementPlace(array);
    if (element === undefined || element.lookup.status !== 'declared') return undefined;
    // Elements of a JSON array are never absent.
    return element.lookup.types & JSON_VALUE;
  }

  private elementPlace(array: Value): Place | undefined {
    if (array.elements !== undefined) return array.elements;
    if (array.place === undefined) return undefined;
    const place = this.#scope.places.at([...array.place.segments, { each: true }]);
    return place.lookup.status === 'undeclared' ? undefined : place;
  }

  private callback(n: acorn.CallExpression, callee: acorn.MemberExpression, method: string): Value {
    const receiver = this.value(callee.object);
    const arrow = n.arguments[0];
    if (n.arguments.length !== 1 || arrow.type !== 'ArrowFunctionExpression' || arrow.async || arrow.expression !== true
      || arrow.params.length !== 1 || arrow.params[0].type !== 'Identifier') {
      return UNKNOWN;
    }
    const elementPlace = this.elementPlace(receiver);
    const element: Value = {
      types: this.elementTypes(receiver) ?? elementPlace?.lookup.types ?? FIELD_VALUE,
      depends: receiver.depends,
    };
    if (elementPlace !== undefined) element.place = elementPlace;
    this.#params.push({ name: arrow.params[0].name, value: element });
    const body = this.value(arrow.body);
    this.#params.pop();
    if ((receiver.types & ARRAY) === 0) {
      return this.mismatch(n, 'undefined', `${this.describe(callee.object, receiver)}; .${method}() works on an array`);
    }
    const depends = receiver.depends || body.depends;
    const notArray = (receiver.types & ~ARRAY) !== 0 ? UNDEFINED : 0;
    switch (method) {
      case 'filter':
        return { types: ARRAY | notArray, depends, elements: elementPlace, elementTypes: element.types };
      case 'map':
        return { types: ARRAY | notArray, depends, elements: body.place, elementTypes: body.types };
      case 'find':
        return { types: element.types | UNDEFINED, depends, place: elementPlace };
      default:
        return { types: (CALLBACK_RESULTS[method] & ~UNDEFINED) | notArray, depends };
    }
  }

  // ---- reports ------------------------------------------------------------

  /** `` `status` is declared a string `` / `` `5` is a number ``. */
  private describe(node: acorn.Node, v: Value): string {
    const declared = v.place !== undefined && v.place.lookup.status === 'declared';
    const types = declared && (v.types & ~UNDEFINED) !== 0 ? v.types & ~UNDEFINED : v.types;
    return `\`${this.quote(node)}\` is ${declared ? 'declared ' : ''}${describeTypes(types)}`;
  }

  /** The operands that have none of `kinds`, described. */
  private culprits(n: acorn.BinaryExpression, left: Value, right: Value, kinds: TypeSet): string {
    const described: string[] = [];
    if ((left.types & kinds) === 0) described.push(this.describe(n.left, left));
    if ((right.types & kinds) === 0) described.push(this.describe(n.right, right));
    return described.join(' and ');
  }

  /** Why two operands are not both numbers or both strings: whichever is neither, else both. */
  private numberOrString(n: acorn.BinaryExpression, left: Value, right: Value, rule: string): string {
    const neither = this.culprits(n, left, right, NUMBER | STRING);
    return neither === ''
      ? `${this.describe(n.left, left)} and ${this.describe(n.right, right)}`
      : `${neither}; ${rule}`;
  }

  private mismatch(n: acorn.Node, always: Otherwise | 'true', reason: string, suggestion?: string): Value {
    this.#sink.add('TYPE_MISMATCH', this.#text.path, `\`${this.quote(n)}\` is always ${always}: ${reason}`, this.position(n), suggestion);
    return UNKNOWN;
  }

  /**
   * For `total > "5"` with `total` a number: the operation with the number
   * unquoted. With `quote`, also the reverse (`code == 5` with `code` a
   * string gives `code == "5"`); not for orderings, where strings of
   * digits do not order as numbers.
   */
  private numberTextSuggestion(n: acorn.BinaryExpression, left: Value, right: Value, quote: boolean): string | undefined {
    for (const [literal, other] of [[n.right, left], [n.left, right]] as const) {
      if (literal.type !== 'Literal' || other.known !== undefined) continue;
      let replacement: string | undefined;
      if (typeof literal.value === 'string' && (other.types & NUMBER) !== 0 && (other.types & STRING) === 0) {
        const number = numberIn(literal.value);
        if (number !== undefined) replacement = String(number);
      } else if (quote && typeof literal.value === 'number' && (other.types & STRING) !== 0 && (other.types & NUMBER) === 0) {
        replacement = JSON.stringify(this.#text.source.slice(literal.start, literal.end));
      }
      if (replacement !== undefined) {
        const source = this.#text.source;
        return `${source.slice(n.start, literal.start)}${replacement}${source.slice(literal.end, n.end)}`;
      }
    }
    return undefined;
  }

  // ---- uses of untyped fields ---------------------------------------------

  /** A field used as a number (arithmetic, a number function), for the rule-wide check of its uses. */
  private numberUse(node: acorn.Node, v: Value, operation: acorn.Node): void {
    const place = v.place;
    if (place === undefined || place.lookup.types !== FIELD_VALUE || node.type === 'Literal') return;
    this.#scope.evidence.usedAsNumber(place.key, { path: this.#text.path, position: this.position(operation), text: this.quote(operation) });
  }

  /** A field ordered against a constant number or string. */
  private orderingUse(n: acorn.BinaryExpression, left: Value, right: Value): void {
    for (const [fieldNode, field, other] of [[n.left, left, right], [n.right, right, left]] as const) {
      if (other.known === undefined) continue;
      const kind = typeof other.known.value;
      if (kind === 'number') this.numberUse(fieldNode, field, n);
      const place = field.place;
      if (kind !== 'string' || place === undefined || place.lookup.types !== FIELD_VALUE) continue;
      const site = { path: this.#text.path, position: this.position(n), text: this.quote(n), fieldText: this.quote(fieldNode) };
      const literal = fieldNode === n.left ? n.right : n.left;
      const number = literal.type === 'Literal' && typeof literal.value === 'string' ? numberIn(literal.value) : undefined;
      const source = this.#text.source;
      this.#scope.evidence.orderedAgainstString(place.key, number === undefined ? site : {
        ...site,
        suggestion: `${source.slice(n.start, literal.start)}${number}${source.slice(literal.end, n.end)}`,
      });
    }
  }
}
