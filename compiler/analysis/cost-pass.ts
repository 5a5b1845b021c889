/**
 * The cost model as a pass over a planned rule's IR: a worst-case bound of
 * the steps a rule takes on a payload, so that the service puts only the
 * requests that could run long under an evaluation deadline
 * (src/validators/evaluation-deadline.ts).
 *
 * Validators run on the event loop. Most rules are linear in the payload,
 * but some constructs multiply: a callback inside a callback
 * (`a.every(x => a.every(y => ...))`), a quadratic function (`distinct()`
 * over objects compares every pair, the records of compiler/language/ say
 * which functions are), `uniqueItems` in schemas, and forEach around any
 * of them. A one-megabyte payload could then keep the process busy for
 * minutes, stalling every tenant.
 *
 * Each rule gets a degree d, its cost being at most about n^d steps for a
 * payload of size n (values plus string characters): every operation
 * counts as linear (deep equality, string functions and regexes on linear
 * engines are), a callback multiplies its body by one more n, a call's
 * record may say quadratic, forEach adds one. This over-counts (a callback
 * over a small sub-array counts as n) but never under-counts.
 *
 * A rule's weight says how many such steps it can take: one per operation
 * that may be linear (a call, a comparison, a join), since a rule of a
 * thousand calls of `lower(s)` reads `s` a thousand times; times the most
 * operands one chain of `+` joins, since the string it builds is that many
 * times longer than one of them (`len(a+a+...+a)` with 1024 terms reads
 * 1024 copies of `a`). A schema adds as many steps as the most subschemas
 * it can apply to one value (schema/schema-expansion.ts), and each
 * placeholder of the message one more (`{{ $ }}` renders the whole
 * payload) plus what its expression can take.
 */
import type { Expr } from '../expression/ir.ts';
import { irChildren } from '../expression/ir-walk.ts';
import { FUNCTIONS_BY_NAME, type CostDegree } from '../language/index.ts';
import type { RulePlan } from '../rule-plan.ts';
import { MAX_SCHEMA_APPLICATIONS, schemaApplications } from '../schema/index.ts';
import type { TablePlan } from '../table/plan-table.ts';
import type { RuleDefinition } from '../types.ts';

/** Rule weights by degree: rules of total weight `profile[d]` cost at most that many times n^d steps. */
export type CostProfile = readonly number[];

/** What one rule costs: at most `weight` times n^`degree` steps on a payload of size n. */
export interface RuleCost {
  degree: number;
  weight: number;
}

/** A call reads its arguments, so it counts as linear at least, whatever its record says of its own work. */
const CALL_DEGREE: Readonly<Record<CostDegree, number>> = { constant: 1, linear: 1, quadratic: 2 };

/**
 * Binary operators that may take time linear in their operands: deep
 * equality, comparison of strings, and joins. Arithmetic takes numbers
 * only, in constant time.
 */
const LINEAR_OPERATORS: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=', '+']);

/**
 * The cost of one planned rule. The fields of a rule run one after another,
 * so the largest degree counts; forEach adds one.
 *
 * @example
 * ruleCost(rule, plan); // { degree: 3, weight: 2 } for `a.every(x => a.some(y => y == x))`
 */
export function ruleCost(rule: RuleDefinition, plan: Omit<RulePlan, 'cost'>): RuleCost {
  return { degree: ruleDegree(rule, plan), weight: ruleWeight(rule, plan) };
}

/**
 * The degree histogram of planned rules, weighted.
 *
 * @example
 * costProfileOf([{ degree: 1, weight: 2 }, { degree: 3, weight: 1 }]); // [0, 2, 0, 1]
 */
export function costProfileOf(costs: Iterable<RuleCost>): CostProfile {
  const counts: number[] = [];
  for (const { degree, weight } of costs) {
    while (counts.length <= degree) counts.push(0);
    counts[degree] += weight;
  }
  return counts;
}

function ruleDegree(rule: RuleDefinition, plan: Omit<RulePlan, 'cost'>): number {
  let inner = 1;
  for (const e of [plan.expression, plan.when]) if (e !== undefined) inner = Math.max(inner, exprDegree(e));
  for (const part of plan.message ?? []) if (part.kind === 'expr') inner = Math.max(inner, exprDegree(part.expr));
  if (rule.schema !== undefined && JSON.stringify(rule.schema).includes('"uniqueItems"')) inner = Math.max(inner, 2);
  for (const input of plan.table?.inputs ?? []) if (input.expression !== undefined) inner = Math.max(inner, exprDegree(input.expression));
  // An expression cell runs on the input's value like the rule's expression: a callback in it walks the payload as one would.
  for (const cell of plan.table?.expressionCells ?? []) inner = Math.max(inner, exprDegree(cell));
  return inner + (plan.forEach === undefined ? 0 : 1);
}

/**
 * Steps per payload value of one rule's degree: what its expression and
 * `when` can take, or what its schema can apply to one value; plus, per
 * message placeholder, one for rendering and what its expression can take;
 * plus a search of its decision table.
 */
function ruleWeight(rule: RuleDefinition, plan: Omit<RulePlan, 'cost'>): number {
  let weight = 0;
  for (const e of [plan.expression, plan.when]) if (e !== undefined) weight += expressionWeight(e);
  if (rule.schema !== undefined) {
    const applications = schemaApplications(rule.schema);
    // A schema without a bound does not compile; if one got here, count it as the largest there can be.
    weight += applications.ok ? Math.max(1, applications.count) : MAX_SCHEMA_APPLICATIONS + 1;
  }
  for (const part of plan.message ?? []) if (part.kind === 'expr') weight += 1 + exprWeight(part.expr);
  if (plan.table !== undefined) weight += tableWeight(plan.table, plan.expression);
  return Math.max(1, weight);
}

/**
 * Steps of one search of a decision table, by the strategy the compiler
 * chose for it (table/table-strategy.ts): reading each input, then per
 * column, a constant for a column of Maps, the depth of a binary search for
 * a column of boundaries, and every row's cell for a scanned column (an
 * expression cell as its expression). Under `collect` the rule's
 * expression runs once per matching row, so once per row at worst.
 */
function tableWeight(table: TablePlan, expression: Expr | undefined): number {
  let weight = 0;
  for (const input of table.inputs) weight += input.expression === undefined ? 1 : expressionWeight(input.expression);
  const { strategy } = table;
  const searchDepth = Math.ceil(Math.log2(table.cells.length + 1)) + 1;
  strategy.columns.forEach((kind, column) => {
    const indexed = (kind === 'hash' && strategy.hashColumns.includes(column)) || (kind === 'range' && strategy.rangeColumn === column);
    if (indexed) weight += kind === 'hash' ? 2 : searchDepth;
    else {
      for (const row of table.cells) {
        const cell = row[column];
        weight += cell?.kind === 'expression' ? expressionWeight(table.expressionCells[cell.id]) : 1;
      }
    }
  });
  if (table.hitPolicy === 'collect' && expression !== undefined) weight += table.cells.length * expressionWeight(expression);
  return weight;
}

/** A whole field's weight: a field that only reads a value still takes a step. */
function expressionWeight(e: Expr): number {
  return Math.max(1, exprWeight(e));
}

/**
 * The degree of an IR expression: a read is free, any other operation at
 * least linear, a callback's body runs once per element of its receiver.
 *
 * @example
 * exprDegree(lowered('a.every(x => a.some(y => y == x))')); // 3
 */
export function exprDegree(e: Expr): number {
  switch (e.kind) {
    case 'literal':
    case 'root':
    case 'param':
      return 0;
    case 'member':
      return exprDegree(e.object);
    case 'callback':
      return Math.max(exprDegree(e.object), 1 + exprDegree(e.body), 1);
    case 'call':
      return maxDegree(e.args, CALL_DEGREE[FUNCTIONS_BY_NAME[e.fn]?.cost ?? 'quadratic']);
    default:
      // Every other operation: at most linear in its operands.
      return maxDegree(irChildren(e), 1);
  }
}

function maxDegree(nodes: readonly Expr[], floor: number): number {
  let degree = floor;
  for (const node of nodes) degree = Math.max(degree, exprDegree(node));
  return degree;
}

/**
 * Linear steps an IR expression can take, per payload value: its
 * operations that may be linear, times the operands of its longest `+`
 * chain. Iterative: expressions nest deep.
 *
 * @example
 * exprWeight(lowered('len(a + a + a) > 0')); // 4 operations × 3 operands = 12
 */
export function exprWeight(root: Expr): number {
  let operations = 0;
  let joined = 1;
  const pending: Expr[] = [root];
  while (pending.length > 0) {
    const e = pending.pop()!;
    if (isOperation(e)) operations++;
    if (isJoin(e)) joined = Math.max(joined, joinOperands(e));
    pending.push(...irChildren(e));
  }
  return operations * joined;
}

function isOperation(e: Expr): boolean {
  switch (e.kind) {
    case 'call':
    case 'now':
    case 'matches':
    case 'method':
    case 'callback':
      return true;
    case 'binary':
      return LINEAR_OPERATORS.has(e.op);
    default:
      return false;
  }
}

function isJoin(e: Expr): boolean {
  return e.kind === 'binary' && e.op === '+';
}

/** Operands of the `+` chain under `e`: the leaves once nested `+` are flattened. */
function joinOperands(e: Expr): number {
  let operands = 0;
  const pending: Expr[] = [e];
  while (pending.length > 0) {
    const at = pending.pop()!;
    if (at.kind === 'binary' && at.op === '+') pending.push(at.left, at.right);
    else operands++;
  }
  return operands;
}
