/**
 * The regex policy of docs/rule-language.md, shared by `matches()` and JSON Schema
 * `pattern`/`patternProperties`: a tenant pattern never backtracks
 * catastrophically.
 *
 * Pipeline: length limit, parse (JavaScript syntax, `u` flag), refuse
 * backreferences and lookarounds (no linear-time engine runs them), then
 * either a proof of linear-time backtracking admits the pattern to native
 * RegExp (`linear-time-check.ts`; without the `u` flag when that changes no
 * answer, `code-unit-source.ts`), or the pattern is rewritten for RE2
 * (`re2-syntax.ts`), must compile on re2js, and runs on a DFA built from it
 * (`build-dfa.ts`, run by `dfa-matcher.ts`), or on re2js when the DFA would
 * be too large. Both match in time linear in the input.
 */
import { compilerSourceFile } from '../source-files.ts';
import { patternEngine, type PatternMatcher } from './compile-pattern.ts';

export { compilePattern, patternEngine } from './compile-pattern.ts';
export type { CompiledPattern, PatternMatcher, RefusedPattern } from './compile-pattern.ts';
export { proveLinear } from './linear-time-check.ts';

let engineModuleCode: string | undefined;

/**
 * ajv's `code.regExp` engine: `patternEngine` plus `code`, which tells ajv's
 * standalone output where to import the engine from (a module without Node
 * built-ins, so the bundle also runs in browsers). `code` is found on first
 * read (source-files.ts): ajv reads it for every pattern it compiles, and
 * only standalone output uses it.
 *
 * @example
 * new Ajv({ code: { regExp: ajvRegExpEngine } });
 */
export const ajvRegExpEngine = Object.defineProperty(
  (pattern: string, flags: string): PatternMatcher => patternEngine(pattern, flags),
  'code',
  {
    enumerable: true,
    get: (): string =>
      (engineModuleCode ??= `require(${JSON.stringify(compilerSourceFile('regex/compile-pattern.ts'))}).patternEngine`),
  },
) as ((pattern: string, flags: string) => PatternMatcher) & { readonly code: string };
