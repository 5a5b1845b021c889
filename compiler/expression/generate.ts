/**
 * IR to JavaScript. Every piece of output is built with the codegen
 * library: user values appear only as literals, names come from the
 * program's Scope, and helpers are reached through `rt` only.
 *
 * Fast paths keep passing payloads cheap: equality against a primitive
 * literal is `===`, a comparison with a number or string literal is a
 * `typeof` guard plus the native operator, and a short literal list in
 * `.includes()` becomes a chain of `===`. Callbacks become hoisted loop
 * functions that take the values they capture as parameters, so no closure
 * is allocated per evaluation; `sum(list.map(...))` is one loop with no
 * array in between. A call repeated in one expression is computed once.
 */
import { _, CodeWriter, join, lit, Name, type Code, type Scope } from '../codegen/index.ts';
import type { Runtime, Matcher } from '../runtime.ts';
import { constantValue, type CallbackMethod, type Expr, type Primitive, type RootName } from './ir.ts';
import { childrenOf } from './ir-walk.ts';
import { FUNCTIONS_BY_NAME, VALUE_METHODS_BY_NAME } from '../language/index.ts';

/**
 * How a value in `refs` was made, so that a bundler can make it again
 * without this process: a `matches()` pattern, a schema (the policy-checked
 * copy Ajv compiled), or the schema-failure mapper.
 */
export type RefOrigin =
  | { kind: 'pattern'; pattern: string }
  | { kind: 'schema'; schema: unknown }
  | { kind: 'schemaFailures' };

/** A runtime helper that generated code may call. */
export type HelperName = keyof Runtime;

/** Program-wide declarations: helpers, constants, refs and hoisted functions. */
export interface Hoist {
  readonly scope: Scope;
  helper(name: HelperName): Name;
  /** A deep-frozen JSON constant declared once at factory level. */
  constant(value: unknown): Name;
  /**
   * A value passed in through `refs` (a matcher, a schema validator);
   * `origin` says how to rebuild it elsewhere (the standalone module).
   */
  ref(prefix: 're' | 'sv', value: unknown, origin: RefOrigin): Name;
  /** A function declaration at factory level. */
  declare(code: Code): void;
  /**
   * The hoisted loop function of `key`, one per program: `declareIt`
   * declares it and names it the first time the key is asked for; later
   * asks get that name without generating the function again.
   */
  loop(key: string, declareIt: () => Name): Name;
  /** The own-property reader of one field name or index, declared once per program. */
  reader(key: string | number): Name;
}

/** Names of the values an expression can see in the function being generated. */
export interface Env {
  readonly payload: Name;
  readonly now: Name;
  readonly value: Code;
  readonly item: Code;
  readonly index: Code;
  readonly expected: Code;
  /** A decision table's `$cell`, `$row` and `$rowIndex`, where the expression has them (undefined elsewhere). */
  readonly cell?: Code;
  readonly row?: Code;
  readonly rowIndex?: Code;
  /** Callback parameters; `params[d - 1]` is the parameter of level d. */
  readonly params: readonly Name[];
  /** A fresh temporary of the current function. */
  temp(): Name;
  /**
   * The path `value` was read from (rule level only): an expression that
   * reads the same path again, as in `loan.amount <= 10000` with that
   * fieldPath, reuses `value` instead of reading twice.
   */
  readonly valuePath?: { root: 'payload' | 'item'; keys: readonly (string | number)[] };
  /**
   * Payload paths read once for every rule of the function being generated:
   * the longest such prefix of `keys`, as its code and how many keys it covers.
   */
  readonly shared?: (keys: readonly (string | number)[]) => { code: Code; length: number } | undefined;
  /**
   * Calls whose value a fused loop has computed already (compiler/fuse-loops.ts),
   * by node: the name that holds it.
   */
  readonly precomputed?: ReadonlyMap<Expr, Code>;
  /**
   * An own-field read written in place rather than as a call of the
   * hoisted reader (the rule-level code of a validator, see
   * ruleset-source.ts); undefined in hoisted functions, which call readers.
   */
  readonly readField?: (key: string | number, object: Code) => Code;
}

/** Fixed names that generated functions use besides helpers. */
export interface FixedNames {
  readonly payload: Name;
  readonly now: Name;
  readonly value: Name;
  readonly item: Name;
  readonly index: Name;
  readonly expected: Name;
  readonly cell: Name;
  readonly row: Name;
  readonly rowIndex: Name;
  readonly list: Name;
  readonly i: Name;
  readonly out: Name;
}

/** Temporaries by the structural key of the call whose value they hold. */
type Available = Map<string, Name>;

interface Out {
  code: Code;
  /** Safe as an operand without parentheses. */
  atomic: boolean;
  /** The temporary that holds the value once `code` has run (a repeated call, see `repeatedCalls`). */
  temp?: Name;
}

const INLINE_INCLUDES_MAX = 8;

/** Generates the JavaScript expression of `e`. */
export function generateExpression(e: Expr, env: Env, hoist: Hoist, names: FixedNames): Code {
  return new Generator(hoist, names, e).expr(e, env).code;
}

/** Generates a condition that holds when `e` is exactly `true` (3.2). */
export function generateIsTrue(e: Expr, env: Env, hoist: Hoist, names: FixedNames, booleanTyped: boolean): Code {
  const out = new Generator(hoist, names, e).expr(e, env);
  return booleanTyped ? out.code : _`${paren(out)} === true`;
}

function paren(out: Out): Code {
  return out.atomic ? out.code : _`(${out.code})`;
}

function atom(code: Code): Out {
  return { code, atomic: true };
}

function compound(code: Code): Out {
  return { code, atomic: false };
}

/** `date(x)`, whose value is epoch milliseconds or undefined. */
function isDateCall(e: Expr): e is Expr & { kind: 'call' } {
  return e.kind === 'call' && e.fn === 'date' && e.args.length === 1;
}

function isPrimitiveLiteral(e: Expr): e is Expr & { kind: 'literal' } {
  return e.kind === 'literal';
}

class Generator {
  readonly #hoist: Hoist;
  readonly #names: FixedNames;
  /** Calls of the expression that occur more than once, by node, with their structural key. */
  #repeated: Map<Expr, string>;
  /** Temporaries that hold a repeated call's value wherever the code being generated runs. */
  #available: Available = new Map();

  constructor(hoist: Hoist, names: FixedNames, root: Expr) {
    this.#hoist = hoist;
    this.#names = names;
    this.#repeated = repeatedCalls(root);
  }

  h(name: HelperName): Name {
    return this.#hoist.helper(name);
  }

  /**
   * A call that occurs again in the expression is computed once: its first
   * evaluation stores the value in a temporary and later ones read it, as in
   * `daysBetween(a, b) >= 0 && daysBetween(a, b) <= 90`. Calls are pure and
   * the payload does not change while a rule runs, so the value is the same;
   * "later" means only code that surely runs after the store (see `outcome`).
   */
  expr(e: Expr, env: Env): Out {
    const key = this.#repeated.get(e);
    if (key === undefined) return this.node(e, env);
    const known = this.#available.get(key);
    if (known !== undefined) return { code: known, atomic: true, temp: known };
    const out = this.node(e, env);
    const t = env.temp();
    this.#available.set(key, t);
    return { code: _`(${t} = ${out.code})`, atomic: true, temp: t };
  }

  /**
   * Generates `e`, with the temporaries that surely hold their values once
   * `e` has turned out truthy, or falsy. Code that runs only sometimes (the
   * right of `&&`, a branch of `?:`) stores values that the code after it
   * cannot count on, but the right of `&&` runs only when the left was
   * truthy: in `a && f(x) >= 1 && f(x) <= 9` the second `f(x)` reuses the first.
   */
  outcome(e: Expr, env: Env): { out: Out; whenTrue: Available; whenFalse: Available } {
    if (e.kind === 'logical') {
      const left = this.outcome(e.left, env);
      const after = this.#available;
      const start = e.op === '&&' ? left.whenTrue : e.op === '||' ? left.whenFalse : after;
      this.#available = new Map(start);
      const right = this.outcome(e.right, env);
      this.#available = after;
      const out = compound(_`${paren(left.out)} ${logicalOperator(e.op)} ${paren(right.out)}`);
      const whenTrue = e.op === '&&' ? right.whenTrue : new Map(after);
      const whenFalse = e.op === '||' ? right.whenFalse : new Map(after);
      return { out, whenTrue, whenFalse };
    }
    if (e.kind === 'unary' && e.op === '!') {
      const argument = this.outcome(e.argument, env);
      return { out: compound(_`!${paren(argument.out)}`), whenTrue: argument.whenFalse, whenFalse: argument.whenTrue };
    }
    const out = this.expr(e, env);
    return { out, whenTrue: new Map(this.#available), whenFalse: new Map(this.#available) };
  }

  /** `test ? consequent : alternate`, each branch knowing what the test's outcome implies. */
  conditional(e: Expr & { kind: 'conditional' }, env: Env): Out {
    const test = this.outcome(e.test, env);
    const after = this.#available;
    this.#available = test.whenTrue;
    const consequent = this.expr(e.consequent, env);
    this.#available = test.whenFalse;
    const alternate = this.expr(e.alternate, env);
    this.#available = after;
    return compound(_`${paren(test.out)} ? ${paren(consequent)} : ${paren(alternate)}`);
  }

  node(e: Expr, env: Env): Out {
    switch (e.kind) {
      case 'literal':
        return atom(lit(e.value));
      case 'array': {
        if (e.constant) {
          const value = constantValue(e);
          if (value.ok) return atom(this.#hoist.constant(value.value));
        }
        return atom(_`[${join(e.items.map((item) => this.expr(item, env).code))}]`);
      }
      case 'root':
        return atom(e.name === 'payload' ? env.payload : env[e.name] ?? lit(undefined));
      case 'param':
        return atom(env.params[e.depth - 1]);
      case 'member': {
        if (env.valuePath !== undefined && readsPath(e, env.valuePath)) return atom(env.value);
        const keys = env.shared === undefined ? undefined : payloadKeys(e);
        const shared = keys === undefined ? undefined : env.shared?.(keys);
        if (keys !== undefined && shared !== undefined) {
          let code = shared.code;
          for (const key of keys.slice(shared.length)) code = this.read(key, code, env);
          return atom(code);
        }
        const object = this.expr(e.object, env).code;
        return atom(e.key === 'length' ? _`${this.h('length')}(${object})` : this.read(e.key, object, env));
      }
      case 'unary': {
        if (e.op === '!') return this.outcome(e, env).out;
        const argument = this.expr(e.argument, env);
        return atom(_`${this.h(e.op === '-' ? 'neg' : 'pos')}(${argument.code})`);
      }
      case 'binary':
        return this.binary(e, env);
      case 'logical':
        return this.outcome(e, env).out;
      case 'conditional':
        return this.conditional(e, env);
      case 'now':
        return atom(env.now);
      case 'call':
        return this.call(e, env);
      case 'matches': {
        const matcher = this.#hoist.ref('re', e.matcher satisfies Matcher, { kind: 'pattern', pattern: e.pattern });
        return atom(_`${this.h('matches')}(${matcher}, ${this.expr(e.subject, env).code})`);
      }
      case 'method':
        return this.method(e, env);
      case 'callback':
        return this.callback(e, env);
    }
  }

  /** The own field `key` of `object`: in place where the environment writes reads so, else through its reader. */
  read(key: string | number, object: Code, env: Env): Code {
    return env.readField === undefined ? _`${this.#hoist.reader(key)}(${object})` : env.readField(key, object);
  }

  /** `x`, or `(t = x)` then `t`, so that a guarded operand is evaluated once. */
  once(e: Expr, env: Env): { first: Code; again: Code } {
    const out = this.expr(e, env);
    // A name (a root, a parameter, `now`, a shared payload read) costs nothing to read again.
    if (out.code instanceof Name) return { first: out.code, again: out.code };
    if (out.temp !== undefined) return { first: out.code, again: out.temp };
    const t = env.temp();
    return { first: _`(${t} = ${out.code})`, again: t };
  }

  binary(e: Expr & { kind: 'binary' }, env: Env): Out {
    const { op, left, right } = e;
    if (op === '==' || op === '!=') {
      const native = op === '==' ? _`===` : _`!==`;
      if (isPrimitiveLiteral(right)) return compound(_`${paren(this.expr(left, env))} ${native} ${lit(right.value)}`);
      if (isPrimitiveLiteral(left)) return compound(_`${lit(left.value)} ${native} ${paren(this.expr(right, env))}`);
      return atom(_`${this.h(op === '==' ? 'eq' : 'ne')}(${this.expr(left, env).code}, ${this.expr(right, env).code})`);
    }
    if (op === '<' || op === '<=' || op === '>' || op === '>=') {
      const native = comparisonOperator(op);
      const lengthBound = this.lengthBound(op, left, right, env);
      if (lengthBound !== undefined) return atom(lengthBound);
      if (isComparable(right.kind === 'literal' ? right.value : undefined) && !isPrimitiveLiteral(left)) {
        const value = (right as Expr & { kind: 'literal' }).value;
        const x = this.once(left, env);
        return compound(_`typeof ${x.first} === ${typeof value} && ${x.again} ${native} ${lit(value)}`);
      }
      if (isComparable(left.kind === 'literal' ? left.value : undefined) && !isPrimitiveLiteral(right)) {
        const value = (left as Expr & { kind: 'literal' }).value;
        const x = this.once(right, env);
        return compound(_`typeof ${x.first} === ${typeof value} && ${lit(value)} ${native} ${x.again}`);
      }
      if (isDateCall(left) && isDateCall(right)) {
        // `date(a) > date(b)`: one helper that compares plain ISO days as text (runtime compareDates).
        return compound(_`${this.h('compareDates')}(${this.expr(left.args[0], env).code}, ${this.expr(right.args[0], env).code}) ${native} 0`);
      }
      const helper = op === '<' ? 'lt' : op === '<=' ? 'le' : op === '>' ? 'gt' : 'ge';
      return atom(_`${this.h(helper)}(${this.expr(left, env).code}, ${this.expr(right, env).code})`);
    }
    const helper = ARITHMETIC[op];
    return atom(_`${this.h(helper)}(${this.expr(left, env).code}, ${this.expr(right, env).code})`);
  }

  /**
   * `len(x) >= 3`, `10 > len(x)` and the like, as lenAtLeast / lenAtMost
   * with a whole-number bound: they decide most strings by their length
   * without counting code points. Not taken when the call's value is
   * already held in a temporary (reading it again costs nothing).
   */
  lengthBound(op: '<' | '<=' | '>' | '>=', left: Expr, right: Expr, env: Env): Code | undefined {
    const onLeft = isLenCall(left) && right.kind === 'literal' && typeof right.value === 'number';
    const onRight = isLenCall(right) && left.kind === 'literal' && typeof left.value === 'number';
    if (!onLeft && !onRight) return undefined;
    const call = (onLeft ? left : right) as Expr & { kind: 'call' };
    const bound = ((onLeft ? right : left) as Expr & { kind: 'literal' }).value as number;
    if (!Number.isFinite(bound) || env.precomputed?.get(call) !== undefined) return undefined;
    const key = this.#repeated.get(call);
    if (key !== undefined && this.#available.has(key)) return undefined;
    // Written with len(x) on the left: `k < len(x)` is `len(x) > k`.
    const written = onLeft ? op : MIRRORED[op];
    const atLeast = written === '>=' || written === '>';
    // len is a whole number: `len > 2.5` is `len >= 3`, `len < 3` is `len <= 2`.
    const k = written === '>=' ? Math.ceil(bound) : written === '>' ? Math.floor(bound) + 1
      : written === '<=' ? Math.floor(bound) : Math.ceil(bound) - 1;
    const subject = this.expr(call.args[0], env).code;
    return _`${this.h(atLeast ? 'lenAtLeast' : 'lenAtMost')}(${subject}, ${k})`;
  }

  call(e: Expr & { kind: 'call' }, env: Env): Out {
    const computed = env.precomputed?.get(e);
    if (computed !== undefined) return atom(computed);
    const [only] = e.args;
    if (e.fn === 'sum' && e.args.length === 1 && only.kind === 'callback' && only.method === 'map') {
      return this.callback(only, env, 'sum');
    }
    const args = e.args.map((a) => this.expr(a, env).code);
    if ((e.fn === 'min' || e.fn === 'max') && args.length > 1) {
      // Several numbers fold pairwise: no argument array per evaluation.
      const pair = this.h(e.fn === 'min' ? 'min2' : 'max2');
      let code = args[0];
      for (let i = 1; i < args.length; i++) code = _`${pair}(${code}, ${args[i]})`;
      return atom(code);
    }
    if (e.fn === 'age') return atom(_`${this.h('age')}(${args[0]}, ${env.now})`);
    return atom(_`${this.h(FUNCTIONS_BY_NAME[e.fn].helper as HelperName)}(${join(args)})`);
  }

  method(e: Expr & { kind: 'method' }, env: Env): Out {
    if (e.method === 'includes' && e.object.kind === 'array' && e.object.constant) {
      const inline = this.inlineIncludes(e.object.items, e.args[0], env);
      if (inline !== undefined) return inline;
    }
    const object = this.expr(e.object, env).code;
    const args = e.args.map((a) => this.expr(a, env).code);
    const helper = VALUE_METHODS_BY_NAME[e.method].helper as HelperName;
    return atom(_`${this.h(helper)}(${join([object, ...args])})`);
  }

  /** `["EUR", "USD"].includes(x)` as `(t = x) === "EUR" || t === "USD"`. */
  inlineIncludes(items: Expr[], needle: Expr, env: Env): Out | undefined {
    if (items.length === 0 || items.length > INLINE_INCLUDES_MAX) return undefined;
    const values: Primitive[] = [];
    for (const item of items) {
      if (item.kind !== 'literal') return undefined;
      values.push(item.value);
    }
    const x = this.once(needle, env);
    const tests = values.map((v, i) => _`${i === 0 ? x.first : x.again} === ${lit(v)}`);
    return compound(join(tests, _` || `));
  }

  /**
   * A hoisted loop function. `sum` makes `sum(list.map(x => ...))` one loop
   * that adds as it goes, with no array in between: `add` on numbers is
   * `sum`'s own addition, and once a partial sum is invalid (a non-number
   * element, or past the finite range) the total is invalid too, so the
   * loop stops there; the bodies it skips have no effects.
   */
  callback(e: Expr & { kind: 'callback' }, env: Env, fold?: 'sum'): Out {
    const captured = capturedBy(e);
    const method = fold ?? e.method;
    // Structurally identical callbacks (the same method, level, captured
    // values and body) share one function: its code depends on nothing
    // else, and it takes the list and captured values as arguments.
    const key = `${method}|${e.depth}|${captured.join(',')}|${structuralKey(e.body)}`;
    const fn = this.#hoist.loop(key, () => this.loopFunction(e, method, captured, env));
    const actual: Code[] = [this.expr(e.object, env).code, ...captured.map((c) => capturedIn(c, env))];
    return atom(_`${fn}(${join(actual)})`);
  }

  /** Declares the hoisted function of a callback (see `callback`) and returns its name. */
  loopFunction(e: Expr & { kind: 'callback' }, method: CallbackMethod | 'sum', captured: Captured[], env: Env): Name {
    const names = this.#names;
    const scope = this.#hoist.scope;
    const fn = scope.name(method);
    const param = scope.name('p');
    const temps: Name[] = [];
    // Inside the hoisted function, captured values go by their formal names.
    const inner: Env = {
      payload: names.payload,
      now: names.now,
      value: names.value,
      item: names.item,
      index: names.index,
      expected: names.expected,
      cell: names.cell,
      row: names.row,
      rowIndex: names.rowIndex,
      params: [...env.params.slice(0, e.depth - 1), param],
      temp: () => {
        const t = scope.name('t');
        temps.push(t);
        return t;
      },
    };
    // The body runs in the hoisted function, where the rule's temporaries are out of reach.
    const repeated = this.#repeated;
    const available = this.#available;
    this.#repeated = new Map();
    this.#available = new Map();
    const body = this.expr(e.body, inner);
    this.#repeated = repeated;
    this.#available = available;
    // The same captured values, by the names they have inside.
    const formal: Code[] = [names.list, ...captured.map((c) => capturedIn(c, inner))];
    const { list, i, out } = names;
    const w = new CodeWriter();
    w.block(_`function ${fn}(${join(formal)})`, () => {
      w.line(_`if (!${this.h('isArray')}(${list})) return undefined;`);
      if (temps.length > 0) w.line(_`let ${join(temps)};`);
      if (method === 'filter' || method === 'map') w.line(_`const ${out} = [];`);
      if (method === 'sum') w.line(_`let ${out} = 0;`);
      w.block(_`for (let ${i} = 0; ${i} < ${list}.length; ${i}++)`, () => {
        w.line(_`const ${param} = ${list}[${i}];`);
        switch (method) {
          case 'every':
            w.line(_`if (!${paren(body)}) return false;`);
            break;
          case 'some':
            w.line(_`if (${body.code}) return true;`);
            break;
          case 'find':
            w.line(_`if (${body.code}) return ${param};`);
            break;
          case 'filter':
            w.line(_`if (${body.code}) ${out}.push(${param});`);
            break;
          case 'map':
            w.line(_`${out}.push(${body.code});`);
            break;
          case 'sum':
            w.line(_`${out} = ${this.h('add')}(${out}, ${body.code});`);
            w.line(_`if (${out} !== ${out}) return ${out};`);
            break;
        }
      });
      if (method === 'every') w.line(_`return true;`);
      else if (method === 'some') w.line(_`return false;`);
      else if (method === 'find') w.line(_`return undefined;`);
      else w.line(_`return ${out};`);
    });
    this.#hoist.declare(w.toCode());
    return fn;
  }
}

/**
 * The calls (functions, methods, `matches`) that occur more than once in
 * `root`, outside callback bodies, by node, each with a key that identical
 * subtrees share.
 */
function repeatedCalls(root: Expr): Map<Expr, string> {
  const byKey = new Map<string, Expr[]>();
  const visit = (x: Expr): void => {
    if (x.kind === 'call' || x.kind === 'method' || x.kind === 'matches') {
      const key = structuralKey(x);
      const nodes = byKey.get(key);
      if (nodes === undefined) byKey.set(key, [x]);
      else nodes.push(x);
    }
    for (const child of childrenOf(x)) visit(child);
  };
  visit(root);
  const repeated = new Map<Expr, string>();
  for (const [key, nodes] of byKey) if (nodes.length > 1) for (const node of nodes) repeated.set(node, key);
  return repeated;
}

/** The operands of a node that its own code evaluates (a callback's body runs elsewhere). */
/**
 * The `matches()` patterns of an expression, callback bodies included,
 * with their weights (regex/pattern-size.ts).
 */
export function patternsIn(e: Expr, into: Map<string, number>): void {
  if (e.kind === 'matches') into.set(e.pattern, e.weight);
  if (e.kind === 'callback') patternsIn(e.body, into);
  for (const child of childrenOf(e)) patternsIn(child, into);
}

/** The root names an expression reads (`value`, `cell`, `row`...), callback bodies included. */
export function rootsOf(e: Expr): Set<RootName> {
  const roots = new Set<RootName>();
  const stack: Expr[] = [e];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (x.kind === 'root') roots.add(x.name);
    if (x.kind === 'callback') stack.push(x.body);
    stack.push(...childrenOf(x));
  }
  return roots;
}

/** The keys read straight off a root (`$row.maxAmount` reads `maxAmount` off `row`), callback bodies included. */
export function keysReadFrom(e: Expr, root: RootName): (string | number)[] {
  const keys: (string | number)[] = [];
  const stack: Expr[] = [e];
  for (let x = stack.pop(); x !== undefined; x = stack.pop()) {
    if (x.kind === 'member' && x.object.kind === 'root' && x.object.name === root) keys.push(x.key);
    if (x.kind === 'callback') stack.push(x.body);
    stack.push(...childrenOf(x));
  }
  return keys;
}


/** The same text for structurally identical nodes: -0 apart from 0, a pattern by its text. */
export function structuralKey(x: Expr): string {
  return JSON.stringify(x, (name, value: unknown) => {
    if (name === 'matcher') return undefined;
    return typeof value === 'number' && Object.is(value, -0) ? { negativeZero: true } : value;
  });
}

/** The keys of a member chain from the payload, unless it reads a `length` (not a plain field read). */
export function payloadKeys(e: Expr): (string | number)[] | undefined {
  const keys: (string | number)[] = [];
  let x = e;
  while (x.kind === 'member') {
    if (x.key === 'length') return undefined;
    keys.push(x.key);
    x = x.object;
  }
  return x.kind === 'root' && x.name === 'payload' && keys.length > 0 ? keys.reverse() : undefined;
}

/**
 * The payload paths `e` reads where its own code runs (not in callback
 * bodies), as key lists: each maximal member chain from the payload, up to
 * a `length`.
 */
export function payloadReads(e: Expr): (string | number)[][] {
  const reads: (string | number)[][] = [];
  const visit = (x: Expr): void => {
    if (x.kind === 'member') {
      const keys: (string | number)[] = [];
      let y: Expr = x;
      while (y.kind === 'member') {
        keys.push(y.key);
        y = y.object;
      }
      if (y.kind === 'root' && y.name === 'payload') {
        keys.reverse();
        const length = keys.indexOf('length');
        const plain = length < 0 ? keys : keys.slice(0, length);
        if (plain.length > 0) reads.push(plain);
        return;
      }
    }
    for (const child of childrenOf(x)) visit(child);
  };
  visit(e);
  return reads;
}

/** True when a member chain reads exactly `path` from its root. */
function readsPath(e: Expr, path: NonNullable<Env['valuePath']>): boolean {
  let x = e;
  for (let i = path.keys.length - 1; i >= 0; i--) {
    if (x.kind !== 'member' || String(x.key) !== String(path.keys[i])) return false;
    x = x.object;
  }
  return x.kind === 'root' && x.name === path.root;
}

const ARITHMETIC = Object.freeze({
  '+': 'add', '-': 'sub', '*': 'mul', '/': 'div', '%': 'mod', '**': 'pow',
} as const);

function isLenCall(e: Expr): e is Expr & { kind: 'call' } {
  return e.kind === 'call' && e.fn === 'len' && e.args.length === 1;
}

const MIRRORED = Object.freeze({ '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as const);

function isComparable(value: Primitive | undefined): value is number | string {
  return typeof value === 'number' || typeof value === 'string';
}

function comparisonOperator(op: '<' | '<=' | '>' | '>='): Code {
  switch (op) {
    case '<':
      return _`<`;
    case '<=':
      return _`<=`;
    case '>':
      return _`>`;
    case '>=':
      return _`>=`;
  }
}

function logicalOperator(op: '&&' | '||' | '??'): Code {
  return op === '&&' ? _`&&` : op === '||' ? _`||` : _`??`;
}

export type Captured = 'payload' | 'now' | 'value' | 'item' | 'index' | 'expected' | 'cell' | 'row' | 'rowIndex' | number;

/** A captured value's code in `env`: a root's name, or the parameter of that callback level. */
function capturedIn(c: Captured, env: Env): Code {
  return typeof c === 'number' ? env.params[c - 1] : env[c] ?? lit(undefined);
}

/** The outer values a callback's body reads, in a stable order. */
export function capturedBy(e: Expr & { kind: 'callback' }): Captured[] {
  const seen = new Set<Captured>();
  const visit = (x: Expr): void => {
    switch (x.kind) {
      case 'root':
        seen.add(x.name);
        return;
      case 'param':
        if (x.depth < e.depth) seen.add(x.depth);
        return;
      case 'now':
        seen.add('now');
        return;
      case 'call':
        if (x.fn === 'age') seen.add('now');
        x.args.forEach(visit);
        return;
      case 'literal':
        return;
      case 'array':
        x.items.forEach(visit);
        return;
      case 'member':
        visit(x.object);
        return;
      case 'unary':
        visit(x.argument);
        return;
      case 'binary':
      case 'logical':
        visit(x.left);
        visit(x.right);
        return;
      case 'conditional':
        visit(x.test);
        visit(x.consequent);
        visit(x.alternate);
        return;
      case 'matches':
        visit(x.subject);
        return;
      case 'method':
        visit(x.object);
        x.args.forEach(visit);
        return;
      case 'callback':
        visit(x.object);
        visit(x.body);
        return;
    }
  };
  visit(e.body);
  const order: Captured[] = ['payload', 'now', 'value', 'item', 'index', 'expected', 'cell', 'row', 'rowIndex', 1, 2, 3];
  return order.filter((c) => seen.has(c));
}
