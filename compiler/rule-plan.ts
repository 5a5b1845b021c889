/**
 * One rule checked and normalized for code generation (docs/rule-language.md and
 * 3): paths parsed, expressions and the message template lowered to IR,
 * the schema compiled, defaults applied, the expected value given or
 * inferred. Every problem becomes a CompileError naming the rule's field;
 * a rule with errors has no plan.
 */
import type { CompileError, CompilerLimits, RuleDefinition, RuleField, Severity } from './types.ts';
import { compileExpression } from './expression/compile-expression.ts';
import { identity, type ExpressionError } from './expression/errors.ts';
import { keysReadFrom, patternsIn } from './expression/generate.ts';
import { comparedOperand, inferExpected } from './expression/infer.ts';
import type { Expr } from './expression/ir.ts';
import type { PatternResult } from './expression/lower.ts';
import { compileTemplate, type TemplatePart } from './expression/template.ts';
import { isPathError, parsePath, pointerToPath, type PathSegment } from './paths.ts';
import { compilePattern } from './regex/index.ts';
import { MAX_FIELD_PATTERN_WEIGHT, PatternWeights } from './regex/pattern-size.ts';
import { compileSchema, type SchemaValidator } from './schema/index.ts';
import { jsonOf } from './json-value.ts';
import { planTable, type TablePlan } from './table/plan-table.ts';
import type { TableRootName } from './expression/ir.ts';
import { ruleCost, type RuleCost } from './analysis/cost-pass.ts';

/** A parsed path with the text it was written as (reported paths keep the author's spelling). */
export interface PlannedPath {
  text: string;
  segments: PathSegment[];
}

export interface RulePlan {
  code: string;
  name: string;
  severity: Severity;
  errorCode: string;
  priority: number;
  required: boolean;
  fieldPath?: PlannedPath;
  forEach?: PlannedPath;
  expression?: Expr;
  when?: Expr;
  /** Undefined means the default message. */
  message?: TemplatePart[];
  schema?: SchemaValidator;
  /** The rule's expectedValue when given (not undefined or null). */
  givenExpected?: { value: unknown };
  /** Given, else inferred from the expression (3.6); undefined reports null. */
  expected?: { value: unknown };
  /**
   * Characters of the rule's text (expression, when, message, schema): a
   * measure of how much code it generates, by which rulesets are cut into
   * parts (ruleset-source.ts).
   */
  textLength: number;
  /** Its distinct regex patterns (matches() and schema) with their weights (regex/pattern-size.ts). */
  patterns: ReadonlyMap<string, number>;
  /** The rule's decision table (compiler/table/), whose matched row the expression and message see as `$row`. */
  table?: TablePlan;
  /**
   * The output of the matched row that is the expected value, when the rule
   * of a table gives none and its expression compares the value with it
   * (`$value <= $row.maxAmount`).
   */
  expectedRowOutput?: string;
  /** What the rule can cost per payload, for the evaluation deadline (analysis/cost-pass.ts). */
  cost: RuleCost;
}

/** What the expression and message of a rule with a table may name besides the language's own names. */
const ROW_NAMES: ReadonlySet<TableRootName> = new Set(['row', 'rowIndex']);

const RULE_CODE = /^[A-Za-z0-9_.-]{1,64}$/;
const SEVERITIES: ReadonlySet<unknown> = new Set(['Error', 'Warning', 'Info']);

/**
 * The regex policy for the `matches()` of one field. The field's distinct
 * patterns may weigh MAX_FIELD_PATTERN_WEIGHT together, so that checking
 * one field compiles a bounded amount.
 * Per field, not per rule: a field's result is memoized by its text alone.
 */
function patternPolicy(limits: CompilerLimits): (pattern: string) => PatternResult {
  const field = new PatternWeights();
  return (pattern) => {
    const result = compilePattern(pattern, limits);
    if (!result.ok) return result;
    if (field.add(pattern, result.weight) > MAX_FIELD_PATTERN_WEIGHT) {
      return {
        ok: false,
        code: 'TOO_LONG',
        message: `the patterns of this field weigh more than ${MAX_FIELD_PATTERN_WEIGHT} together (a pattern weighs the steps of its program on the linear-time engine, a tenth of them on the native engine)`,
      };
    }
    return { ok: true, matcher: result.matcher, weight: result.weight };
  };
}

/**
 * Checks one rule and returns its plan, or its compile errors (never both).
 * `textLength` is the rule's ruleTextLength, for a caller that measured it
 * already (it stringifies the schema).
 *
 * @example
 * planRule({ code: 'A', name: 'Amount', fieldPath: 'amount', expression: '$value > 0' }, DEFAULT_LIMITS);
 */
export function planRule(
  rule: RuleDefinition,
  limits: CompilerLimits,
  textLength?: number,
): { ok: true; plan: RulePlan } | { ok: false; errors: CompileError[] } {
  if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) {
    return { ok: false, errors: [{ ruleCode: '', field: 'code', code: 'INVALID_RULE', message: 'a rule must be an object' }] };
  }
  const ruleCode = typeof rule.code === 'string' ? rule.code : '';
  const errors: CompileError[] = [];
  const error = (field: RuleField, e: ExpressionError & { path?: string }): void => {
    errors.push({ ruleCode, field, ...e });
  };
  const invalid = (field: RuleField, message: string): void => error(field, { code: 'INVALID_RULE', message });

  if (typeof rule.code !== 'string' || !RULE_CODE.test(rule.code)) {
    invalid('code', 'code must be 1-64 characters of A-Z, a-z, 0-9, "_", "." and "-"');
  }
  if (typeof rule.name !== 'string' || rule.name.length === 0) invalid('name', 'name must be a non-empty string');
  if (rule.severity !== undefined && !SEVERITIES.has(rule.severity)) {
    invalid('severity', 'severity must be Error, Warning or Info');
  }
  if (rule.errorCode !== undefined && typeof rule.errorCode !== 'string') invalid('errorCode', 'errorCode must be a string');
  if (rule.priority !== undefined && !Number.isSafeInteger(rule.priority)) invalid('priority', 'priority must be an integer');
  if (rule.required !== undefined && typeof rule.required !== 'boolean') invalid('required', 'required must be a boolean');
  if (rule.enabled !== undefined && typeof rule.enabled !== 'boolean') invalid('enabled', 'enabled must be a boolean');
  const required = rule.required === true;
  // A table counts too: a match of a table without an expression passes.
  if (rule.expression === undefined && rule.schema === undefined && rule.table === undefined && !required) {
    invalid('expression', 'a rule needs at least one of expression, schema, table or required: true');
  }
  if (required && rule.fieldPath === undefined) invalid('required', 'required: true needs a fieldPath');

  const forEach = planPath(rule.forEach, 'forEach', limits, error);
  if (forEach !== undefined && forEach.segments.some((s) => 'each' in s)) {
    error('forEach', { code: 'INVALID_PATH', message: 'forEach cannot contain `[]`' });
  }
  const fieldPath = planPath(rule.fieldPath, 'fieldPath', limits, error);
  if (fieldPath !== undefined) checkEach(fieldPath, forEach, rule.forEach !== undefined, error);

  const hasTable = rule.table !== undefined;
  const lowerOptions = (): { compilePattern: (pattern: string) => PatternResult; map: typeof identity } =>
    ({ compilePattern: patternPolicy(limits), map: identity });
  let table: TablePlan | undefined;
  if (hasTable) {
    const planned = planTable(rule.table, { ruleCode, limits, compilePattern: () => patternPolicy(limits) });
    if (planned.ok) table = planned.plan;
    else errors.push(...planned.errors);
  }
  const rowNames = hasTable ? { tableNames: ROW_NAMES } : {};
  let expression: Expr | undefined;
  if (rule.expression !== undefined) {
    const compiled = compileExpression(rule.expression, limits, { ...lowerOptions(), ...rowNames }, 'expression');
    if (compiled.ok) expression = compiled.expr;
    else error('expression', compiled.error);
  }
  let when: Expr | undefined;
  if (rule.when !== undefined) {
    const compiled = compileExpression(rule.when, limits, lowerOptions(), 'when');
    if (compiled.ok) when = compiled.expr;
    else error('when', compiled.error);
  }
  let message: TemplatePart[] | undefined;
  if (rule.message !== undefined) {
    const compiled = compileTemplate(rule.message, limits, { compilePattern: patternPolicy(limits), ...rowNames });
    if (compiled.ok) message = compiled.parts;
    else error('message', compiled.error);
  }
  let schema: SchemaValidator | undefined;
  const patterns = new Map<string, number>();
  if (rule.schema !== undefined) {
    const compiled = compileSchema(rule.schema, limits);
    if (compiled.ok) {
      schema = compiled.validate;
      for (const [pattern, size] of compiled.patterns.entries()) patterns.set(pattern, size);
    } else {
      // Placed inside the schema: `schema.properties.street.minLenght`.
      error('schema', { code: compiled.code, message: compiled.message, path: pointerToPath(compiled.pointer, 'schema') });
    }
  }
  let givenExpected: { value: unknown } | undefined;
  if (rule.expectedValue !== undefined && rule.expectedValue !== null) {
    const json = jsonOf(rule.expectedValue);
    // Every failure of the rule carries it and the validator holds it, so it is bounded like a schema.
    const bytes = json === undefined ? 0 : Buffer.byteLength(json, 'utf8');
    if (json === undefined) invalid('expectedValue', 'expectedValue must be a JSON value with finite numbers');
    else if (bytes > limits.maxExpectedValueBytes) {
      error('expectedValue', { code: 'TOO_LONG', message: `expectedValue is ${bytes} bytes of JSON; the limit is ${limits.maxExpectedValueBytes}` });
    } else givenExpected = { value: JSON.parse(json) as unknown };
  }
  if (table !== undefined) {
    // A misspelt output would read undefined on every row: refuse it while the author can see why.
    const fields: [RuleField, readonly Expr[]][] = [
      ['expression', expression === undefined ? [] : [expression]],
      ['message', (message ?? []).flatMap((part) => (part.kind === 'expr' ? [part.expr] : []))],
    ];
    for (const [field, exprs] of fields) {
      const unknown = exprs.flatMap((e) => keysReadFrom(e, 'row')).find((key) => !table.outputs.includes(String(key)));
      if (unknown !== undefined) {
        const outputs = table.outputs.length === 0 ? 'the table has no outputs' : `its outputs are ${table.outputs.join(', ')}`;
        error(field, { code: 'INVALID_TABLE', message: `\`$row.${String(unknown)}\` is not an output of the table: ${outputs}` });
      }
    }
  }
  if (errors.length > 0) return { ok: false, errors };

  const expected = givenExpected
    ?? (expression === undefined ? undefined : inferExpected(expression, { fieldPath: fieldPath?.segments }));
  const compared = table === undefined || expected !== undefined || expression === undefined
    ? undefined
    : comparedOperand(expression, { fieldPath: fieldPath?.segments });
  const expectedRowOutput = compared?.kind === 'member' && compared.object.kind === 'root' && compared.object.name === 'row' &&
    typeof compared.key === 'string' && table?.outputs.includes(compared.key) === true
    ? compared.key
    : undefined;
  for (const e of [expression, when]) if (e !== undefined) patternsIn(e, patterns);
  for (const e of table?.expressionCells ?? []) patternsIn(e, patterns);
  for (const input of table?.inputs ?? []) if (input.expression !== undefined) patternsIn(input.expression, patterns);
  for (const part of message ?? []) if (part.kind !== 'text') patternsIn(part.expr, patterns);
  const plan: Omit<RulePlan, 'cost'> = {
    code: rule.code,
    name: rule.name,
    severity: rule.severity ?? 'Error',
    errorCode: rule.errorCode ?? rule.code,
    priority: rule.priority ?? 0,
    required,
    fieldPath,
    forEach,
    expression,
    when,
    message,
    schema,
    givenExpected,
    expected,
    textLength: textLength ?? ruleTextLength(rule),
    patterns,
    table,
    expectedRowOutput,
  };
  return { ok: true, plan: { ...plan, cost: ruleCost(rule, plan) } };
}

/**
 * Characters of a rule's text: name, expression, when, message, and the
 * JSON of its schema, expected value and decision table. What a compiled rule takes in
 * memory and time grows in proportion to it. Any value is measured,
 * checked or not: what is not text counts nothing.
 */
export function ruleTextLength(rule: RuleDefinition): number {
  if (rule === null || typeof rule !== 'object') return 0;
  let length = 0;
  for (const text of [rule.name, rule.expression, rule.when, rule.message]) if (typeof text === 'string') length += text.length;
  // Schemas and expected values are bounded on their own; their JSON length is what the validator grows with.
  for (const value of [rule.schema, rule.expectedValue, rule.table]) {
    if (value === undefined || value === null) continue;
    try {
      length += JSON.stringify(value)?.length ?? 0;
    } catch {
      // Not JSON: planning refuses it.
    }
  }
  return length;
}

function planPath(
  text: unknown,
  field: 'fieldPath' | 'forEach',
  limits: CompilerLimits,
  error: (field: RuleField, e: ExpressionError) => void,
): PlannedPath | undefined {
  if (text === undefined) return undefined;
  if (typeof text !== 'string') {
    error(field, { code: 'INVALID_PATH', message: `${field} must be a string` });
    return undefined;
  }
  const parsed = parsePath(text, limits);
  if (isPathError(parsed)) {
    error(field, parsed.column === undefined
      ? { code: 'INVALID_PATH', message: parsed.message }
      : { code: 'INVALID_PATH', message: parsed.message, line: 1, column: parsed.column });
    return undefined;
  }
  return { text, segments: parsed };
}

/** `[]` only with forEach, once, right after the forEach path (2.3). */
function checkEach(
  fieldPath: PlannedPath,
  forEach: PlannedPath | undefined,
  hasForEach: boolean,
  error: (field: RuleField, e: ExpressionError) => void,
): void {
  const eachCount = fieldPath.segments.filter((s) => 'each' in s).length;
  if (eachCount === 0) return;
  if (!hasForEach) {
    error('fieldPath', { code: 'INVALID_PATH', message: '`[]` is only allowed in the fieldPath of a forEach rule' });
    return;
  }
  if (forEach === undefined) return;
  const at = fieldPath.segments.findIndex((s) => 'each' in s);
  const prefixMatches = eachCount === 1 && at === forEach.segments.length &&
    forEach.segments.every((s, i) => sameSegment(s, fieldPath.segments[i]));
  if (!prefixMatches) {
    error('fieldPath', {
      code: 'INVALID_PATH',
      message: `a fieldPath with \`[]\` must start with the forEach path: ${forEach.text}[]`,
    });
  }
}

function sameSegment(a: PathSegment, b: PathSegment): boolean {
  if ('key' in a) return 'key' in b && a.key === b.key;
  if ('index' in a) return 'index' in b && a.index === b.index;
  return 'each' in b;
}
