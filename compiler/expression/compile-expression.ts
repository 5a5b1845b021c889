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

export type ExpressionResult = { ok: true; expr: Expr } | { ok: false; error: ExpressionError };

/** Recently compiled expressions; bounded so tenants cannot grow it without limit. */
const memo = new Map<string, ExpressionResult>();
const MEMO_SIZE = 4096;

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
  const key = options.map === identity
    ? `${limits.maxExpressionLength}:${limits.maxNestingDepth}:${limits.maxCallbackDepth}:${limits.maxPatternLength}:${what}:${source}`
    : undefined;
  if (key !== undefined) {
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
  }
  const result = compileUncached(source, limits, options, what);
  if (key !== undefined) {
    if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value as string);
    memo.set(key, result);
  }
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
