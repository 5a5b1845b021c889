/**
 * The compiler's limits, declared in one place (docs/rule-language.md,
 * 3.5) so that the service, the tests and the error messages agree.
 */
import type { CompilerLimits, CompileOptions } from './types.ts';

/**
 * Default limits of the rule language (docs/rule-language.md). Frozen: tenants share them.
 *
 * @example
 * DEFAULT_LIMITS.maxExpressionLength; // 4096
 */
export const DEFAULT_LIMITS: Readonly<CompilerLimits> = Object.freeze({
  maxExpressionLength: 4096,
  maxNestingDepth: 64,
  maxCallbackDepth: 2,
  maxPatternLength: 512,
  maxTemplateLength: 2000,
  maxSchemaBytes: 65536,
  maxSchemaDepth: 32,
  maxExpectedValueBytes: 65536,
  maxPathLength: 256,
  maxPathSegments: 32,
  maxTableRows: 10_000,
  maxTableCellLength: 1000,
});

/** Most inputs (columns) and outputs of one decision table. */
export const MAX_TABLE_INPUTS = 32;
export const MAX_TABLE_OUTPUTS = 32;

/**
 * Most characters of rule text (rule-plan.ts `ruleTextLength`) one ruleset
 * may hold: 5000 rules of 800 characters. Each field is bounded on its own,
 * but 5000 rules of 64 KiB schemas would take gigabytes of heap and far too
 * long to compile; this bound keeps a validator's memory and compile time
 * in proportion to what one context can reasonably need.
 */
export const MAX_RULESET_TEXT_LENGTH = 4_000_000;

/** The defaults overlaid with the caller's partial limits. */
export function resolveLimits(options?: CompileOptions): Readonly<CompilerLimits> {
  if (options?.limits === undefined) return DEFAULT_LIMITS;
  const merged: CompilerLimits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof CompilerLimits)[]) {
    const value = options.limits[key];
    if (typeof value === 'number' && Number.isFinite(value)) merged[key] = value;
  }
  return Object.freeze(merged);
}
