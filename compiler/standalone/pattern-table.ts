/**
 * The patterns of a standalone module, each decided at build time exactly
 * as the service decides it (`compilePattern`), and written into one
 * virtual module that both `matches()` refs and Ajv's schema code read.
 * Each pattern is rebuilt from its runner: native RegExp over the same
 * source and flags, the same DFA tables run by the same matcher
 * (`compiler/regex/dfa-matcher.ts`), or re2js over the same rewritten
 * source. Deciding here keeps the pattern parser, the linear-time proof and
 * the DFA construction out of the bundle; the DFA matcher and re2js are
 * bundled only when some pattern needs them.
 *
 * Nothing of a pattern reaches the module text but string literals and
 * numbers: the pattern itself (the table's key), a RegExp or RE2 source,
 * and the DFA's tables, which are numbers only.
 */
import { compilePattern, matcherKey, type PatternRunner } from '../regex/compile-pattern.ts';
import type { DfaTables } from '../regex/dfa-matcher.ts';
import { literal } from './literal.ts';

/** Where the bundled matchers are: `compiler/regex/dfa-matcher.ts` and `compiler/standalone/bundled/re2-matcher.ts`. */
export interface MatcherModules {
  dfaMatcher: string;
  re2Matcher: string;
}

/** Patterns collected while a module is built; `source` renders the virtual module. */
export class PatternTable {
  readonly #runners = new Map<string, PatternRunner>();

  /**
   * Records a pattern. Throws when the regex policy refuses it: every pattern
   * here was accepted when its rule was saved, so a refusal means the build
   * does not match the service.
   */
  add(pattern: string): void {
    if (this.#runners.has(pattern)) return;
    // Length limits were applied when the rule was planned; here only the engine is decided.
    const compiled = compilePattern(pattern, { maxPatternLength: Number.POSITIVE_INFINITY });
    if (!compiled.ok) throw new Error(`${compiled.code}: pattern ${JSON.stringify(pattern)}: ${compiled.message}`);
    this.#runners.set(pattern, compiled.runner);
  }

  get size(): number {
    return this.#runners.size;
  }

  /** Each pattern with its runner, as plain data (what another thread rebuilds matchers from). */
  entries(): Array<[pattern: string, runner: PatternRunner]> {
    return [...this.#runners];
  }

  /**
   * The virtual module: `matcher(pattern)` for `matches()` refs and
   * `patternEngine(pattern, flags)` in Ajv's `code.regExp` shape.
   */
  source(modules: MatcherModules): string {
    const kinds = new Set([...this.#runners.values()].map((runner) => runner.kind));
    const lines: string[] = [];
    if (kinds.has('dfa')) lines.push(`import { dfaMatcher } from ${literal(modules.dfaMatcher)};`);
    if (kinds.has('re2js')) lines.push(`import { re2Matcher } from ${literal(modules.re2Matcher)};`);
    lines.push('const table = new Map([');
    for (const [pattern, runner] of this.#runners) lines.push(`  [${literal(pattern)}, ${make(pattern, runner)}],`);
    lines.push(']);');
    lines.push(
      'export function matcher(pattern) {',
      '  const found = table.get(pattern);',
      '  if (found === undefined) throw new Error("unknown pattern");',
      '  return found;',
      '}',
      'export function patternEngine(pattern, flags) {',
      '  if (flags !== "u") throw new Error("only the u flag is supported");',
      '  return matcher(pattern);',
      '}',
    );
    return lines.join('\n');
  }
}

function make(pattern: string, runner: PatternRunner): string {
  switch (runner.kind) {
    case 'regexp':
      return `new RegExp(${literal(runner.source)}, ${literal(runner.flags)})`;
    case 'dfa':
      return `dfaMatcher(${tablesLiteral(runner.tables)}, ${literal(matcherKey(pattern))})`;
    case 're2js':
      return `re2Matcher(${literal(runner.source)})`;
  }
}

/** The tables as an object literal of numbers and arrays of numbers. */
function tablesLiteral(tables: DfaTables): string {
  const numbers = (values: ArrayLike<number>): string => literal(Array.from(values, checkedInteger));
  return [
    `{ columns: ${checkedInteger(tables.columns)}`,
    `start: ${checkedInteger(tables.start)}`,
    `directClasses: ${numbers(tables.directClasses)}`,
    `rangeStarts: ${numbers(tables.rangeStarts)}`,
    `rangeClasses: ${numbers(tables.rangeClasses)}`,
    `transitions: ${numbers(tables.transitions)} }`,
  ].join(', ');
}

function checkedInteger(value: number): number {
  if (!Number.isSafeInteger(value)) throw new TypeError(`DFA tables hold integers only, not ${String(value)}`);
  return value;
}
