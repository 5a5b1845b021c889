/**
 * The rule compiler: rules in, JavaScript out (docs/rule-language.md).
 *
 * Stages: `paths.ts` (2.4 paths) and `expression/` (parse with acorn, check
 * against the allow-list, lower to IR, generate) feed `rule-plan.ts` (one
 * rule checked and normalized), which `ruleset-source.ts` turns into one
 * validator factory built with `codegen/`; generated code reaches only
 * `runtime.ts` and the refs it is given. `regex/` and `schema/` apply the
 * regex and schema policies. `analysis/` holds the passes over the IR: the
 * cost model, and the save-time warnings of a rule's fields that compile
 * (constant conditions, type mismatches, paths a payload schema does not
 * declare). `table/` plans, indexes and searches decision
 * tables (a rule's optional `table`).
 */
export * from './types.ts';
export { DEFAULT_LIMITS, MAX_RULESET_TEXT_LENGTH, MAX_TABLE_INPUTS, MAX_TABLE_OUTPUTS, resolveLimits } from './limits.ts';
export { HIT_POLICIES } from './table/table-definition.ts';
export { parseCell, type CellTest, type ParsedCell } from './table/cell-test.ts';
export { TABLE_ERROR_CODES } from './ruleset-source.ts';
export { checkRule } from './check-rule.ts';
export { analyzeRule, type AnalyzeOptions } from './analysis/rule-warnings.ts';
export type { RuleWarning, RuleWarningCode, WarningPath } from './analysis/warnings.ts';
export { PayloadSchema } from './analysis/payload-schema-paths.ts';
export { compileRuleset, rulesetCostProfile } from './compile-ruleset.ts';
export { costProfileOf, type CostProfile, type RuleCost } from './analysis/cost-pass.ts';
export { explainRuleset, type ExplainingRuleset, type ExplainResult, type TraceEntry, type TraceReason } from './explain-ruleset.ts';
export { compileExpressionFunction, type ExpressionFunction, type ExpressionInputs } from './expression-function.ts';
export { positionOf } from './expression/parse.ts';
export { appendPath, formatPath, isPathError, parsePath, type PathError, type PathSegment } from './paths.ts';
export { MAX_FAILURES_PER_VALIDATION, runtime, TooManyFailuresError, type Runtime } from './runtime.ts';
export { MAX_SCHEMA_APPLICATIONS, schemaApplications } from './schema/index.ts';
export { FUNCTION_RECORDS, QUADRATIC_FUNCTIONS } from './language/index.ts';
export { MAX_CONTEXT_PATTERN_WEIGHT, MAX_FIELD_PATTERN_WEIGHT, MAX_PATTERN_SIZE } from './regex/pattern-size.ts';
