/**
 * The cells of a decision table: the text of a unary test on the column's
 * value, parsed to a `CellTest`.
 *
 *   -                     any value, or none
 *   "auto"  700  true  null  date("2026-01-01")     equal to the literal
 *   < 5   <= 5   > 5   >= 700                       compared (numbers or strings, typed like `<`)
 *   != "X"                                          not equal
 *   [600..700)  (1..5]                              in the range; `[`/`]` include the bound
 *   in ["US", "CA"]                                 one of the literals
 *   not(…)                                          the negation of any of the above but `-`
 *
 * Anything else is read as an expression of the rule language in which
 * `$cell` is the column's value (the escape hatch, plan-table.ts compiles
 * it). A missing value (undefined or null) matches only `-` and a null
 * literal (also in a list). `date(…)` is the epoch milliseconds the
 * language's `date()` gives, so it compares with a column such as
 * `date(loan.start)`.
 *
 * Tests are plain JSON: the generated code carries them to the runtime's
 * index (table-index.ts) as a constant.
 */
import { date } from '../runtime.ts';

export type Scalar = string | number | boolean | null;

/** A test that is not `-`, `not(…)` or an expression: what `not(…)` may hold. */
export type PlainTest =
  | { kind: 'equal'; value: Scalar }
  | { kind: 'oneOf'; values: Scalar[] }
  | { kind: 'compare'; op: '<' | '<=' | '>' | '>='; value: number | string }
  | { kind: 'notEqual'; value: Scalar }
  | { kind: 'range'; low: number | string; high: number | string; lowIncluded: boolean; highIncluded: boolean };

export type CellTest =
  | { kind: 'any' }
  | PlainTest
  | { kind: 'not'; test: PlainTest }
  /** An expression cell: `id` numbers the table's expression cells in row order. */
  | { kind: 'expression'; id: number };

/** A cell's text parsed: a test, an expression to compile, or what is wrong and where (1-based column). */
export type ParsedCell =
  | { ok: true; test: CellTest }
  | { ok: true; expression: string }
  | { ok: false; message: string; column: number };

class CellSyntaxError extends Error {
  constructor(message: string, readonly column: number) {
    super(message);
  }
}

/**
 * Parses one cell.
 *
 * @example
 * parseCell('[600..700)'); // { ok: true, test: { kind: 'range', low: 600, high: 700, lowIncluded: true, highIncluded: false } }
 * parseCell('$cell % 2 == 0'); // { ok: true, expression: '$cell % 2 == 0' }
 */
export function parseCell(text: string): ParsedCell {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, message: 'a cell cannot be empty: write - for any value', column: 1 };
  if (trimmed === '-') return { ok: true, test: { kind: 'any' } };
  const start = text.indexOf(trimmed);
  try {
    const test = new CellReader(text, start).cell();
    return test === undefined ? { ok: true, expression: text } : { ok: true, test };
  } catch (err) {
    if (err instanceof CellSyntaxError) return { ok: false, message: err.message, column: err.column };
    throw err;
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WORD = /[A-Za-z_$][A-Za-z0-9_$]*/y;
const COMPARISONS = ['<=', '>=', '!=', '<', '>'] as const;

/** A recursive-descent reader of the unary-test grammar above; undefined where the text is an expression. */
class CellReader {
  #pos: number;

  constructor(readonly text: string, start: number) {
    this.#pos = start;
  }

  cell(): CellTest | undefined {
    if (this.#peekWord() === 'not' && this.#peekAfterWord('not') === '(') {
      this.#pos += 3;
      this.#skip();
      this.#expect('(');
      const inner = this.#plain(true);
      if (inner === undefined) throw this.#error('not(…) holds a literal, a comparison, a range or a list');
      this.#expect(')');
      this.#end();
      return { kind: 'not', test: inner };
    }
    const start = this.#pos;
    const test = this.#plain(false);
    if (test === undefined) {
      this.#pos = start;
      return undefined;
    }
    this.#skip();
    if (this.#pos < this.text.length) {
      // `"a" == $cell` starts with a literal but is an expression.
      if (test.kind === 'equal') return undefined;
      this.#end();
    }
    return test;
  }

  /** A plain test; undefined when the text does not start like one (an expression). */
  #plain(inNot: boolean): PlainTest | undefined {
    this.#skip();
    const rest = this.text.slice(this.#pos);
    for (const op of COMPARISONS) {
      if (!rest.startsWith(op)) continue;
      this.#pos += op.length;
      const value = this.#literal();
      if (op === '!=') return { kind: 'notEqual', value };
      if (typeof value !== 'number' && typeof value !== 'string') {
        throw this.#error(`\`${op}\` compares numbers, strings or dates, not ${value === null ? 'null' : typeof value}`);
      }
      return { kind: 'compare', op, value };
    }
    if (this.#peekWord() === 'in') {
      this.#pos += 2;
      return { kind: 'oneOf', values: this.#list() };
    }
    if ((rest.startsWith('[') || rest.startsWith('(')) && rest.includes('..')) return this.#range();
    if (inNot) {
      return { kind: 'equal', value: this.#literal() };
    }
    const at = this.#pos;
    try {
      return { kind: 'equal', value: this.#literal() };
    } catch (err) {
      // Only a literal that is wrong in itself (a bad date, a bad string) is reported; other text is an expression.
      if (err instanceof CellSyntaxError && err.column > at + 1) throw err;
      return undefined;
    }
  }

  #range(): PlainTest {
    const lowIncluded = this.text[this.#pos] === '[';
    this.#pos++;
    const low = this.#literal();
    this.#skip();
    this.#expect('..');
    const high = this.#literal();
    this.#skip();
    const close = this.text[this.#pos];
    if (close !== ']' && close !== ')') throw this.#error('a range ends with `]` (bound included) or `)` (excluded)');
    this.#pos++;
    const bothNumbers = typeof low === 'number' && typeof high === 'number';
    const bothStrings = typeof low === 'string' && typeof high === 'string';
    if (!bothNumbers && !bothStrings) throw this.#error('the bounds of a range are two numbers, two dates or two strings');
    const highIncluded = close === ']';
    if (low > high || (low === high && !(lowIncluded && highIncluded))) {
      throw this.#error('this range is empty: its low bound is above its high bound');
    }
    return { kind: 'range', low, high, lowIncluded, highIncluded };
  }

  #list(): Scalar[] {
    this.#skip();
    this.#expect('[');
    const values: Scalar[] = [];
    this.#skip();
    if (this.text[this.#pos] === ']') throw this.#error('an empty list matches nothing');
    for (;;) {
      const value = this.#literal();
      if (!values.includes(value)) values.push(value);
      this.#skip();
      if (this.text[this.#pos] === ',') {
        this.#pos++;
        continue;
      }
      if (this.text[this.#pos] !== ']') throw this.#error('expected `,` or `]` in the list');
      this.#pos++;
      return values;
    }
  }

  #literal(): Scalar {
    this.#skip();
    const at = this.#pos;
    const ch = this.text[at];
    if (ch === '"') return this.#string();
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(this.text);
    if (number !== null) {
      this.#pos += number[0].length;
      const value = Number(number[0]);
      if (!Number.isFinite(value)) throw new CellSyntaxError('a number must be finite', at + 1);
      return Object.is(value, -0) ? 0 : value;
    }
    const word = this.#peekWord();
    if (word === 'true' || word === 'false' || word === 'null') {
      this.#pos += word.length;
      return word === 'null' ? null : word === 'true';
    }
    if (word === 'date' && this.#peekAfterWord('date') === '(') {
      this.#pos += 4;
      this.#skip();
      this.#expect('(');
      this.#skip();
      const textAt = this.#pos;
      if (this.text[textAt] !== '"') throw new CellSyntaxError('date(…) takes a string such as "2026-01-01"', textAt + 1);
      const value = date(this.#string());
      if (value === undefined) throw new CellSyntaxError('not a valid ISO-8601 date or date-time', textAt + 1);
      this.#skip();
      this.#expect(')');
      return value;
    }
    throw this.#error('expected a literal: a string in double quotes, a number, true, false, null or date("…")');
  }

  #string(): string {
    const at = this.#pos;
    let i = at + 1;
    while (i < this.text.length && this.text[i] !== '"') i += this.text[i] === '\\' ? 2 : 1;
    if (i >= this.text.length) throw new CellSyntaxError('a string is not closed with `"`', at + 1);
    this.#pos = i + 1;
    try {
      return JSON.parse(this.text.slice(at, i + 1)) as string;
    } catch {
      throw new CellSyntaxError('a string has an escape JSON does not know', at + 1);
    }
  }

  #peekWord(): string | undefined {
    WORD.lastIndex = this.#pos;
    return WORD.exec(this.text)?.[0];
  }

  /** The first character after `word` and any spaces. */
  #peekAfterWord(word: string): string | undefined {
    let i = this.#pos + word.length;
    while (i < this.text.length && /\s/.test(this.text[i])) i++;
    return this.text[i];
  }

  #skip(): void {
    while (this.#pos < this.text.length && /\s/.test(this.text[this.#pos])) this.#pos++;
  }

  #expect(token: string): void {
    this.#skip();
    if (!this.text.startsWith(token, this.#pos)) throw this.#error(`expected \`${token}\``);
    this.#pos += token.length;
  }

  #end(): void {
    this.#skip();
    if (this.#pos < this.text.length) throw this.#error('unexpected text after the test');
  }

  #error(message: string): CellSyntaxError {
    return new CellSyntaxError(message, this.#pos + 1);
  }
}
