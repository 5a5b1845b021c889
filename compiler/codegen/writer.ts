/**
 * Indented lines of generated source. Generated validators are read by
 * tenant admins, so the writer keeps one statement per line and two-space
 * indentation.
 */
import { _, layout, type Code } from './code.ts';

/** Accumulates statements; `toCode()` gives the program text. */
export class CodeWriter {
  /** Lines with their indentation level; Code only ever enters through `line`. */
  readonly #lines: Array<readonly [number, Code]> = [];
  #depth: number;

  constructor(depth = 0) {
    this.#depth = depth;
  }

  /** One statement (or several lines of trusted code), at the current indentation. */
  line(code: Code): this {
    this.#lines.push([this.#depth, code]);
    return this;
  }

  blank(): this {
    this.#lines.push([0, _``]);
    return this;
  }

  /** `head {`, then the body one level deeper, then `}` (or `}` + tail, such as `;`). */
  block(head: Code, body: () => void, tail?: Code): this {
    this.line(_`${head} {`);
    this.#depth++;
    body();
    this.#depth--;
    this.line(tail === undefined ? _`}` : _`}${tail}`);
    return this;
  }

  /** `head {` and one level deeper; pair with `close()`. */
  open(head: Code): this {
    this.line(_`${head} {`);
    this.#depth++;
    return this;
  }

  /** `} head {` at the same level: `} else {`, `} else if (x) {`. */
  reopen(head: Code): this {
    this.#depth--;
    this.line(_`} ${head} {`);
    this.#depth++;
    return this;
  }

  close(): this {
    this.#depth--;
    this.line(_`}`);
    return this;
  }

  /** A bare block `{ ... }`, giving `const`s in the body their own scope. */
  braces(body: () => void): this {
    this.line(_`{`);
    this.#depth++;
    body();
    this.#depth--;
    this.line(_`}`);
    return this;
  }

  /** Another writer's lines, one level per `depth` deeper, without re-splitting text. */
  embed(other: CodeWriter): this {
    for (const [depth, code] of other.#lines) this.#lines.push([this.#depth + depth, code]);
    return this;
  }

  get isEmpty(): boolean {
    return this.#lines.length === 0;
  }

  toCode(): Code {
    return layout(this.#lines);
  }
}
