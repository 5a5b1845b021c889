/**
 * Trusted code for the generators, after ajv's lib/compile/codegen.
 *
 * There are two kinds of value here. A `Code` (or its subclass `Name`) is
 * JavaScript text that only this module can build: through the `_` tagged
 * template, `join`, `comment`, `layout`, or a `Scope`. Every other value interpolated
 * into `_` becomes a literal: strings through JSON.stringify with U+2028 and
 * U+2029 escaped, numbers as numbers. Objects are refused; they reach
 * generated code as JSON text handed to `rt.constant`. So the worst a
 * hostile rule can do to generated code is to appear in it as a string.
 */

const TOKEN = Symbol('codegen');

/** A piece of trusted JavaScript text. Build it with `_`, never from a string. */
export class Code {
  readonly #text: string;

  /** @internal Callers outside codegen cannot hold `TOKEN`, so they cannot build Code. */
  constructor(token: symbol, text: string) {
    if (token !== TOKEN) throw new TypeError('Code can only be built by compiler/codegen');
    this.#text = text;
  }

  toString(): string {
    return this.#text;
  }
}

/** An identifier in generated code; always matches `IDENTIFIER`. */
export class Name extends Code {}

/** What a generated identifier may look like: ASCII, no escapes. */
export const IDENTIFIER = /^[a-z_$][a-z0-9_$]*$/i;

function makeName(text: string): Name {
  if (!IDENTIFIER.test(text)) throw new TypeError(`codegen: invalid identifier ${JSON.stringify(text)}`);
  return new Name(TOKEN, text);
}

/**
 * Hands out the identifiers of one generated program: a prefix plus a
 * counter, or a fixed name reserved up front (runtime helpers, `payload`),
 * so that no two uses collide and no user text ever becomes a name.
 */
export class Scope {
  readonly #counters = new Map<string, number>();
  readonly #used = new Set<string>();

  /** A fixed name; throws if it was already handed out. */
  reserve(identifier: string): Name {
    if (this.#used.has(identifier)) throw new TypeError(`codegen: name ${identifier} is already in use`);
    this.#used.add(identifier);
    return makeName(identifier);
  }

  /** A fresh `prefix<n>` name. */
  name(prefix: string): Name {
    let n = this.#counters.get(prefix) ?? 0;
    let text = `${prefix}${n}`;
    while (this.#used.has(text)) text = `${prefix}${++n}`;
    this.#counters.set(prefix, n + 1);
    this.#used.add(text);
    return makeName(text);
  }
}

/** A JavaScript string literal that is also safe inside a line comment. */
export function safeStringify(value: string): string {
  const json = JSON.stringify(value);
  // Most literals hold neither separator; skip the two regex passes for them.
  return json.includes('\u2028') || json.includes('\u2029')
    ? json.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
    : json;
}

function literal(value: unknown): string {
  if (value instanceof Code) return value.toString();
  switch (typeof value) {
    case 'string':
      return safeStringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('codegen: a number literal must be finite');
      if (Object.is(value, -0)) return '-0';
      // Parenthesized so that `a - ${-1}` cannot become the decrement `a --1`.
      return value < 0 ? `(${String(value)})` : String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'undefined';
    case 'object':
      if (value === null) return 'null';
      break;
    default:
      break;
  }
  throw new TypeError(`codegen: cannot interpolate a value of type ${typeof value}`);
}

/**
 * The code template: literal parts are trusted, interpolated values are
 * Code (spliced) or primitives (made literals).
 *
 * @example
 * _`get(${obj}, ${'first-name'})`; // get(o, "first-name")
 */
export function _(strings: TemplateStringsArray, ...values: unknown[]): Code {
  // Template-strings arrays are frozen by the engine; a hand-made array is a misuse.
  if (!Object.isFrozen(strings) || !Array.isArray(strings.raw)) {
    throw new TypeError('codegen: `_` must be used as a tagged template');
  }
  let text = strings[0];
  for (let i = 0; i < values.length; i++) text += literal(values[i]) + strings[i + 1];
  return new Code(TOKEN, text);
}

/** The literal text of a primitive (see `_`), as Code. */
export function lit(value: string | number | boolean | null | undefined): Code {
  return new Code(TOKEN, literal(value));
}

/** Joins pieces of code with a trusted separator. */
export function join(parts: readonly Code[], separator: Code = _`, `): Code {
  return new Code(TOKEN, parts.map(String).join(separator.toString()));
}

/** A line comment holding `text` as a string literal, so it cannot end early. */
export function comment(text: string): Code {
  return new Code(TOKEN, `// ${safeStringify(text)}`);
}

/** A line comment of trusted prose with user text quoted in it: `// rule "A-1": "Limit"`. */
export function commentOf(strings: TemplateStringsArray, ...values: string[]): Code {
  if (!Object.isFrozen(strings)) throw new TypeError('codegen: `commentOf` must be used as a tagged template');
  let text = strings[0];
  for (let i = 0; i < values.length; i++) text += safeStringify(values[i]) + strings[i + 1];
  if (/[\n\r\u2028\u2029]/.test(text)) throw new TypeError('codegen: comment prose spans lines');
  return new Code(TOKEN, `// ${text}`);
}

const PADS: string[] = [];

/**
 * Lays out lines of code, each indented two spaces per level. A piece of
 * Code that spans lines is split at its line breaks, which is safe:
 * literals never hold a raw one.
 */
export function layout(lines: ReadonlyArray<readonly [depth: number, code: Code | string]>): Code {
  const out: string[] = [];
  for (const [depth, code] of lines) {
    const pad = PADS[depth] ?? (PADS[depth] = '  '.repeat(depth));
    const text = typeof code === 'string' ? code : code.toString();
    if (!text.includes('\n')) {
      out.push(text === '' ? '' : pad + text);
      continue;
    }
    for (const part of text.split('\n')) out.push(part === '' ? '' : pad + part);
  }
  return new Code(TOKEN, out.join('\n'));
}
