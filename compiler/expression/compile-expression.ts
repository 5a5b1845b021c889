/**
 * One expression from source to IR: parse (with the source limits), then
 * the allow-list checker. Results for the plain expression fields are
 * memoized by source text, so a context of many rules that share
 * expressions parses each one once.
 */
import type { CompilerLimits } from '../types.ts';
import { identity, ExpressionFailure, type ExpressionError } from './errors.ts';
import type { Expr } from './ir.ts';
import { lowerExpression, type LowerOptions, type PatternResult } from './lower.ts';
import type { Matcher } from '../runtime.ts';
import { parseSource } from './parse.ts';
import { BoundedMemo } from './bounded-memo.ts';
import { patternsIn } from './generate.ts';
import { MAX_FIELD_PATTERN_WEIGHT } from '../regex/pattern-size.ts';

/** The program size of the distinct patterns of some expressions. */
export function patternSizeOf(expressions: readonly Expr[]): number {
  const patterns = new Map<string, number>();
  for (const e of expressions) patternsIn(e, patterns);
  let size = 0;
  for (const s of patterns.values()) size += s;
  return size;
}

export type ExpressionResult = { ok: true; expr: Expr } | { ok: false; error: ExpressionError };

/** Recently compiled expressions; bounded so tenants cannot grow it without limit (bounded-memo.ts). */
const memo = new BoundedMemo<ExpressionResult>(4096, 2 * MAX_FIELD_PATTERN_WEIGHT);

/** Program size the memo holds now (tests). */
export function expressionMemoWeight(): number {
  return memo.weight;
}

/**
 * Compiles one expression of the rule language to IR.
 *
 * @example
 * compileExpression('len(name) <= 40', DEFAULT_LIMITS, { compilePattern, map: identity });
 */
export function compileExpression(
  source: string,
  limits: CompilerLimits,
  options: Omit<LowerOptions, 'limits'>,
  what = 'expression',
): ExpressionResult {
  const key = memoKey(source, limits, options, what);
  if (key !== undefined) {
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
  }
  const result = compileUncached(source, limits, options, what);
  if (key !== undefined) memo.set(key, result, result.ok ? patternSizeOf([result.expr]) : 0);
  return result;
}

/** Only unshifted results are shareable: positions of placeholders depend on where they sit. */
function memoKey(source: string, limits: CompilerLimits, options: Omit<LowerOptions, 'limits'>, what: string): string | undefined {
  const tableNames = options.tableNames === undefined ? '' : [...options.tableNames].sort().join(',');
  return options.map === identity && options.offset === undefined
    ? `${limits.maxExpressionLength}:${limits.maxNestingDepth}:${limits.maxCallbackDepth}:${limits.maxPatternLength}:${what}:${tableNames}:${source}`
    : undefined;
}

/** The matcher of an IR made for analysis only: it is never run. */
const UNBUILT_MATCHER: Matcher = Object.freeze({
  test(): boolean {
    throw new Error('a pattern lowered for analysis only was run');
  },
});

/**
 * An expression's IR for passes that read it and never run it (the
 * save-time warnings, compiler/analysis/rule-warnings.ts): the compiler's
 * own result when the memo holds a success; otherwise parsed and lowered with a
 * pattern policy that builds no matcher (the regex policy's automaton
 * costs milliseconds, and warnings are worked out on the service's main
 * thread), and not remembered, so such an IR never reaches a generator.
 * A pattern the regex policy would refuse is therefore not refused here.
 *
 * @example
 * lowerForAnalysis('matches(email, "^a")', DEFAULT_LIMITS, { map: identity }); // { ok: true, expr: { kind: 'matches', ... } }
 */
export function lowerForAnalysis(
  source: string,
  limits: CompilerLimits,
  options: Omit<LowerOptions, 'limits' | 'compilePattern'>,
  what = 'expression',
): ExpressionResult {
  const lowering = { ...options, compilePattern: (): PatternResult => ({ ok: true, matcher: UNBUILT_MATCHER, weight: 0 }) };
  const key = memoKey(source, limits, lowering, what);
  // A remembered failure may be the regex policy's refusal, which this lowering does not apply: the answer must not
  // depend on what the memo holds, so only a success (the same IR, with its matchers built) is taken from it.
  const hit = key === undefined ? undefined : memo.get(key);
  return hit?.ok === true ? hit : compileUncached(source, limits, lowering, what);
}

function compileUncached(
  source: string,
  limits: CompilerLimits,
  options: Omit<LowerOptions, 'limits'>,
  what: string,
): ExpressionResult {
  const parsed = parseSource(source, limits, options.map, what);
  if (!parsed.ok) return parsed;
  try {
    return { ok: true, expr: lowerExpression(parsed.expression, source, { ...options, limits }) };
  } catch (err) {
    if (err instanceof ExpressionFailure) return { ok: false, error: err.error };
    // acorn-built trees nest as deep as the source; the depth limit stops the walk first.
    if (err instanceof RangeError) return { ok: false, error: { code: 'TOO_DEEP', message: `${what} is nested too deeply` } };
    throw err;
  }
}
