/**
 * The regex policy of product.md 3.4, shared by `matches()` and JSON Schema
 * `pattern`/`patternProperties`: a tenant pattern never backtracks
 * catastrophically.
 *
 * Pipeline: length limit, parse (JavaScript syntax, `u` flag), refuse
 * backreferences and lookarounds (no linear-time engine runs them), then
 * either a proof of linear-time backtracking admits the pattern to native
 * RegExp (`linear-time-check.ts`), or the pattern is rewritten for RE2
 * (`re2-syntax.ts`) and runs on re2js, whose matching is linear in the input.
 */
import { fileURLToPath } from 'node:url';
import { patternEngine, type PatternMatcher } from './compile-pattern.ts';

export { compilePattern, patternEngine } from './compile-pattern.ts';
export type { CompiledPattern, PatternMatcher, RefusedPattern } from './compile-pattern.ts';
export { proveLinear } from './linear-time-check.ts';

/**
 * ajv's `code.regExp` engine: `patternEngine` plus `code`, which tells ajv's
 * standalone output where to import the engine from (a module without Node
 * built-ins, so the bundle also runs in browsers).
 *
 * @example
 * new Ajv({ code: { regExp: ajvRegExpEngine } });
 */
export const ajvRegExpEngine = Object.assign(
  (pattern: string, flags: string): PatternMatcher => patternEngine(pattern, flags),
  {
    code: `require(${JSON.stringify(fileURLToPath(new URL('./compile-pattern.ts', import.meta.url)))}).patternEngine`,
  },
);
