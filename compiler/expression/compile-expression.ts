/**
 * One expression from source to IR: parse (with the source limits), then
 * the allow-list checker. Results for the plain expression fields are
 * memoized by source text, so a context of many rules that share
 * expressions parses each one once.
 */
import type { CompilerLimits } from '../types.ts';
import { identity, ExpressionFailure, type ExpressionError } from './errors.ts';
import type { Expr } from './ir.ts';
import { lowerExpression, type LowerOptions } from './lower.ts';
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
  // Only unshifted results are shareable: positions of placeholders depend on where they sit.
  const tableNames = options.tableNames === undefined ? '' : [...options.tableNames].sort().join(',');
  const key = options.map === identity && options.offset === undefined
    ? `${limits.maxExpressionLength}:${limits.maxNestingDepth}:${limits.maxCallbackDepth}:${limits.maxPatternLength}:${what}:${tableNames}:${source}`
    : undefined;
  if (key !== undefined) {
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
  }
  const result = compileUncached(source, limits, options, what);
  if (key !== undefined) memo.set(key, result, result.ok ? patternSizeOf([result.expr]) : 0);
  return result;
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
