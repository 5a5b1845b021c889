/**
 * Rule plans to the source of one validator factory:
 *
 *   (function (rt, refs) {
 *     "use strict";
 *     const { hasOwn, failure, ... } = rt;     // only the helpers used
 *     const r0 = meta(...); const k0 = ...;    // frozen per-rule constants
 *     const re0 = refs.re0;                    // matchers, schema validators
 *     function get0(o) { ... }                 // one own-field reader per name
 *     function every0(list, ...) { ... }       // hoisted callback loops
 *     return function validate(payload, now) {
 *       const field0 = get0(payload);          // paths the rules read more than once
 *       ...one block per rule...
 *     };
 *   })
 *
 * Rules appear in evaluation order, each under a comment with its code;
 * other user text appears only inside string literals. Everything the
 * source needs besides `rt` comes in through `refs`, so the same text can be
 * bundled into a standalone module. Nothing is allocated per rule when a
 * payload passes.
 *
 * Rulesets of more than 128 rules (or of more than 64K characters of rule
 * text) are split into parts: each part is a factory of its own, of one
 * function `rulesN(payload, now, failures)` over its rules, and `validate`
 * calls them in order. The service instantiates the parts one by one
 * (compile-ruleset.ts), so that a large context never holds the event loop
 * for long; the ruleset's source is the parts laid out in one factory.
 */
import { _, CodeWriter, commentOf, join, layout, lit, Name, Scope, type Code } from './codegen/index.ts';
import { generateExpression, generateIsTrue, payloadReads, rootsOf, structuralKey, type Env, type FixedNames, type HelperName, type Hoist, type RefOrigin } from './expression/generate.ts';
import { fusibleLoops, type LoopGroup } from './fuse-loops.ts';
import { constantValue, isBoolean, type Expr } from './expression/ir.ts';
import type { TemplatePart } from './expression/template.ts';
import type { PathSegment } from './paths.ts';
import type { RulePlan } from './rule-plan.ts';
import { MAX_FAILURES_PER_VALIDATION, MAX_MESSAGE_LENGTH, runtime, text } from './runtime.ts';
import { schemaFailures } from './schema/index.ts';
import { runSteps, type Steps } from './steps.ts';
import type { TablePlan } from './table/plan-table.ts';
import { declareExpressionCells, tableSpecJson, tableSummary } from './table/table-source.ts';

/** The error codes of a table rule's own failures (docs: decision tables). */
export const TABLE_ERROR_CODES = Object.freeze({
  /** Hit policy `unique`, and two rows match. */
  notUnique: 'TABLE_NOT_UNIQUE',
  /** Hit policy `any`, and matching rows have different outputs. */
  outputsDiffer: 'TABLE_OUTPUTS_DIFFER',
});

export interface GeneratedSource {
  /** The factory's source: `(function (rt, refs) { ... })`. */
  source: string;
  /** The values the factory reads from `refs`, by name. */
  refs: Readonly<Record<string, unknown>>;
  /** How each value of `refs` was made, by the same names (for the standalone module). */
  origins: Readonly<Record<string, RefOrigin>>;
}

export type { RefOrigin };

const HELPERS = Object.keys(runtime) as HelperName[];

/** The names generated code uses that are not handed out by counters. */
const FIXED = [
  'rt', 'refs', 'validate', 'payload', 'now', 'value', 'item', 'index', 'expected', 'cell', 'row', 'rowIndex', 'list', 'i', 'out',
  'failures', 'evaluated', 'errors', 'found', 'f', 'schemaFailures', 'o', 'proto',
] as const;

/** The names only the explaining variant uses (see `GenerateOptions.explain`); reserved only there, so that the live source is unchanged. */
const EXPLAIN_NAMES = ['trace', 'mark', 'why', 'elements', 'start', 'matched', 'closest'] as const;

/** How to generate: the live validator, or its explaining variant. */
export interface GenerateOptions {
  /**
   * Generate the explaining variant: the same rule blocks, each also
   * recording into `trace` one entry `[why, failuresAdded, value, elements, matched, closest]`
   * (why: null, "when-false" or "field-missing"; value: the fieldPath's
   * value of a rule outside forEach; elements: the failing indexes of a
   * forEach rule; matched: the table rows that matched; closest: when none
   * did, the row that matched the most cells), and `validate` returns
   * `trace` with the result. Always
   * one factory, never parts: it runs for one request, not for traffic.
   */
  explain?: boolean;
  /**
   * Fuse the passes of rules over the same payload array into one loop
   * (fuse-loops.ts); default true. Off only to compare the two (tests).
   * The explaining variant never fuses: it traces each rule's own pass.
   */
  fuseLoops?: boolean;
}

/**
 * The names of one generated program, shared by its parts: fixed names and
 * helpers reserved once, counters that never hand out a name twice, and one
 * `refs` record that every part reads from.
 */
class Naming {
  readonly scope = new Scope();
  readonly names: Record<(typeof FIXED)[number], Name>;
  readonly helpers = new Map<HelperName, Name>();
  readonly refs: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  readonly origins: Record<string, RefOrigin> = Object.create(null) as Record<string, RefOrigin>;
  /** The explaining variant's names, when generating it. */
  readonly explain: Record<(typeof EXPLAIN_NAMES)[number], Name> | undefined;
  /** Whether rules' passes over one array fuse (GenerateOptions.fuseLoops). */
  readonly fuseLoops: boolean;

  constructor(options: GenerateOptions = {}) {
    this.fuseLoops = options.fuseLoops !== false && options.explain !== true;
    // Reserve every helper and fixed name first, so counters never hand them out.
    for (const helper of HELPERS) this.helpers.set(helper, this.scope.reserve(helper));
    this.names = Object.fromEntries(FIXED.map((n) => [n, this.scope.reserve(n)])) as Record<(typeof FIXED)[number], Name>;
    this.explain = options.explain === true
      ? Object.fromEntries(EXPLAIN_NAMES.map((n) => [n, this.scope.reserve(n)])) as Record<(typeof EXPLAIN_NAMES)[number], Name>
      : undefined;
  }

  helper(name: HelperName): Name {
    const found = this.helpers.get(name);
    if (found === undefined) throw new TypeError(`codegen: unknown runtime helper ${name}`);
    return found;
  }
}

/** What one factory declares before its function: helpers used, constants, refs read, readers, hoisted functions. */
class Declarations implements Hoist {
  readonly naming: Naming;
  readonly scope: Scope;
  readonly names: Record<(typeof FIXED)[number], Name>;
  readonly refs: Record<string, unknown>;
  readonly origins: Record<string, RefOrigin>;
  readonly #used = new Set<HelperName>();
  readonly #constants = new Map<string, Name>();
  readonly #lines: Code[] = [];
  readonly #functions: Code[] = [];
  #schemaFailuresDeclared = false;

  constructor(naming = new Naming()) {
    this.naming = naming;
    this.scope = naming.scope;
    this.names = naming.names;
    this.refs = naming.refs;
    this.origins = naming.origins;
  }

  helper(name: HelperName): Name {
    const found = this.naming.helper(name);
    this.#used.add(name);
    return found;
  }

  readonly #readers = new Map<string | number, Name>();
  readonly #readerCode: Code[] = [];

  /**
   * `getN(o)`: the own field of one name. One function per name keeps each
   * property load monomorphic; a shared `get(o, key)` would be megamorphic
   * across a ruleset and markedly slower.
   *
   * A value found on an object whose prototype is Object.prototype or
   * Array.prototype (every JSON object and array) is its own when that
   * prototype has nothing under the name: the prototype's chain is the only
   * other place it could come from. V8 folds that test into checks of the
   * object's map, where `hasOwn` is a builtin call it does not inline. Any
   * other object, and names the prototypes do have (`constructor`,
   * `__proto__`, `toString`), still go through `hasOwn`.
   */
  reader(key: string | number): Name {
    const known = this.#readers.get(key);
    if (known !== undefined) return known;
    const name = this.scope.name('get');
    this.#readers.set(key, name);
    const { o, value, proto } = this.names;
    const getPrototypeOf = this.helper('getPrototypeOf');
    const objectPrototype = this.helper('objectPrototype');
    const arrayPrototype = this.helper('arrayPrototype');
    const hasOwn = this.helper('hasOwn');
    const w = new CodeWriter();
    w.block(_`function ${name}(${o})`, () => {
      w.line(_`if (${o} === null || typeof ${o} !== "object") return undefined;`);
      w.line(_`const ${value} = ${o}[${key}];`);
      w.line(_`if (${value} === undefined) return undefined;`);
      w.line(_`const ${proto} = ${getPrototypeOf}(${o});`);
      w.line(_`if ((${proto} === ${objectPrototype} || ${proto} === ${arrayPrototype}) && ${proto}[${key}] === undefined) return ${value};`);
      w.line(_`return ${hasOwn}(${o}, ${key}) ? ${value} : undefined;`);
    });
    this.#readerCode.push(w.toCode());
    return name;
  }

  /** Consts of the function being generated that many reads start from, with the flag saying their prototype is a JSON one. */
  readonly #plain = new Map<Name, { flag: Name; used: boolean }>();

  /**
   * Marks `object`, a const of the function being generated (the payload,
   * a shared read), as one that reads start from: `inlineRead` then reads
   * its fields through a flag computed once (`declarePlain`), rather than
   * through the reader, which tests the prototype again at every read.
   */
  plain(object: Name): void {
    if (!this.#plain.has(object)) this.#plain.set(object, { flag: this.scope.name('plain'), used: false });
  }

  /**
   * The code `body` writes, after the flag of `object` when that code read
   * through it: for a loop's `item`, whose flag each element computes anew.
   */
  withPlain(w: CodeWriter, object: Name, body: (inner: CodeWriter) => void): void {
    this.plain(object);
    const entry = this.#plain.get(object) as { used: boolean };
    entry.used = false;
    const inner = new CodeWriter();
    body(inner);
    this.declarePlain(w, object);
    w.embed(inner);
  }

  /**
   * `withPlain` for the element of a fused loop, whose rules and sums
   * often read the same fields of it (`i.qty * i.price` in a sum, then
   * `qty` and `price` in their rules): each field the body reads in place
   * is read once, into a const after the flag, which every read of it then
   * names. Reads are total and the payload does not change during a
   * validation, so reading a field once at the element's start, rather
   * than where each rule needs it, changes nothing but the count of reads.
   */
  withSharedElementReads(w: CodeWriter, object: Name, body: (inner: CodeWriter) => void): void {
    const reads = new Map<string | number, { name: Name; code: Code }>();
    this.#memo = { object, reads };
    try {
      this.withPlain(w, object, (inner) => {
        const rest = new CodeWriter();
        body(rest);
        for (const { name, code } of reads.values()) inner.line(_`const ${name} = ${code};`);
        inner.embed(rest);
      });
    } finally {
      this.#memo = undefined;
    }
  }

  /** The object whose in-place reads are kept in consts while a fused loop's element is written (withSharedElementReads). */
  #memo: { object: Name; reads: Map<string | number, { name: Name; code: Code }> } | undefined;

  /**
   * `const plainN = <object is a JSON object or array>;` when some read used
   * the flag: runtime.plainContainer written in place, since a validator
   * is too large for V8 to inline every helper it calls, and this one runs
   * for every element of a loop.
   */
  declarePlain(w: CodeWriter, object: Name): void {
    const entry = this.#plain.get(object);
    if (entry?.used !== true) return;
    const proto = this.scope.name('proto');
    const getPrototypeOf = this.helper('getPrototypeOf');
    const objectPrototype = this.helper('objectPrototype');
    const arrayPrototype = this.helper('arrayPrototype');
    w.line(_`let ${proto};`);
    w.line(_`const ${entry.flag} = ${object} !== null && typeof ${object} === "object" && ((${proto} = ${getPrototypeOf}(${object})) === ${objectPrototype} || ${proto} === ${arrayPrototype});`);
  }

  /**
   * The own field `key` of `object`, as `reader(key)` answers. From an
   * object marked `plain`, written in place: when the object is a JSON
   * object or array (its flag) and neither JSON prototype has anything
   * under the name, the value found is its own, as the reader would
   * conclude; anything else goes to the reader. V8 inlines called readers
   * only up to a budget per optimized function (a few of the dozens a
   * ruleset makes), and `getPrototypeOf` at every read cost most of a
   * passing validation's time; the prototypes' loads it folds into constants.
   */
  inlineRead(key: string | number, object: Code): Code {
    const reader = this.reader(key);
    const entry = object instanceof Name ? this.#plain.get(object) : undefined;
    if (entry === undefined) return _`${reader}(${object})`;
    entry.used = true;
    const clean = _`${this.helper('objectPrototype')}[${key}] === undefined && ${this.helper('arrayPrototype')}[${key}] === undefined`;
    const code = _`(${entry.flag} && ${clean} ? ${object}[${key}] : ${reader}(${object}))`;
    const memo = this.#memo;
    if (memo === undefined || memo.object !== object) return code;
    let read = memo.reads.get(key);
    if (read === undefined) {
      read = { name: this.scope.name('field'), code };
      memo.reads.set(key, read);
    }
    return read.name;
  }

  constant(value: unknown): Name {
    const json = JSON.stringify(value);
    const known = this.#constants.get(json);
    if (known !== undefined) return known;
    const name = this.scope.name('k');
    this.#constants.set(json, name);
    this.#lines.push(_`const ${name} = ${this.helper('constant')}(${json});`);
    return name;
  }

  /** The code of the rule being generated, for comments. */
  currentRule = '';

  ref(prefix: 're' | 'sv', value: unknown, origin: RefOrigin): Name {
    const name = this.scope.name(prefix);
    this.refs[name.toString()] = value;
    this.origins[name.toString()] = origin;
    // The pattern itself is tenant text: the comment names only the rule.
    const note = prefix === 're' ? commentOf`matches() pattern of rule ${this.currentRule}` : commentOf`schema of rule ${this.currentRule}`;
    this.#lines.push(_`const ${name} = ${this.names.refs}.${name}; ${note}`);
    return name;
  }

  /** A schemaFailures binding, read from refs once. */
  schemaFailures(): Name {
    const name = this.names.schemaFailures;
    if (!this.#schemaFailuresDeclared) {
      this.#schemaFailuresDeclared = true;
      this.refs[name.toString()] = schemaFailures;
      this.origins[name.toString()] = { kind: 'schemaFailures' };
      this.#lines.push(_`const ${name} = ${this.names.refs}.${name};`);
    }
    return name;
  }

  /** The rule's frozen failure meta; `errorCode` for failures with a code of their own (a table's conflicts). */
  meta(plan: RulePlan, errorCode = plan.errorCode): Name {
    const name = this.scope.name('r');
    this.#lines.push(
      _`const ${name} = ${this.helper('meta')}(${plan.code}, ${plan.name}, ${plan.severity}, ${errorCode});`,
    );
    return name;
  }

  /** `const tableN = table(spec, cellsN);`: a decision table's index, built once per validator (table/table-index.ts). */
  table(table: TablePlan, onNow: () => void): Name {
    const cells = declareExpressionCells(table, this, this.names, onNow);
    const name = this.scope.name('table');
    this.#lines.push(commentOf`decision table of rule ${this.currentRule}: ${tableSummary(table)}`);
    this.#lines.push(_`const ${name} = ${this.helper('table')}(${tableSpecJson(table)}, ${cells ?? lit(null)});`);
    return name;
  }

  declare(code: Code): void {
    this.#functions.push(code);
  }

  readonly #loops = new Map<string, Name>();

  loop(key: string, declareIt: () => Name): Name {
    let name = this.#loops.get(key);
    if (name === undefined) {
      name = declareIt();
      this.#loops.set(key, name);
    }
    return name;
  }

  /** `const { get, eq } = rt;`, the constants, then the hoisted functions. */
  prelude(w: CodeWriter): void {
    const used = HELPERS.filter((h) => this.#used.has(h)).map((h) => this.naming.helper(h));
    if (used.length > 0) w.line(_`const { ${join(used)} } = ${this.names.rt};`);
    for (const line of this.#lines) w.line(line);
    if (this.#readerCode.length > 0) {
      w.blank();
      w.line(commentOf`own-field readers: getN(o) is o's own field of that name, else undefined`);
      this.#readerCode.forEach((reader, i) => {
        if (i > 0) w.blank();
        w.line(reader);
      });
    }
    for (const fn of this.#functions) {
      w.blank();
      w.line(fn);
    }
  }
}

/** One part of a large ruleset (see the top of this file), ready to instantiate. */
export interface GeneratedPart {
  /** `(function (rt, refs) { ... return function rulesN(payload, now, failures) { ... }; })` */
  source: string;
  /** The ruleset's refs so far: everything this part reads is in it. */
  refs: Readonly<Record<string, unknown>>;
}

/** How generation ends: one factory, or parts and the frame that calls them in order. */
export type GeneratedLayout =
  | ({ kind: 'whole' } & GeneratedSource)
  | { kind: 'parts'; frame: PartsFrame; refs: Readonly<Record<string, unknown>>; origins: Readonly<Record<string, RefOrigin>> };

/** How many rules, and how many characters of rule text, one part holds at most. */
export interface PartLimits {
  rules: number;
  textLength: number;
}

/**
 * Rules are split into parts because V8 does not optimize functions past a
 * bytecode size: one function of thousands of rules stays unoptimized and
 * runs markedly slower. The rule count per part is the one that measured
 * fastest on a 1000-rule context in the compiler benchmark. The text bound
 * keeps a part whose rules each hold kilobytes of expression and message
 * small enough to generate and instantiate quickly.
 */
export const PART_LIMITS: Readonly<PartLimits> = Object.freeze({ rules: 128, textLength: 65_536 });

/**
 * The validate function of a ruleset in parts, apart from the parts: it
 * calls `rules0`, `rules1`, ... in order with the one failures array.
 */
export class PartsFrame {
  readonly #naming: Naming;
  readonly #parts: readonly Name[];
  readonly #clock: Name | undefined;
  readonly #validate: Code;

  constructor(naming: Naming, parts: readonly Name[], clock: Name | undefined, validate: Code) {
    this.#naming = naming;
    this.#parts = parts;
    this.#clock = clock;
    this.#validate = validate;
  }

  /** `(function (rt, rules0, rules1, ...) { ... return function validate ... })`, called with the instantiated parts. */
  combinerSource(): string {
    const n = this.#naming.names;
    const w = new CodeWriter();
    w.block(_`(function (${n.rt}, ${join(this.#parts)})`, () => {
      w.line(_`"use strict";`);
      if (this.#clock !== undefined) w.line(_`const { ${this.#clock} } = ${n.rt};`);
      w.line(this.#validate);
    }, _`)`);
    return w.toCode().toString();
  }

  /**
   * The ruleset's whole factory: each part's factory called inline, then
   * validate. `partSources` are the parts' sources in order, as this module
   * generated them (the service reads them back from V8 rather than keep a
   * copy); they are laid out as they are, never parsed or altered.
   */
  compose(partSources: readonly string[]): string {
    return composeParts(this.plain(), partSources);
  }

  /** The frame as plain data, for a thread other than the one that generated it (`composeParts`). */
  plain(): PlainPartsFrame {
    const n = this.#naming.names;
    return {
      rt: n.rt.toString(),
      refs: n.refs.toString(),
      parts: this.#parts.map((name) => name.toString()),
      ...(this.#clock === undefined ? {} : { clock: this.#clock.toString() }),
      validate: this.#validate.toString(),
    };
  }
}

/** What `composeParts` needs of a PartsFrame: generated names and code only, no tenant text outside literals. */
export interface PlainPartsFrame {
  readonly rt: string;
  readonly refs: string;
  readonly parts: readonly string[];
  readonly clock?: string;
  /** The `return function validate(payload, now) { ... };` statement. */
  readonly validate: string;
}

/** `PartsFrame.compose` over the frame's plain data: the same text, on whichever thread holds the parts. */
export function composeParts(frame: PlainPartsFrame, partSources: readonly string[]): string {
  if (partSources.length !== frame.parts.length) throw new TypeError('codegen: one source per part is needed');
  const lines: Array<readonly [number, string]> = [
    [0, `(function (${frame.rt}, ${frame.refs}) {`],
    [1, '"use strict";'],
  ];
  if (frame.clock !== undefined) lines.push([1, `const { ${frame.clock} } = ${frame.rt};`]);
  frame.parts.forEach((name, i) => {
    lines.push([0, '']);
    lines.push([1, `const ${name} = ${partSources[i]}(${frame.rt}, ${frame.refs});`]);
  });
  lines.push([0, '']);
  lines.push([1, frame.validate]);
  lines.push([0, '})']);
  return layout(lines).toString();
}

/**
 * Generates the factory source for rules already sorted in evaluation order.
 *
 * @example
 * const { source, refs } = generateRuleset(plans);
 * const validate = new Function(`return (${source});`)()(runtime, refs);
 */
export function generateRuleset(plans: readonly RulePlan[], limits: Readonly<PartLimits> = PART_LIMITS): GeneratedSource {
  return runSteps(generateSourceSteps(plans, limits));
}

/** `generateRuleset`, one rule a step. */
export function* generateSourceSteps(plans: readonly RulePlan[], limits: Readonly<PartLimits> = PART_LIMITS): Steps<GeneratedSource> {
  const steps = generateRulesetSteps(plans, limits);
  const parts: string[] = [];
  for (;;) {
    const step = steps.next();
    if (step.done) {
      const generated = step.value;
      if (generated.kind === 'whole') return { source: generated.source, refs: generated.refs, origins: generated.origins };
      return { source: generated.frame.compose(parts), refs: generated.refs, origins: generated.origins };
    }
    if (step.value !== undefined) parts.push(step.value.source);
    yield;
  }
}

/**
 * `generateRuleset` one rule at a time: yields after each rule, and yields
 * each part of a ruleset in parts as soon as it is written, so that a
 * caller can instantiate it and let other work run in between.
 */
export function* generateRulesetSteps(
  plans: readonly RulePlan[],
  limits: Readonly<PartLimits> = PART_LIMITS,
  options: GenerateOptions = {},
): Generator<GeneratedPart | undefined, GeneratedLayout> {
  const naming = new Naming(options);
  const groups = naming.explain === undefined ? partition(plans, limits) : [[...plans]];
  const n = naming.names;
  const x = naming.explain;
  let usesNow = false;
  const onNow = (): void => {
    usesNow = true;
  };
  const returnResult = (w: CodeWriter): void => {
    if (x !== undefined) {
      w.line(_`return { isValid: ${n.failures}.length === 0, totalRulesEvaluated: ${n.evaluated}, failures: ${n.failures}, ${x.trace} };`);
      return;
    }
    w.line(_`return { isValid: ${n.failures}.length === 0, totalRulesEvaluated: ${n.evaluated}, failures: ${n.failures} };`);
  };

  if (groups.length === 1) {
    const d = new Declarations(naming);
    const body = yield* ruleBodies(groups[0], d, onNow);
    // Bound before the prelude is written, so that the helper list includes it.
    const clock = usesNow ? d.helper('clock') : undefined;
    const w = new CodeWriter();
    // Parenthesized: the text is then both an expression and a valid script.
    w.block(_`(function (${n.rt}, ${n.refs})`, () => {
      w.line(_`"use strict";`);
      d.prelude(w);
      w.blank();
      w.block(_`return function ${n.validate}(${n.payload}, ${n.now})`, () => {
        if (clock !== undefined) w.line(_`${n.now} = ${clock}(${n.now});`);
        w.line(_`const ${n.failures} = [];`);
        w.line(_`let ${n.evaluated} = 0;`);
        if (x !== undefined) w.line(_`const ${x.trace} = [];`);
        w.embed(body);
        w.blank();
        returnResult(w);
      }, _`;`);
    }, _`)`);
    return { kind: 'whole', source: w.toCode().toString(), refs: Object.freeze({ ...naming.refs }), origins: Object.freeze({ ...naming.origins }) };
  }

  const names: Name[] = [];
  for (const group of groups) {
    const d = new Declarations(naming);
    const name = naming.scope.name('rules');
    const body = yield* ruleBodies(group, d, onNow);
    const w = new CodeWriter();
    w.block(_`(function (${n.rt}, ${n.refs})`, () => {
      w.line(_`"use strict";`);
      d.prelude(w);
      w.blank();
      w.block(_`return function ${name}(${n.payload}, ${n.now}, ${n.failures})`, () => {
        w.line(_`let ${n.evaluated} = 0;`);
        w.embed(body);
        w.blank();
        w.line(_`return ${n.evaluated};`);
      }, _`;`);
    }, _`)`);
    names.push(name);
    yield { source: w.toCode().toString(), refs: naming.refs };
  }
  const clock = usesNow ? naming.helper('clock') : undefined;
  const v = new CodeWriter();
  v.block(_`return function ${n.validate}(${n.payload}, ${n.now})`, () => {
    if (clock !== undefined) v.line(_`${n.now} = ${clock}(${n.now});`);
    v.line(_`const ${n.failures} = [];`);
    v.line(_`let ${n.evaluated} = 0;`);
    for (const name of names) v.line(_`${n.evaluated} += ${name}(${n.payload}, ${n.now}, ${n.failures});`);
    v.blank();
    returnResult(v);
  }, _`;`);
  return {
    kind: 'parts',
    frame: new PartsFrame(naming, names, clock, v.toCode()),
    refs: Object.freeze({ ...naming.refs }),
    origins: Object.freeze({ ...naming.origins }),
  };
}

/** Rules in evaluation order cut into parts within `limits`; one part when they all fit (or there are none). */
function partition(plans: readonly RulePlan[], limits: Readonly<PartLimits>): RulePlan[][] {
  const groups: RulePlan[][] = [];
  let current: RulePlan[] = [];
  let text = 0;
  for (const plan of plans) {
    if (current.length > 0 && (current.length >= limits.rules || text + plan.textLength > limits.textLength)) {
      groups.push(current);
      current = [];
      text = 0;
    }
    current.push(plan);
    text += plan.textLength;
  }
  if (current.length > 0 || groups.length === 0) groups.push(current);
  return groups;
}

/** The blocks of a part's rules, after the payload reads they share; yields after each rule. */
function* ruleBodies(plans: readonly RulePlan[], d: Declarations, onNow: () => void): Generator<undefined, CodeWriter> {
  const body = new CodeWriter();
  d.plain(d.names.payload);
  const shared = new SharedReads(plans, d);
  const groups = d.naming.fuseLoops ? fusibleLoops(plans) : [];
  const fused = new FusedLoops();
  for (const [index, plan] of plans.entries()) {
    for (const group of groups) if (group.first === index) fused.emitLoop(body, group, plans, d, onNow, shared);
    body.blank();
    // Only the code, which is restricted to [A-Za-z0-9_.-]: free text such
    // as the name stays inside string literals (the rule's meta line).
    body.line(commentOf`rule ${plan.code}`);
    d.currentRule = plan.code;
    const member = fused.member(index);
    if (member !== undefined) fused.emitFlush(body, member, d);
    else new RuleEmitter(plan, d, onNow, shared, fused.precomputed).emit(body);
    yield;
  }
  // Declared last, when the rules' code says which flags it reads.
  const head = new CodeWriter();
  d.declarePlain(head, d.names.payload);
  shared.declare(head, d);
  head.embed(body);
  return head;
}

/** Where a `forEach` rule's failures go inside a fused loop: its own buffer, and the count of all buffered failures. */
interface FailureSink {
  buffer: Name;
  pending: Name;
}

/** A `forEach` rule whose elements a fused loop checked: the loop's array and the rule's buffered failures. */
interface FusedMember {
  list: Name;
  sink: FailureSink;
}

/**
 * The fused loops of one generated function (fuse-loops.ts): each written
 * before the block of its first pass, with the sums it computes for the
 * rules that use them, and each `forEach` rule's failures kept aside for
 * its own block to add in order.
 */
class FusedLoops {
  readonly #members = new Map<number, FusedMember>();
  /** The sums computed by the loops, by call node: what the rules' expressions read instead. */
  readonly precomputed = new Map<Expr, Code>();

  member(index: number): FusedMember | undefined {
    return this.#members.get(index);
  }

  /**
   * `const listN = <array>; let totalN; let bufN = null; ...` then one loop:
   * each sum adds its element's term (stopping once invalid, as its own
   * loop returns there), then each `forEach` rule checks the element.
   */
  emitLoop(w: CodeWriter, group: LoopGroup, plans: readonly RulePlan[], d: Declarations, onNow: () => void, shared: SharedReads): void {
    const n = d.names;
    const list = d.scope.name('list');
    const codes = [...new Set([...group.sums.map((s) => s.rule), ...group.rules])].sort((a, b) => a - b).map((i) => plans[i].code);
    w.blank();
    w.line(commentOf`one pass over the array for rules ${codes.join(', ')}; each rule's failures are added at its own place`);
    w.line(_`const ${list} = ${shared.read(n.payload, group.keys, d)};`);
    const totals = new Map<string, { name: Name; body: Expr }>();
    for (const sum of group.sums) {
      const key = structuralKey(sum.callback.body);
      let total = totals.get(key);
      if (total === undefined) {
        total = { name: d.scope.name('total'), body: sum.callback.body };
        totals.set(key, total);
        w.line(_`let ${total.name};`);
      }
      this.precomputed.set(sum.call, total.name);
    }
    const pending = group.rules.length > 0 ? d.scope.name('pending') : undefined;
    if (pending !== undefined) w.line(_`let ${pending} = 0;`);
    const members: { index: number; sink: FailureSink }[] = [];
    for (const index of group.rules) {
      const buffer = d.scope.name('buf');
      w.line(_`let ${buffer} = null;`);
      const sink = { buffer, pending: pending as Name };
      members.push({ index, sink });
      this.#members.set(index, { list, sink });
    }
    const temps: Name[] = [];
    const env: Env = {
      payload: n.payload,
      get now() {
        onNow();
        return n.now;
      },
      value: lit(undefined),
      item: lit(undefined),
      index: lit(undefined),
      expected: lit(undefined),
      params: [n.item],
      temp: () => {
        const t = d.scope.name('t');
        temps.push(t);
        return t;
      },
      shared: (keys) => shared.find(keys),
      readField: (key, object) => d.inlineRead(key, object),
    };
    const element = (loop: CodeWriter): void => {
      for (const { name, body } of totals.values()) {
        // runtime.add(total, term) written in place (a number plus a number, else invalid; an
        // infinite total invalid too): the validator is too large for V8 to inline every helper.
        const term = d.scope.name('term');
        loop.block(_`if (${name} === ${name})`, () => {
          loop.line(_`const ${term} = ${generateExpression(body, env, d, n)};`);
          loop.line(_`${name} = typeof ${term} === "number" ? ${name} + ${term} : NaN;`);
          loop.line(_`if (${name} - ${name} !== 0) ${name} = NaN;`);
        });
      }
      for (const { index, sink } of members) {
        d.currentRule = plans[index].code;
        new RuleEmitter(plans[index], d, onNow, shared).fusedElement(loop, d.scope.name('rule'), sink);
      }
    };
    const elementCode = new CodeWriter();
    d.withSharedElementReads(elementCode, n.item, element);
    w.block(_`if (${d.helper('isArray')}(${list}))`, () => {
      for (const { name } of totals.values()) w.line(_`${name} = 0;`);
      w.block(_`for (let ${n.index} = 0; ${n.index} < ${list}.length; ${n.index}++)`, () => {
        w.line(_`const ${n.item} = ${list}[${n.index}];`);
        if (temps.length > 0) w.line(_`let ${join(temps)};`);
        w.embed(elementCode);
      });
    });
  }

  /** A fused `forEach` rule's block: counted when its array is one, and its kept failures added here, in order. */
  emitFlush(w: CodeWriter, member: FusedMember, d: Declarations): void {
    const n = d.names;
    const { buffer } = member.sink;
    w.braces(() => {
      w.block(_`if (${d.helper('isArray')}(${member.list}))`, () => {
        w.line(_`${n.evaluated}++;`);
        w.block(_`if (${buffer} !== null)`, () => {
          w.line(_`for (let ${n.i} = 0; ${n.i} < ${buffer}.length; ${n.i}++) ${n.failures}.push(${buffer}[${n.i}]);`);
          w.line(_`if (${n.failures}.length > ${MAX_FAILURES_PER_VALIDATION}) ${d.helper('tooManyFailures')}();`);
        });
      });
    });
  }
}

/**
 * Payload paths that the rules of one generated function read more than
 * once, such as `loan` in `loan.amount` and `loan.currency`: read once at
 * the top of the function into a const, which the rules then start from. Reads are total
 * and the payload does not change during a validation, so reading earlier
 * changes nothing but the count of reads. Only the reads a rule makes
 * whenever it runs are counted (its fieldPath, forEach path, `when` and
 * expression), not those of failure messages.
 */
class SharedReads {
  readonly #values = new Map<string, Name>();
  readonly #lines: { name: Name; code: Code }[] = [];

  constructor(plans: readonly RulePlan[], d: Declarations) {
    const counts = new Map<string, number>();
    for (const plan of plans) {
      for (const keys of readsOf(plan)) {
        for (let n = 1; n <= keys.length; n++) {
          const prefix = JSON.stringify(keys.slice(0, n));
          counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
        }
      }
    }
    const shared = [...counts].filter(([, count]) => count > 1).map(([prefix]) => JSON.parse(prefix) as (string | number)[]);
    // Shorter paths first: a longer one starts from the value of its prefix.
    shared.sort((a, b) => a.length - b.length);
    for (const keys of shared) {
      const name = d.scope.name('field');
      this.#lines.push({ name, code: _`const ${name} = ${this.read(d.names.payload, keys, d)};` });
      d.plain(name);
      this.#values.set(JSON.stringify(keys), name);
    }
  }

  /** The value of the longest shared prefix of `keys`, and how many keys it covers. */
  find(keys: readonly (string | number)[]): { code: Code; length: number } | undefined {
    for (let n = keys.length; n > 0; n--) {
      const name = this.#values.get(JSON.stringify(keys.slice(0, n)));
      if (name !== undefined) return { code: name, length: n };
    }
    return undefined;
  }

  /** `keys` read from `payload`, from the longest shared prefix on. */
  read(payload: Name, keys: readonly (string | number)[], d: Declarations): Code {
    const found = this.find(keys);
    let code: Code = found?.code ?? payload;
    for (const key of keys.slice(found?.length ?? 0)) code = d.inlineRead(key, code);
    return code;
  }

  /** The shared reads, each followed by its flag when reads from it use one (`Declarations.plain`). */
  declare(w: CodeWriter, d: Declarations): void {
    for (const { name, code } of this.#lines) {
      w.line(code);
      d.declarePlain(w, name);
    }
  }
}

/**
 * The payload paths a rule reads whenever it runs (see SharedReads), as key
 * lists: its forEach list, its fieldPath unless inside the list (read from
 * each element), and what `when` and the expression read other than the
 * fieldPath again (they reuse `value`).
 */
function readsOf(plan: RulePlan): (string | number)[][] {
  const reads: (string | number)[][] = [];
  const field = plan.fieldPath?.segments;
  const fieldIsRead = field !== undefined && !field.some((s) => 'each' in s);
  if (plan.forEach !== undefined) reads.push(plainKeys(plan.forEach.segments));
  if (fieldIsRead) reads.push(plainKeys(field));
  const value = fieldIsRead && plainKeys(field).length === field.length ? JSON.stringify(plainKeys(field)) : undefined;
  for (const e of [plan.when, plan.expression]) {
    if (e !== undefined) reads.push(...payloadReads(e).filter((keys) => JSON.stringify(keys) !== value));
  }
  for (const input of plan.table?.inputs ?? []) {
    if (input.path !== undefined) reads.push(plainKeys(input.path.segments));
    else if (input.expression !== undefined) reads.push(...payloadReads(input.expression));
  }
  return reads.filter((keys) => keys.length > 0);
}

/** The keys of a path up to its first `[]` or `length` (read by the `length` helper, not a reader). */
function plainKeys(segments: readonly PathSegment[]): (string | number)[] {
  const keys: (string | number)[] = [];
  for (const s of segments) {
    if ('each' in s || ('key' in s && s.key === 'length')) break;
    keys.push('key' in s ? s.key : s.index);
  }
  return keys;
}

/** Writes one rule's block. */
class RuleEmitter {
  readonly #plan: RulePlan;
  readonly #d: Declarations;
  readonly #n: FixedNames & Declarations['names'];
  readonly #temps: Name[] = [];
  readonly #meta: Name;
  readonly #onNow: () => void;
  readonly #shared: SharedReads;
  /** `$row` and `$rowIndex` where the code being written has them (a table rule's matched row). */
  #row: { row: Code; index: Code } | undefined;
  /** What ends one element's checks early: `continue` in the rule's own loop, `break label` in a fused one. */
  #skip: Code = _`continue`;
  /** Where failures go instead of `failures`, inside a fused loop. */
  #sink: FailureSink | undefined;
  readonly #precomputed: ReadonlyMap<Expr, Code> | undefined;

  constructor(plan: RulePlan, d: Declarations, onNow: () => void, shared: SharedReads, precomputed?: ReadonlyMap<Expr, Code>) {
    this.#plan = plan;
    this.#d = d;
    this.#n = d.names;
    this.#meta = d.meta(plan);
    this.#onNow = onNow;
    this.#shared = shared;
    this.#precomputed = precomputed;
  }

  /** The environment of the rule's expressions; `value` and `expected` may be overridden for schema failures. */
  env(value: Code, expected: Code): Env {
    const n = this.#n;
    const forEach = this.#plan.forEach !== undefined;
    const onNow = this.#onNow;
    const temps = this.#temps;
    const scope = this.#d.scope;
    const shared = this.#shared;
    return {
      payload: n.payload,
      get now() {
        onNow();
        return n.now;
      },
      value,
      item: forEach ? n.item : lit(undefined),
      index: forEach ? n.index : lit(undefined),
      expected,
      row: this.#row?.row,
      rowIndex: this.#row?.index,
      params: [],
      temp: () => {
        const t = scope.name('t');
        temps.push(t);
        return t;
      },
      valuePath: value === this.#n.value ? this.#valuePath : undefined,
      shared: (keys) => shared.find(keys),
      precomputed: this.#precomputed,
      readField: (key, object) => this.#d.inlineRead(key, object),
    };
  }

  /** Where `value` comes from, when it is a plain read of the fieldPath. */
  get #valuePath(): Env['valuePath'] {
    const field = this.#plan.fieldPath;
    if (field === undefined) return undefined;
    const eachAt = field.segments.findIndex((s) => 'each' in s);
    const keysOf = (segments: readonly PathSegment[]): (string | number)[] =>
      segments.map((s) => ('key' in s ? s.key : 'index' in s ? s.index : ''));
    return eachAt < 0
      ? { root: 'payload', keys: keysOf(field.segments) }
      : { root: 'item', keys: keysOf(field.segments.slice(eachAt + 1)) };
  }

  expectedCode(): Code {
    const rowOutput = this.#plan.expectedRowOutput;
    if (rowOutput !== undefined && this.#row !== undefined) return _`${this.#d.reader(rowOutput)}(${this.#row.row})`;
    const expected = this.#plan.expected;
    if (expected === undefined) return lit(null);
    const v = expected.value;
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return lit(v);
    return this.#d.constant(v);
  }

  /** The value the rule is about: at fieldPath, else the payload. */
  valueName(): Code {
    return this.#plan.fieldPath === undefined ? this.#n.payload : this.#n.value;
  }

  emit(w: CodeWriter): void {
    const plan = this.#plan;
    const n = this.#n;
    const inner = new CodeWriter();
    if (plan.forEach === undefined) {
      const fieldPath = plan.fieldPath;
      const whenCode = plan.when === undefined ? undefined : this.isTrue(plan.when, this.valueName());
      // A `when` whose code does not name the value (neither `$value` nor a read of the fieldPath, which
      // the code names `value` too) is decided first, and the field read only where the rule runs:
      // reads are total, so reading later changes nothing but the count. The explaining variant reports the value either way.
      const readFirst = fieldPath !== undefined
        && (whenCode === undefined || this.#d.naming.explain !== undefined || namesIdentifier(whenCode, n.value));
      const readValue = (): void => {
        if (fieldPath !== undefined) inner.line(_`const ${n.value} = ${this.read(n.payload, fieldPath.segments)};`);
      };
      if (readFirst) readValue();
      const core = (): void => {
        if (!readFirst) readValue();
        this.core(inner, lit(fieldPath?.text ?? ''), false);
      };
      if (whenCode === undefined) core();
      else this.#ifElse(inner, _`if (${whenCode})`, core, 'when-false');
    } else {
      this.forEach(inner, plan.forEach.segments);
    }
    const x = this.#d.naming.explain;
    w.braces(() => {
      if (this.#temps.length > 0) w.line(_`let ${join(this.#temps)};`);
      if (x !== undefined) {
        w.line(_`const ${x.mark} = ${n.failures}.length;`);
        w.line(_`let ${x.why} = null;`);
        if (plan.forEach !== undefined) w.line(_`const ${x.elements} = [];`);
        if (plan.table !== undefined) w.line(_`const ${x.matched} = [];`);
        if (plan.table !== undefined) w.line(_`let ${x.closest} = null;`);
      }
      w.embed(inner);
      if (x !== undefined) {
        const value = plan.forEach === undefined && plan.fieldPath !== undefined ? n.value : lit(undefined);
        const elements = plan.forEach === undefined ? lit(null) : x.elements;
        const matched = plan.table === undefined ? lit(null) : x.matched;
        const closest = plan.table === undefined ? lit(null) : x.closest;
        w.line(_`${x.trace}.push([${x.why}, ${n.failures}.length - ${x.mark}, ${value}, ${elements}, ${matched}, ${closest}]);`);
      }
    });
  }

  /**
   * `head { body }`; in the explaining variant also `else why = reason`,
   * the reason the rule was skipped when `head` does not hold.
   */
  #ifElse(w: CodeWriter, head: Code, body: () => void, reason: 'when-false' | 'field-missing'): void {
    const x = this.#d.naming.explain;
    if (x === undefined) {
      w.block(head, body);
      return;
    }
    w.open(head);
    body();
    w.reopen(_`else`);
    w.line(_`${x.why} = ${reason};`);
    w.close();
  }

  forEach(w: CodeWriter, listPath: PathSegment[]): void {
    const plan = this.#plan;
    const n = this.#n;
    const field = plan.fieldPath;
    const eachAt = field === undefined ? -1 : field.segments.findIndex((s) => 'each' in s);
    const x = this.#d.naming.explain;
    w.line(_`const ${n.list} = ${this.read(n.payload, listPath)};`);
    this.#ifElse(w, _`if (${this.#d.helper('isArray')}(${n.list}))`, () => {
      // A fieldPath outside the array is the same for every element: missing and not
      // required, the whole rule is skipped, and not counted (docs/rule-language.md).
      const shared = field !== undefined && eachAt < 0;
      if (shared) w.line(_`const ${n.value} = ${this.read(n.payload, field.segments)};`);
      const elements = (): void => {
        w.line(_`${n.evaluated}++;`);
        w.block(_`for (let ${n.index} = 0; ${n.index} < ${n.list}.length; ${n.index}++)`, () => {
          if (x !== undefined) {
            // `continue` in the do-while ends the element, and its failures are counted after it.
            w.line(_`const ${x.start} = ${n.failures}.length;`);
            w.open(_`do`);
          }
          w.line(_`const ${n.item} = ${n.list}[${n.index}];`);
          this.#d.withPlain(w, n.item, (inner) => this.element(inner));
          if (x !== undefined) {
            w.close();
            w.line(_`while (false);`);
            w.line(_`if (${n.failures}.length > ${x.start}) ${x.elements}.push(${n.index});`);
          }
        });
      };
      if (shared && !plan.required) this.#ifElse(w, _`if (${n.value} !== undefined && ${n.value} !== null)`, elements, 'field-missing');
      else elements();
    }, 'field-missing');
  }

  /** One element's checks, once `item` and `index` are set; `#skip` ends the element early. */
  element(w: CodeWriter): void {
    const plan = this.#plan;
    const n = this.#n;
    const field = plan.fieldPath;
    const eachAt = field === undefined ? -1 : field.segments.findIndex((s) => 'each' in s);
    if (field !== undefined && eachAt >= 0) {
      w.line(_`const ${n.value} = ${this.read(n.item, field.segments.slice(eachAt + 1))};`);
    }
    if (plan.when !== undefined) w.line(_`if (!(${this.isTrue(plan.when, this.valueName())})) ${this.#skip};`);
    let path: Code;
    if (field === undefined) path = lit('');
    else if (eachAt < 0) path = lit(field.text);
    else {
      const [before, after] = splitAtEach(field.text);
      path = _`${`${before}[`} + ${n.index} + ${`]${after}`}`;
    }
    this.core(w, path, true);
  }

  /**
   * This `forEach` rule's checks of one element inside a fused loop
   * (fuse-loops.ts), in a labelled block that `break` leaves as `continue`
   * leaves the rule's own loop; its failures go to `sink.buffer`, which the
   * rule's own block adds to the failures at its place.
   */
  fusedElement(w: CodeWriter, label: Name, sink: FailureSink): void {
    this.#skip = _`break ${label}`;
    this.#sink = sink;
    const inner = new CodeWriter();
    this.element(inner);
    w.block(_`${label}:`, () => {
      if (this.#temps.length > 0) w.line(_`let ${join(this.#temps)};`);
      w.embed(inner);
    });
  }

  /** Missing-field handling, then the checks; `inLoop` skips an element with `#skip`. */
  core(w: CodeWriter, path: Code, inLoop: boolean): void {
    const plan = this.#plan;
    const n = this.#n;
    if (plan.fieldPath === undefined) {
      if (!inLoop) w.line(_`${n.evaluated}++;`);
      this.checks(w, path);
      return;
    }
    const missing = _`${n.value} === undefined || ${n.value} === null`;
    if (inLoop) {
      if (plan.required) {
        w.block(_`if (${missing})`, () => {
          this.pushFailure(w, this.message(n.value, this.expectedCode(), true), path, lit(null), this.expectedCode());
          w.line(_`${this.#skip};`);
        });
      } else {
        w.line(_`if (${missing}) ${this.#skip};`);
      }
      this.checks(w, path);
      return;
    }
    if (plan.required) {
      w.open(_`if (${missing})`);
      w.line(_`${n.evaluated}++;`);
      this.pushFailure(w, this.message(n.value, this.expectedCode(), true), path, lit(null), this.expectedCode());
      w.reopen(_`else`);
      w.line(_`${n.evaluated}++;`);
      this.checks(w, path);
      w.close();
    } else {
      this.#ifElse(w, _`if (${n.value} !== undefined && ${n.value} !== null)`, () => {
        w.line(_`${n.evaluated}++;`);
        this.checks(w, path);
      }, 'field-missing');
    }
  }

  /** Schema, then expression: a value that fails its schema is not also judged by the expression. */
  checks(w: CodeWriter, path: Code): void {
    const plan = this.#plan;
    const n = this.#n;
    const value = this.valueName();
    const expression = plan.expression;
    const actual = plan.fieldPath === undefined ? lit(null) : n.value;
    const failExpression = (): void =>
      this.pushFailure(w, this.message(value, this.expectedCode()), path, actual, this.expectedCode());
    if (plan.schema === undefined) {
      if (plan.table !== undefined) this.table(w, plan.table, path);
      else if (expression !== undefined) w.block(_`if (!(${this.isTrue(expression, value)}))`, failExpression);
      return;
    }
    // Ajv keeps the schema it compiled (the policy-checked copy) on the function.
    const validator = this.#d.ref('sv', plan.schema, { kind: 'schema', schema: plan.schema.schema });
    const failuresOf = this.#d.schemaFailures();
    w.line(_`const ${n.errors} = ${this.#d.helper('check')}(${validator}, ${value});`);
    w.open(_`if (${n.errors} !== null)`);
    w.line(_`const ${n.found} = ${failuresOf}(${n.errors}, ${path}, ${value});`);
    w.block(_`for (let ${n.i} = 0; ${n.i} < ${n.found}.length; ${n.i}++)`, () => {
      w.line(_`const ${n.f} = ${n.found}[${n.i}];`);
      const actual = _`${n.f}.actualValue`;
      const expected = plan.givenExpected === undefined ? _`${n.f}.expectedValue` : this.expectedCode();
      const message = plan.message === undefined
        ? _`${`${plan.name}: `} + ${n.f}.message`
        // `$value` is the offending value; at the payload root that is the value checked, though actualValue is null there.
        : this.template(plan.message, _`(${n.f}.fieldPath === "" ? ${value} : ${n.f}.actualValue)`, expected, {
          expectedIsConstant: plan.givenExpected !== undefined, valueIsMissing: false,
        });
      this.pushFailure(w, message, _`${n.f}.fieldPath`, actual, expected);
    });
    if (plan.table !== undefined) {
      const table = plan.table;
      w.reopen(_`else`);
      this.table(w, table, path);
    } else if (expression !== undefined) {
      w.reopen(_`else if (!(${this.isTrue(expression, value)}))`);
      failExpression();
    }
    w.close();
  }

  /**
   * A decision table: its inputs into the index's slots, the search of the
   * hit policy, then the rule's expression for the matched row (`$row`,
   * `$rowIndex`), or `noMatch`.
   */
  table(w: CodeWriter, table: TablePlan, path: Code): void {
    const d = this.#d;
    const n = this.#n;
    const x = d.naming.explain;
    const index = d.table(table, this.#onNow);
    table.inputs.forEach((input, i) => {
      const code = input.path !== undefined
        ? this.read(n.payload, input.path.segments)
        : generateExpression(input.expression as Expr, this.env(this.valueName(), this.expectedCode()), d, n);
      w.line(_`${index}.values[${i}] = ${code};`);
    });
    // Before the search, which clears the inputs; kept only when no row matches.
    const closest = x === undefined ? undefined : d.scope.name('closest');
    if (x !== undefined && closest !== undefined) w.line(_`const ${closest} = ${index}.closest(${n.payload}, ${n.now});`);
    const noteClosest = (found: Code): void => {
      if (x !== undefined && closest !== undefined) w.line(_`if (${found}) ${x.closest} = ${closest};`);
    };
    if (table.hitPolicy === 'first') {
      const match = d.scope.name('match');
      w.line(_`const ${match} = ${index}.first(${n.payload}, ${n.now});`);
      if (x !== undefined) w.line(_`if (${match} >= 0) ${x.matched}.push(${match});`);
      noteClosest(_`${match} < 0`);
      w.open(_`if (${match} < 0)`);
      this.noMatch(w, table, index, path);
      w.reopen(_`else`);
      this.judgeRow(w, _`${index}.rows[${match}]`, match, path, false);
      w.close();
      return;
    }
    const matches = d.scope.name('matches');
    w.line(_`const ${matches} = ${index}.all(${n.payload}, ${n.now});`);
    if (x !== undefined) w.line(_`${x.matched}.push(...${matches});`);
    noteClosest(_`${matches}.length === 0`);
    w.open(_`if (${matches}.length === 0)`);
    this.noMatch(w, table, index, path);
    if (table.hitPolicy === 'collect') {
      w.reopen(_`else`);
      const k = d.scope.name('k');
      w.block(_`for (let ${k} = 0; ${k} < ${matches}.length; ${k}++)`, () => {
        const match = d.scope.name('match');
        w.line(_`const ${match} = ${matches}[${k}];`);
        this.judgeRow(w, _`${index}.rows[${match}]`, match, path, true);
      });
      w.close();
      return;
    }
    const unique = table.hitPolicy === 'unique';
    const other = d.scope.name('other');
    const conflict = unique ? _`${matches}.length > 1 ? ${matches}[1] : -1` : _`${index}.differing(${matches})`;
    w.reopen(_`else`);
    w.line(_`const ${other} = ${conflict};`);
    w.open(_`if (${other} >= 0)`);
    const meta = d.meta(this.#plan, unique ? TABLE_ERROR_CODES.notUnique : TABLE_ERROR_CODES.outputsDiffer);
    const why = unique ? ' both match, and the hit policy unique allows one' : ' match with different outputs, and the hit policy any needs them equal';
    const message = _`${`${this.#plan.name}: table rows `} + ${matches}[0] + ${' and '} + ${other} + ${why}`;
    const record = _`${d.helper('failure')}(${meta}, ${message}, ${path}, ${this.#actual()}, null)`;
    w.line(_`if (${n.failures}.push(${record}) > ${MAX_FAILURES_PER_VALIDATION}) ${d.helper('tooManyFailures')}();`);
    w.reopen(_`else`);
    this.judgeRow(w, _`${index}.rows[${matches}[0]]`, _`${matches}[0]`, path, false);
    w.close();
    w.close();
  }

  /** What a table does when no row matches: fail, pass, or judge its default row (`$rowIndex` null). */
  noMatch(w: CodeWriter, table: TablePlan, index: Name, path: Code): void {
    if (table.noMatch === 'pass') {
      w.line(_`// no row matches: the rule passes (noMatch "pass")`);
      return;
    }
    if (table.noMatch === 'fail') {
      // A message written about the matched row (it names $row or $rowIndex) would have nothing to say here.
      const aboutRow = this.#plan.message?.some((part) => part.kind === 'expr' && (rootsOf(part.expr).has('row') || rootsOf(part.expr).has('rowIndex')));
      const message = aboutRow === true || this.#plan.message === undefined
        ? lit(`${this.#plan.name}: no row of its table matches`)
        : this.message(this.valueName(), this.expectedCode());
      this.pushFailure(w, message, path, this.#actual(), this.expectedCode());
      return;
    }
    this.judgeRow(w, _`${index}.otherwise`, lit(null), path, false);
  }

  /**
   * The rule's expression for one row; without an expression a match
   * passes. `named` (hit policy collect) adds the row to the message, so
   * that each failure says which row it is about.
   */
  judgeRow(w: CodeWriter, row: Code, rowIndex: Code, path: Code, named: boolean): void {
    const plan = this.#plan;
    const expression = plan.expression;
    if (expression === undefined) {
      w.line(_`// a row matches: the rule passes (it has no expression)`);
      return;
    }
    const name = this.#d.scope.name('row');
    w.line(_`const ${name} = ${row};`);
    this.#row = { row: name, index: rowIndex };
    w.block(_`if (!(${this.isTrue(expression, this.valueName())}))`, () => {
      const base = this.message(this.valueName(), this.expectedCode());
      const message = named ? _`${base} + ${' (table.rows['} + ${rowIndex} + ${'])'}` : base;
      this.pushFailure(w, message, path, this.#actual(), this.expectedCode());
    });
    this.#row = undefined;
  }

  /** The failure's actualValue: the fieldPath's value, else null. */
  #actual(): Code {
    return this.#plan.fieldPath === undefined ? lit(null) : this.#n.value;
  }

  pushFailure(w: CodeWriter, message: Code, path: Code, actual: Code, expected: Code): void {
    const n = this.#n;
    const record = _`${this.#d.helper('failure')}(${this.#meta}, ${message}, ${path}, ${actual}, ${expected})`;
    const sink = this.#sink;
    if (sink !== undefined) {
      // Kept aside until the rule's place; counted with the failures so far, so the bound holds as before.
      w.line(_`(${sink.buffer} ??= []).push(${record});`);
      w.line(_`if (${n.failures}.length + ++${sink.pending} > ${MAX_FAILURES_PER_VALIDATION}) ${this.#d.helper('tooManyFailures')}();`);
      return;
    }
    // push returns the new length: the bound costs one comparison per failure, nothing on passing rules.
    w.line(_`if (${n.failures}.push(${record}) > ${MAX_FAILURES_PER_VALIDATION}) ${this.#d.helper('tooManyFailures')}();`);
  }

  isTrue(e: Expr, value: Code): Code {
    return generateIsTrue(e, this.env(value, this.expectedCode()), this.#d, this.#n, isBoolean(e));
  }

  /** The failure message; `valueIsMissing` in the branch of a missing value, where `$value` is null or undefined. */
  message(value: Code, expected: Code, valueIsMissing = false): Code {
    const plan = this.#plan;
    return plan.message === undefined
      ? lit(`${plan.name} failed`)
      : this.template(plan.message, value, expected, { expectedIsConstant: true, valueIsMissing });
  }

  /**
   * A template's code: text, and each placeholder rendered by text(). A
   * placeholder whose rendering is known while generating (renderedNow) is
   * written as text, and `$index` of a forEach rule, always a whole number
   * from 0, is joined as it is (`+` writes it as text() does): a failing
   * rule then builds its message with fewer calls, often as one constant.
   * Placeholders fold while their text adds up to at most one message's
   * length: a template repeating `{{ $expected }}` hundreds of times over a
   * long expected value would otherwise copy it into the source as often.
   * test/compiler/fast-paths.test.ts checks both forms give the same messages.
   */
  template(parts: readonly TemplatePart[], value: Code, expected: Code, known: KnownAtGeneration): Code {
    const env = this.env(value, expected);
    const pieces: Code[] = [];
    let pendingText: string | undefined;
    let foldBudget = MAX_MESSAGE_LENGTH;
    for (const part of parts) {
      let rendered = part.kind === 'text' ? part.text : this.renderedNow(part.expr, known);
      if (part.kind === 'expr' && rendered !== undefined) {
        if (rendered.length > foldBudget) rendered = undefined;
        else foldBudget -= rendered.length;
      }
      if (rendered !== undefined) {
        pendingText = (pendingText ?? '') + rendered;
        continue;
      }
      if (pendingText !== undefined) pieces.push(lit(pendingText));
      pendingText = undefined;
      const expr = part.kind === 'expr' ? part.expr : undefined;
      if (expr?.kind === 'root' && expr.name === 'index' && this.#plan.forEach !== undefined) {
        // A number first would make `+` add: a string goes before it.
        if (pieces.length === 0) pieces.push(lit(''));
        pieces.push(env.index);
      } else if (expr !== undefined) {
        pieces.push(_`${this.#d.helper('text')}(${generateExpression(expr, env, this.#d, this.#n)})`);
      }
    }
    if (pendingText !== undefined || pieces.length === 0) pieces.push(lit(pendingText ?? ''));
    // A leading placeholder still renders as a string: text() returns one.
    return join(pieces, _` + `);
  }

  /**
   * What a placeholder renders to when that does not depend on the payload:
   * a literal or an array of literals, `$expected` when the rule's expected
   * value is the constant one, `$value` where it is missing, `$item` and
   * `$index` outside forEach (undefined). Rendered by the runtime's own
   * text(), so the text is the one the validator would build.
   */
  renderedNow(e: Expr, known: KnownAtGeneration): string | undefined {
    const constant = constantValue(e);
    if (constant.ok) return text(constant.value);
    if (e.kind !== 'root') return undefined;
    switch (e.name) {
      case 'expected':
        return known.expectedIsConstant ? text(this.#plan.expected?.value ?? null) : undefined;
      case 'value':
        return known.valueIsMissing ? '' : undefined;
      case 'item':
      case 'index':
        return this.#plan.forEach === undefined ? '' : undefined;
      default:
        return undefined;
    }
  }

  /** Own-property reads along a path; `length` reads a string's length as expressions do. */
  read(base: Code, segments: readonly PathSegment[]): Code {
    let code = base;
    let from = 0;
    if (base === this.#n.payload) {
      // Start from the longest prefix read once for all rules.
      const found = this.#shared.find(plainKeys(segments));
      if (found !== undefined) {
        code = found.code;
        from = found.length;
      }
    }
    for (const s of segments.slice(from)) {
      if ('key' in s) {
        code = s.key === 'length' ? _`${this.#d.helper('length')}(${code})` : this.#d.inlineRead(s.key, code);
      } else if ('index' in s) {
        code = this.#d.inlineRead(s.index, code);
      }
    }
    return code;
  }
}

/** What a message template may rely on while it is generated. */
interface KnownAtGeneration {
  /** `$expected` is the rule's expected value (given or inferred), not a schema violation's limit. */
  readonly expectedIsConstant: boolean;
  /** The branch of a missing value: `$value` is null or undefined. */
  readonly valueIsMissing: boolean;
}

/** The text of a fieldPath before and after its `[]`, skipping quoted keys. */
function splitAtEach(text: string): [string, string] {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (ch === '[' && text[i + 1] === ']') {
      return [text.slice(0, i), text.slice(i + 2)];
    }
  }
  return [text, ''];
}

/**
 * The factory of a single expression, for tests and tools: `evaluate(payload,
 * now, value, item, index, expected)` returns the expression's raw value.
 */
export function generateExpressionFactory(e: Expr): GeneratedSource {
  const d = new Declarations();
  const n = d.names;
  const temps: Name[] = [];
  const env: Env = {
    payload: n.payload,
    now: n.now,
    value: n.value,
    item: n.item,
    index: n.index,
    expected: n.expected,
    params: [],
    temp: () => {
      const t = d.scope.name('t');
      temps.push(t);
      return t;
    },
  };
  const code = generateExpression(e, env, d, n);
  const w = new CodeWriter();
  w.block(_`(function (${n.rt}, ${n.refs})`, () => {
    w.line(_`"use strict";`);
    d.prelude(w);
    w.block(_`return function ${n.validate}(${n.payload}, ${n.now}, ${n.value}, ${n.item}, ${n.index}, ${n.expected})`, () => {
      if (temps.length > 0) w.line(_`let ${join(temps)};`);
      w.line(_`return ${code};`);
    }, _`;`);
  }, _`)`);
  return { source: w.toCode().toString(), refs: Object.freeze({ ...d.refs }), origins: Object.freeze({ ...d.origins }) };
}

/** Whether `code` may name `name`: a whole-word match (one inside a string literal answers yes too, which only keeps the read where it was). */
function namesIdentifier(code: Code, name: Name): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_$])${name.toString()}($|[^A-Za-z0-9_$])`).test(code.toString());
}
