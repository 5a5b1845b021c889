/**
 * Save-time warnings of one rule: the compiler's analysis of its paths,
 * `when`, expression and message placeholders, optionally against the
 * payload schema of its context. Pure and bounded: each expression is
 * lowered to IR as the compiler lowers it (lowerForAnalysis, under the
 * compile limits) and the analyses are passes over that IR
 * (expression-analysis.ts, missing-value-message.ts); the schema is read
 * with a fixed budget per path.
 *
 * Warnings are about rules that compile. A field that does not compile
 * gives no warning (its compile error says what is wrong): with no IR,
 * there is nothing to analyse. The exception is a `matches()` pattern that
 * only the regex policy refuses: lowering for analysis builds no automaton,
 * so it does not apply that policy.
 */
import { identity, shiftedBy } from '../expression/errors.ts';
import type { Expr, TableRootName } from '../expression/ir.ts';
import { lowerForAnalysis } from '../expression/compile-expression.ts';
import { spanOf, type SourceSpan } from '../expression/source-span.ts';
import { positionOf } from '../expression/parse.ts';
import { resolveLimits } from '../limits.ts';
import { formatPath, isPathError, parsePath, type PathSegment } from '../paths.ts';
import type { CompileOptions, CompilerLimits, RuleDefinition } from '../types.ts';
import { analyzeExpression, type ExpressionAnalysis, type FieldText } from './expression-analysis.ts';
import { bareValueIn } from './missing-value-message.ts';
import { PayloadSchema } from './payload-schema-paths.ts';
import { PlaceTable, UNKNOWN, isConstant, type RuleScope, type Value } from './rule-scope.ts';
import { UsageEvidence } from './usage-evidence.ts';
import { ARRAY, FIELD_VALUE, INVALID, NUMBER, UNDEFINED, describeTypes, typeOfValue } from './value-types.ts';
import { WarningSink, type RuleWarning, type TableWarningPath } from './warnings.ts';
import { compilePattern } from '../regex/index.ts';
import { analyzeTable, type TableAnalysisOptions } from '../table/table-analysis.ts';
import { planTable } from '../table/plan-table.ts';

export interface AnalyzeOptions extends CompileOptions {
  /**
   * The context's payload schema (JSON Schema, draft 2020-12). Without one
   * there are no UNKNOWN_FIELD or BARE_NAME warnings, and types come from
   * the rule's own literals and uses only. A PayloadSchema made once may
   * serve many rules of the context: it remembers what it has looked up.
   */
  payloadSchema?: unknown;
  /**
   * Steps the analysis of a decision table may take (table-analysis.ts,
   * DEFAULT_ANALYSIS_BUDGET when not given): a caller on a busy thread may
   * want less; past it the analysis says it stopped (TABLE_INCOMPLETE).
   */
  tableAnalysisBudget?: number;
}

/**
 * The warnings of one rule, ordered by field and position; `[]` when there
 * is nothing to say.
 *
 * @example
 * analyzeRule({ code: 'A', name: 'A', expression: '1 > 0' });
 * // [{ code: 'CONSTANT', path: 'expression', line: 1, column: 1,
 * //    message: '`1 > 0` is always true: the expression does not depend on the payload, so the rule never fails' }]
 */
export function analyzeRule(rule: RuleDefinition, options?: AnalyzeOptions): RuleWarning[] {
  if (rule === null || typeof rule !== 'object') return [];
  const limits = resolveLimits(options);
  const given = options?.payloadSchema;
  const schema = given === undefined || given instanceof PayloadSchema ? given : new PayloadSchema(given);
  const places = new PlaceTable(schema);
  const sink = new WarningSink();

  const forEach = checkedPath(rule.forEach, 'forEach', places, sink, limits);
  if (forEach !== undefined && (forEach.types & ARRAY) === 0 && places.at(forEach.segments).lookup.status === 'declared') {
    sink.add(
      'NEVER_EVALUATED',
      'forEach',
      `\`${rule.forEach}\` is declared ${describeTypes(forEach.types & ~UNDEFINED)}, not an array: the rule never runs`,
      { line: 1, column: 1 },
    );
  }
  const fieldPath = checkedPath(rule.fieldPath, 'fieldPath', places, sink, limits);
  const scope = ruleScope(rule, places, forEach, fieldPath);

  // Each field is lowered as the compiler lowers it (the compiler's memoized IR when there is one), and analysed on its IR.
  const hasTable = rule.table !== undefined;
  if (typeof rule.when === 'string') {
    const when = analyzeField(lowered(rule.when, 'when', false, limits), { path: 'when', source: rule.when }, scope, sink, limits);
    if (when !== undefined) reportConstant(when, 'when', sink);
  }
  if (typeof rule.expression === 'string') {
    const text: FieldText = { path: 'expression', source: rule.expression };
    const expression = analyzeField(lowered(rule.expression, 'expression', hasTable, limits), text, scope, sink, limits);
    if (expression !== undefined) reportConstant(expression, 'expression', sink);
  }
  if (typeof rule.message === 'string' && rule.message.length <= limits.maxTemplateLength) {
    // In a schema rule's message, `$value` is whichever value the schema refused.
    const messageScope = rule.schema === undefined ? scope : { ...scope, value: { types: FIELD_VALUE, depends: true } };
    const text: FieldText = { path: 'message', source: rule.message };
    for (const placeholder of placeholders(rule.message)) {
      const expr = loweredPlaceholder(placeholder, hasTable, limits);
      const analysis = analyzeField(expr, text, messageScope, sink, limits);
      if (analysis !== undefined && rule.required === true) reportMissingValue(analysis.node, sink);
    }
  }
  scope.evidence.report(sink);
  if (rule.table !== undefined) analyzeRuleTable(rule, { schema: places.schema, budget: options?.tableAnalysisBudget }, limits, sink);
  if (rule.enabled === false) sink.add('NEVER_EVALUATED', 'enabled', 'the rule is disabled: it is never evaluated');
  return sink.list();
}

/**
 * The findings of a rule's decision table (table/table-analysis.ts). A
 * table that does not plan has compile errors and no warnings.
 */
function analyzeRuleTable(rule: RuleDefinition, options: TableAnalysisOptions, limits: CompilerLimits, sink: WarningSink): void {
  const planned = planTable(rule.table, { ruleCode: String(rule.code), limits, compilePattern: () => (pattern) => compilePattern(pattern, limits) });
  if (!planned.ok) return;
  for (const finding of analyzeTable(planned.plan, options)) sink.addTable(finding.code, finding.path as TableWarningPath, finding.message, finding.witness);
}

/** A rule's path field that parses, with what is known of the value there. */
interface CheckedPath {
  segments: PathSegment[];
  types: number;
  /** True when the payload schema does not declare it (reported). */
  undeclared: boolean;
}

function checkedPath(
  text: unknown,
  path: 'fieldPath' | 'forEach',
  places: PlaceTable,
  sink: WarningSink,
  limits: CompilerLimits,
): CheckedPath | undefined {
  if (typeof text !== 'string') return undefined;
  const segments = parsePath(text, limits);
  if (isPathError(segments)) return undefined;
  const lookup = places.at(segments).lookup;
  if (lookup.status !== 'undeclared' || places.schema === undefined) {
    return { segments, types: lookup.types, undeclared: false };
  }
  if (lookup.parentTypes !== undefined) {
    const parent = formatPath(segments.slice(0, lookup.at)) || '$';
    sink.add('UNKNOWN_FIELD', path, `\`${text}\` is not in the payload schema: \`${parent}\` is declared ${describeTypes(lookup.parentTypes)}`, { line: 1, column: 1 });
  } else {
    const corrected = places.closestPath(segments, 0);
    const suggestion = corrected === undefined ? undefined : formatPath(corrected);
    sink.add(
      'UNKNOWN_FIELD',
      path,
      `\`${text}\` is not in the payload schema${suggestion === undefined ? '' : `: did you mean \`${suggestion}\`?`}`,
      { line: 1, column: 1 },
      suggestion,
    );
  }
  return { segments, types: lookup.types, undeclared: true };
}

function ruleScope(
  rule: RuleDefinition,
  places: PlaceTable,
  forEach: CheckedPath | undefined,
  fieldPath: CheckedPath | undefined,
): RuleScope {
  const payload = places.valueAt([]) ?? UNKNOWN;
  let value: Value = UNKNOWN;
  if (rule.fieldPath === undefined) value = payload;
  else if (fieldPath !== undefined && !fieldPath.undeclared) value = places.valueAt(fieldPath.segments) ?? UNKNOWN;
  const scope: RuleScope = {
    places,
    evidence: new UsageEvidence(),
    payload,
    value,
    expected: rule.expectedValue === undefined || rule.expectedValue === null
      ? { types: FIELD_VALUE, depends: false }
      : { types: typeOfValue(rule.expectedValue), depends: false, known: { value: rule.expectedValue } },
  };
  if (rule.forEach !== undefined) {
    scope.item = forEach !== undefined && !forEach.undeclared ? places.valueAt([...forEach.segments, { each: true }]) ?? UNKNOWN : UNKNOWN;
    scope.index = { types: NUMBER, depends: true };
  }
  return scope;
}

/** A message placeholder's text and where it starts in the message. */
interface Placeholder {
  source: string;
  /** Its offset in the message. */
  offset: number;
  origin: { line: number; column: number };
}

/** `{{ ... }}` placeholders of a template, where each one's text starts in the field. */
function* placeholders(template: string): Generator<Placeholder> {
  let pos = 0;
  for (;;) {
    const open = template.indexOf('{{', pos);
    if (open < 0) return;
    const close = template.indexOf('}}', open + 2);
    if (close < 0) return;
    yield { source: template.slice(open + 2, close), offset: open + 2, origin: positionOf(template, open + 2) };
    pos = close + 2;
  }
}

/** The names the message of a rule with a table may read (as rule-plan.ts compiles it). */
const ROW_NAMES: ReadonlySet<TableRootName> = new Set(['row', 'rowIndex']);

/**
 * The IR of an expression field as rule-plan.ts lowers it (`$row` and
 * `$rowIndex` in the expression of a rule with a table), for analysis only
 * (lowerForAnalysis: no regex automaton is built); undefined when it does
 * not lower.
 */
function lowered(source: string, what: 'when' | 'expression', hasTable: boolean, limits: CompilerLimits): Expr | undefined {
  const compiled = lowerForAnalysis(source, limits, {
    map: identity,
    ...(hasTable && what === 'expression' ? { tableNames: ROW_NAMES } : {}),
  }, what);
  return compiled.ok ? compiled.expr : undefined;
}

/** The IR of a message placeholder as template.ts lowers it, its spans counted from the start of the message (for analysis only). */
function loweredPlaceholder(placeholder: Placeholder, hasTable: boolean, limits: CompilerLimits): Expr | undefined {
  const compiled = lowerForAnalysis(placeholder.source, limits, {
    map: shiftedBy(placeholder.origin),
    offset: placeholder.offset,
    ...(hasTable ? { tableNames: ROW_NAMES } : {}),
  }, 'placeholder');
  return compiled.ok ? compiled.expr : undefined;
}

/** The analysis of a field's IR; undefined for a field that does not compile (its compile error says why). */
function analyzeField(expr: Expr | undefined, text: FieldText, scope: RuleScope, sink: WarningSink, limits: CompilerLimits): ExpressionAnalysis | undefined {
  return expr === undefined ? undefined : analyzeExpression(expr, text, scope, sink, limits.maxNestingDepth);
}

/**
 * MISSING_VALUE_MESSAGE for a placeholder of a required rule's message that
 * shows `$value` as is (missing-value-message.ts).
 */
function reportMissingValue(placeholder: Expr, sink: WarningSink): void {
  const value = bareValueIn(placeholder);
  if (value === undefined) return;
  sink.add(
    'MISSING_VALUE_MESSAGE',
    'message',
    '`$value` shows as nothing when the field is missing, which is when this required rule fails: say what is missing ' +
      "without it, or say what to show then (`{{ $value ?? 'nothing' }}`)",
    { line: value.line, column: value.column },
  );
}

/** How a value reads in a message: `true`, `5`, `"abc"`, `undefined`, the invalid number. */
function shown(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeOfValue(value) === INVALID) return 'the invalid number';
  const json = JSON.stringify(value);
  return json.length <= 40 ? json : `${json.slice(0, 39)}…`;
}

/**
 * CONSTANT for an expression or `when` that does not depend on the payload
 * (NEVER_EVALUATED for a `when` that is never true); otherwise CONSTANT for
 * each outermost condition inside it that does not.
 */
function reportConstant(analysis: ExpressionAnalysis, path: 'expression' | 'when', sink: WarningSink): void {
  const { node, value } = analysis;
  const what = path === 'when' ? 'condition' : 'expression';
  if (isConstant(value)) {
    const quoted = `\`${analysis.quote(node)}\``;
    const position = analysis.position(node);
    if (value.known === undefined) {
      const outcome = path === 'when' ? 'the rule runs for every payload or for none' : 'the rule passes for every payload or fails for every one';
      sink.add('CONSTANT', path, `${quoted} does not depend on the payload: ${outcome}`, position);
    } else if (value.known.value === true) {
      const outcome = path === 'when' ? 'it never skips the rule' : 'the rule never fails';
      sink.add('CONSTANT', path, `${quoted} is always true: the ${what} does not depend on the payload, so ${outcome}`, position);
    } else if (path === 'when') {
      sink.add('NEVER_EVALUATED', path, `${quoted} is always ${shown(value.known.value)}: the condition does not depend on the payload, so the rule never runs`, position);
    } else {
      sink.add('CONSTANT', path, `${quoted} is always ${shown(value.known.value)}: the expression does not depend on the payload, so the rule always fails`, position);
    }
    return;
  }
  const reported: SourceSpan[] = [];
  const constants = analysis.conditions.filter((c) => isConstant(c.value));
  for (const c of constants) {
    const at = spanOf(c.node);
    if (at === undefined) continue;
    // Only the outermost: `!(1 > 0)` is reported, not `1 > 0` again inside it.
    if (constants.some((o) => o !== c && within(at, spanOf(o.node)))) continue;
    if (reported.some((r) => r.start === at.start && r.end === at.end)) continue;
    reported.push(at);
    const known = c.value.known;
    sink.add(
      'CONSTANT',
      path,
      known === undefined
        ? `\`${analysis.quote(c.node)}\` does not depend on the payload: it has the same value for every payload`
        : `\`${analysis.quote(c.node)}\` is always ${shown(known.value)}: it does not depend on the payload`,
      analysis.position(c.node),
    );
  }
}

/** True when `inner` lies inside `outer` (or is the same text). */
function within(inner: SourceSpan, outer: SourceSpan | undefined): boolean {
  return outer !== undefined && outer.start <= inner.start && inner.end <= outer.end;
}
