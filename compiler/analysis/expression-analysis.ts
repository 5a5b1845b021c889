/**
 * The typed walk of one expression: its IR in (as lower.ts made it, with
 * the source spans it carries), what is known of each value out (its
 * kinds, whether it reads the payload, its constant value, the payload path
 * it is read from), with warnings for paths the payload schema does not
 * declare, bare names used as values, `$item` without forEach, and
 * operations that cannot succeed for the kinds involved.
 *
 * Constants are folded with the run-time helpers, so a folded value is what
 * a validator would compute. Only IR is walked, so only expressions that
 * compile are analysed: one that does not gives no warning (its compile
 * error says what is wrong). Texts quoted in messages and suggestions are
 * cut from the field's text at the IR's spans (expression/source-span.ts).
 * Member chains are walked in a loop; the IR is bounded in depth by the
 * checker, and the walk keeps its own bound (four times the nesting limit)
 * all the same.
 */
import { DOLLAR_NAMES, FUNCTIONS, VALUE_METHODS } from '../expression/catalog.ts';
import type { Position } from '../expression/errors.ts';
import type { Expr } from '../expression/ir.ts';
import { spanOf } from '../expression/source-span.ts';
import { compilePattern } from '../regex/index.ts';
import { runtime } from '../runtime.ts';
import type { PathSegment } from '../paths.ts';
import { CALLBACK_RESULTS, FUNCTION_SIGNATURES, METHOD_SIGNATURES, lengthTypes, type Otherwise } from './function-types.ts';
import { UNKNOWN, constant, type Place, type RuleScope, type Value } from './rule-scope.ts';
import {
  ARRAY, BOOLEAN, FIELD_VALUE, INVALID, JSON_VALUE, NULL, NUMBER, OBJECT, STRING, UNDEFINED,
  canBeAdded, canBeEqual, canBeOrdered, describeTypes, onlyBooleans, type TypeSet,
} from './value-types.ts';
import type { WarningPath, WarningSink } from './warnings.ts';

/**
 * The field an expression belongs to and the field's whole text: the IR's
 * spans are offsets into it (a placeholder's count from the start of its
 * message).
 */
export interface FieldText {
  path: WarningPath;
  source: string;
}

/** A sub-expression used as a condition (operand of `!`, `&&`, `||`, test of `?:`). */
export interface Condition {
  node: Expr;
  value: Value;
}

export interface ExpressionAnalysis {
  node: Expr;
  value: Value;
  /** Conditions that are not literals, in the order met. */
  conditions: Condition[];
  /** The node's text as messages quote it. */
  quote(node: Expr): string;
  position(node: Expr): Position;
}

/**
 * Analyses one compiled expression; undefined when it is too deep to walk.
 *
 * @example
 * const compiled = compileExpression('1 > 0', DEFAULT_LIMITS, { compilePattern, map: identity });
 * analyzeExpression(compiled.expr, { path: 'expression', source: '1 > 0' }, scope, sink, DEFAULT_LIMITS.maxNestingDepth);
 * // { value: { types: BOOLEAN, depends: false, known: { value: true } }, ... }
 */
export function analyzeExpression(
  expression: Expr,
  text: FieldText,
  scope: RuleScope,
  sink: WarningSink,
  maxNestingDepth: number,
): ExpressionAnalysis | undefined {
  const walk = new Walk(text, scope, sink, maxNestingDepth * 4);
  try {
    const value = walk.value(expression);
    return {
      node: expression,
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

const ORDERING: Readonly<Record<string, (a: unknown, b: unknown) => boolean>> = {
  '<': runtime.lt, '<=': runtime.le, '>': runtime.gt, '>=': runtime.ge,
};
const ARITHMETIC: Readonly<Record<string, (a: unknown, b: unknown) => unknown>> = {
  '-': runtime.sub, '*': runtime.mul, '/': runtime.div, '%': runtime.mod, '**': runtime.pow,
};
/** The `$`-names as written, by the root they read (only these spellings lower to them). */
const WRITTEN_ROOT: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(DOLLAR_NAMES).map(([name, root]) => [root, name]));

function truthy(value: unknown): boolean {
  return Boolean(value);
}

function segmentOf(key: string | number): PathSegment {
  return typeof key === 'number' ? { index: key } : { key };
}

/**
 * The payload root of a bare name (`amount`, `loan.amount`): lower.ts makes
 * it, so it has no span, unlike a written `$`.
 */
function isBareRoot(e: Expr): boolean {
  return e.kind === 'root' && e.name === 'payload' && spanOf(e) === undefined;
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

type Node<K extends Expr['kind']> = Extract<Expr, { kind: K }>;

class Walk {
  readonly conditions: Condition[] = [];
  readonly #text: FieldText;
  readonly #scope: RuleScope;
  readonly #sink: WarningSink;
  readonly #maxFrames: number;
  /** The values of the callback parameters in scope, outermost first (a `param` node's depth is its index + 1). */
  readonly #params: Value[] = [];
  #frames = 0;

  constructor(text: FieldText, scope: RuleScope, sink: WarningSink, maxFrames: number) {
    this.#text = text;
    this.#scope = scope;
    this.#sink = sink;
    this.#maxFrames = maxFrames;
  }

  /** `slot`: the node is compared with `==`/`!=` or listed for `.includes`, where a bare name may be meant as text. */
  value(node: Expr, slot = false): Value {
    if (++this.#frames > this.#maxFrames) throw new TooDeep();
    const value = this.node(node, slot);
    this.#frames--;
    return value;
  }

  position(node: Expr): Position {
    const span = spanOf(node);
    return span === undefined ? { line: 1, column: 1 } : { line: span.line, column: span.column };
  }

  /** The node's text as written. */
  written(node: Expr): string {
    const span = spanOf(node);
    return span === undefined ? '' : this.#text.source.slice(span.start, span.end);
  }

  quote(node: Expr): string {
    // A multi-line expression is quoted on one line; spaces inside it (and inside strings) stay as written.
    const text = this.written(node).replace(/[ \t]*[\r\n\u2028\u2029]+\s*/g, ' ');
    return text.length <= QUOTE_LENGTH ? text : `${text.slice(0, QUOTE_LENGTH - 1)}…`;
  }

  /**
   * A literal as written: lower.ts folds `-5` into a literal, but the
   * author wrote an operation, which is a condition and is not rewritten
   * in suggestions.
   */
  private isWrittenLiteral(node: Expr): node is Node<'literal'> {
    if (node.kind !== 'literal') return false;
    const span = spanOf(node);
    return span === undefined || this.#text.source[span.start] !== '-';
  }

  private node(n: Expr, slot: boolean): Value {
    switch (n.kind) {
      case 'literal':
        return constant(n.value);
      case 'root':
        return this.root(n);
      case 'param':
        return this.#params[n.depth - 1] ?? UNKNOWN;
      case 'member':
        if (slot && isBareRoot(n.object) && this.bareValue(n)) return UNKNOWN;
        return this.member(n);
      case 'array':
        return this.array(n, false);
      case 'unary':
        return this.unary(n);
      case 'binary':
        return this.binary(n);
      case 'logical':
        return this.logical(n);
      case 'conditional':
        return this.conditional(n);
      case 'now':
        return this.functionCall(n, 'now', []);
      case 'call':
        return this.functionCall(n, n.fn, n.args);
      case 'matches':
        return this.matches(n);
      case 'method':
        return this.methodCall(n);
      case 'callback':
        return this.callback(n);
      default:
        return UNKNOWN;
    }
  }

  private condition(node: Expr, value: Value): void {
    if (!this.isWrittenLiteral(node)) this.conditions.push({ node, value });
  }

  // ---- names and paths ----------------------------------------------------

  private root(n: Node<'root'>): Value {
    const scope = this.#scope;
    switch (n.name) {
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

  private noForEach(n: Node<'root'>): Value {
    this.#sink.add('NO_FOREACH', this.#text.path, `\`${WRITTEN_ROOT[n.name]}\` is always undefined: the rule has no forEach`, this.position(n));
    return UNKNOWN;
  }

  /**
   * A bare name compared with `==` or listed for `.includes`: when the
   * payload schema does not declare it, it is most likely a value written
   * without quotes, or a misspelled field when a declared one is near.
   * True when it was reported.
   */
  private bareValue(n: Node<'member'>): boolean {
    const places = this.#scope.places;
    const name = String(n.key);
    if (places.schema === undefined || places.at([{ key: name }]).lookup.status !== 'undeclared') return false;
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

  private member(n: Node<'member'>): Value {
    const keys: (string | number)[] = [];
    let base: Expr = n;
    // Member chains are paths: walked in a loop, however long.
    while (base.kind === 'member') {
      keys.push(base.key);
      base = base.object;
    }
    keys.reverse();
    if (isBareRoot(base)) return this.path(n, this.#scope.payload, '', keys);
    return this.path(n, this.value(base), this.written(base), keys);
  }

  /**
   * Reads `keys` from `start`, written `root` + keys at `node`. A key the
   * payload schema does not declare is reported once for the whole path,
   * with the nearest declared path as a suggestion.
   */
  private path(node: Expr, start: Value, root: string, keys: readonly (string | number)[]): Value {
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
    node: Expr,
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
  private array(n: Node<'array'>, slot: boolean): Value {
    const items: Value[] = [];
    for (const element of n.items) items.push(this.value(element, slot));
    const value: Value = {
      types: ARRAY,
      depends: items.some((v) => v.depends),
      elementTypes: items.reduce<TypeSet>((set, v) => set | v.types, 0),
    };
    if (items.every((v) => v.known !== undefined)) value.known = { value: items.map((v) => v.known!.value) };
    return value;
  }

  private unary(n: Node<'unary'>): Value {
    const op = n.op;
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

  private binary(n: Node<'binary'>): Value {
    const op = n.op;
    // `===` and `!==` are lowered to `==` and `!=`: the same operations.
    const equality = op === '==' || op === '!=';
    const left = this.value(n.left, equality);
    const right = this.value(n.right, equality);
    const depends = left.depends || right.depends;
    const both = left.known !== undefined && right.known !== undefined;
    if (equality) {
      const equal = op === '==';
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
    const arithmetic = ARITHMETIC[op];
    if (arithmetic === undefined) return UNKNOWN;
    this.numberUse(n.left, left, n);
    this.numberUse(n.right, right, n);
    if ((left.types & NUMBER) === 0 || (right.types & NUMBER) === 0) {
      return this.mismatch(n, 'the invalid number', `${this.culprits(n, left, right, NUMBER)}; \`${op}\` takes numbers`);
    }
    if (both) return constant(arithmetic(left.known!.value, right.known!.value));
    return { types: NUMBER | INVALID, depends };
  }

  private logical(n: Node<'logical'>): Value {
    const left = this.value(n.left);
    const right = this.value(n.right);
    const depends = left.depends || right.depends;
    if (n.op === '??') {
      if (left.known !== undefined) return left.known.value === null || left.known.value === undefined ? right : left;
      return { types: (left.types & ~(UNDEFINED | NULL)) | right.types, depends };
    }
    this.condition(n.left, left);
    this.condition(n.right, right);
    const and = n.op === '&&';
    if (left.known !== undefined) return truthy(left.known.value) === and ? right : left;
    const result: Value = { types: left.types | right.types, depends };
    // `bool && false` is false and `bool || true` true, whatever the boolean.
    if (onlyBooleans(left.types) && right.known !== undefined && right.known.value === !and) result.known = { value: !and };
    return result;
  }

  private conditional(n: Node<'conditional'>): Value {
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

  private functionCall(n: Expr, name: string, argNodes: readonly Expr[]): Value {
    const spec = FUNCTIONS[name];
    const signature = FUNCTION_SIGNATURES[name];
    if (spec === undefined || signature === undefined) return UNKNOWN;
    const args = argNodes.map((arg) => this.value(arg));
    if (args.length < spec.min || args.length > spec.max) return UNKNOWN;
    for (let i = 0; i < args.length; i++) {
      const accepts = signature.accepts(i, args.length);
      const place = args[i].place;
      if (signature.typeTest && place !== undefined) this.#scope.evidence.typeTested(place.key);
      if (accepts === NUMBER) this.numberUse(argNodes[i], args[i], n);
      if (accepts !== undefined && (args[i].types & accepts) === 0) {
        return this.mismatch(
          n,
          signature.otherwise,
          `${this.describe(argNodes[i], args[i])}; ${name}() takes ${describeTypes(accepts)}`,
        );
      }
    }
    const depends = signature.clock === true || args.some((a) => a.depends);
    if (!depends && signature.fold !== undefined && args.every((a) => a.known !== undefined)) {
      return constant(signature.fold(args.map((a) => a.known!.value)));
    }
    return { types: signature.result, depends };
  }

  private matches(n: Node<'matches'>): Value {
    const subject = this.value(n.subject);
    if ((subject.types & STRING) === 0) {
      return this.mismatch(n, 'false', `${this.describe(n.subject, subject)}; matches() takes a string`);
    }
    if (subject.known !== undefined) {
      // Folded under the default limits, as it always was: a pattern they refuse is left unfolded.
      const compiled = compilePattern(n.pattern);
      if (compiled.ok) return constant(runtime.matches(compiled.matcher, subject.known.value));
    }
    return { types: BOOLEAN, depends: subject.depends };
  }

  private methodCall(n: Node<'method'>): Value {
    const name = n.method;
    const spec = VALUE_METHODS[name];
    const signature = METHOD_SIGNATURES[name];
    if (spec === undefined || signature === undefined) return UNKNOWN;
    const includes = name === 'includes';
    const receiver = includes && n.object.kind === 'array' ? this.array(n.object, true) : this.value(n.object);
    const args = n.args.map((arg) => this.value(arg, includes));
    if (args.length < spec.min || args.length > spec.max) return UNKNOWN;
    const receiverKinds = signature.accepts(0, args.length + 1)!;
    if ((receiver.types & receiverKinds) === 0) {
      return this.mismatch(
        n,
        signature.otherwise,
        `${this.describe(n.object, receiver)}; .${name}() works on ${describeTypes(receiverKinds)}`,
      );
    }
    const onStrings = (receiver.types & ARRAY) === 0;
    for (let i = 0; i < args.length; i++) {
      const accepts = includes ? (onStrings ? STRING : undefined) : signature.accepts(i + 1, args.length + 1);
      if (accepts !== undefined && (args[i].types & accepts) === 0) {
        return this.mismatch(
          n,
          signature.otherwise,
          `${this.describe(n.args[i], args[i])}; .${name}() on a string takes ${describeTypes(accepts)}`,
        );
      }
    }
    if (includes && !onStrings && (receiver.types & STRING) === 0) {
      const elements = this.elementTypes(receiver);
      if (elements !== undefined && !canBeEqual(elements, args[0].types)) {
        return this.mismatch(
          n,
          'false',
          `${this.describe(n.args[0], args[0])} and every element of \`${this.quote(n.object)}\` is ${describeTypes(elements)}`,
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

  private callback(n: Node<'callback'>): Value {
    const method = n.method;
    const receiver = this.value(n.object);
    const elementPlace = this.elementPlace(receiver);
    const element: Value = {
      types: this.elementTypes(receiver) ?? elementPlace?.lookup.types ?? FIELD_VALUE,
      depends: receiver.depends,
    };
    if (elementPlace !== undefined) element.place = elementPlace;
    this.#params.push(element);
    const body = this.value(n.body);
    this.#params.pop();
    if ((receiver.types & ARRAY) === 0) {
      return this.mismatch(n, 'undefined', `${this.describe(n.object, receiver)}; .${method}() works on an array`);
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
  private describe(node: Expr, v: Value): string {
    const declared = v.place !== undefined && v.place.lookup.status === 'declared';
    const types = declared && (v.types & ~UNDEFINED) !== 0 ? v.types & ~UNDEFINED : v.types;
    return `\`${this.quote(node)}\` is ${declared ? 'declared ' : ''}${describeTypes(types)}`;
  }

  /** The operands that have none of `kinds`, described. */
  private culprits(n: Node<'binary'>, left: Value, right: Value, kinds: TypeSet): string {
    const described: string[] = [];
    if ((left.types & kinds) === 0) described.push(this.describe(n.left, left));
    if ((right.types & kinds) === 0) described.push(this.describe(n.right, right));
    return described.join(' and ');
  }

  /** Why two operands are not both numbers or both strings: whichever is neither, else both. */
  private numberOrString(n: Node<'binary'>, left: Value, right: Value, rule: string): string {
    const neither = this.culprits(n, left, right, NUMBER | STRING);
    return neither === ''
      ? `${this.describe(n.left, left)} and ${this.describe(n.right, right)}`
      : `${neither}; ${rule}`;
  }

  private mismatch(n: Expr, always: Otherwise | 'true', reason: string, suggestion?: string): Value {
    this.#sink.add('TYPE_MISMATCH', this.#text.path, `\`${this.quote(n)}\` is always ${always}: ${reason}`, this.position(n), suggestion);
    return UNKNOWN;
  }

  /** `n`'s text with `part` (a node inside it) written as `replacement`. */
  private rewritten(n: Expr, part: Expr, replacement: string): string {
    const whole = spanOf(n);
    const inner = spanOf(part);
    if (whole === undefined || inner === undefined) return replacement;
    const source = this.#text.source;
    return `${source.slice(whole.start, inner.start)}${replacement}${source.slice(inner.end, whole.end)}`;
  }

  /**
   * For `total > "5"` with `total` a number: the operation with the number
   * unquoted. With `quote`, also the reverse (`code == 5` with `code` a
   * string gives `code == "5"`); not for orderings, where strings of
   * digits do not order as numbers.
   */
  private numberTextSuggestion(n: Node<'binary'>, left: Value, right: Value, quote: boolean): string | undefined {
    for (const [literal, other] of [[n.right, left], [n.left, right]] as const) {
      if (!this.isWrittenLiteral(literal) || other.known !== undefined) continue;
      let replacement: string | undefined;
      if (typeof literal.value === 'string' && (other.types & NUMBER) !== 0 && (other.types & STRING) === 0) {
        const number = numberIn(literal.value);
        if (number !== undefined) replacement = String(number);
      } else if (quote && typeof literal.value === 'number' && (other.types & STRING) !== 0 && (other.types & NUMBER) === 0) {
        replacement = JSON.stringify(this.written(literal));
      }
      if (replacement !== undefined) return this.rewritten(n, literal, replacement);
    }
    return undefined;
  }

  // ---- uses of untyped fields ---------------------------------------------

  /** A field used as a number (arithmetic, a number function), for the rule-wide check of its uses. */
  private numberUse(node: Expr, v: Value, operation: Expr): void {
    const place = v.place;
    if (place === undefined || place.lookup.types !== FIELD_VALUE || this.isWrittenLiteral(node)) return;
    this.#scope.evidence.usedAsNumber(place.key, { path: this.#text.path, position: this.position(operation), text: this.quote(operation) });
  }

  /** A field ordered against a constant number or string. */
  private orderingUse(n: Node<'binary'>, left: Value, right: Value): void {
    for (const [fieldNode, field, other] of [[n.left, left, right], [n.right, right, left]] as const) {
      if (other.known === undefined) continue;
      const kind = typeof other.known.value;
      if (kind === 'number') this.numberUse(fieldNode, field, n);
      const place = field.place;
      if (kind !== 'string' || place === undefined || place.lookup.types !== FIELD_VALUE) continue;
      const site = { path: this.#text.path, position: this.position(n), text: this.quote(n), fieldText: this.quote(fieldNode) };
      const literal = fieldNode === n.left ? n.right : n.left;
      const number = literal.kind === 'literal' && typeof literal.value === 'string' ? numberIn(literal.value) : undefined;
      this.#scope.evidence.orderedAgainstString(place.key, number === undefined ? site : {
        ...site,
        suggestion: this.rewritten(n, literal, String(number)),
      });
    }
  }
}
