/**
 * A worst-case cost model of a ruleset, so that only requests that could
 * run long pay for a deadline (evaluation-deadline.ts).
 *
 * Compiled validators run on the event loop. Most rules are linear in the
 * payload, but some constructs multiply: a callback inside a callback or a
 * forEach whose inner array is not part of the element (`a.every(x =>
 * a.every(y => ...))`), `distinct()` over objects (pairwise deep equality),
 * and `uniqueItems` in schemas. A one-megabyte payload can then keep the
 * process busy for minutes, stalling every tenant.
 *
 * Each rule gets a degree d: its cost is at most about n^d steps for a
 * payload of size n (values plus string characters). The degree is read
 * from the rule's source with acorn, not from the compiler's internals:
 * every operation counts as linear (deep equality, string functions and
 * regexes on linear engines are), a callback multiplies its body by one
 * more n, `distinct` is quadratic, and a forEach adds one. This over-counts
 * (a callback over a small sub-array counts as n) but never under-counts.
 *
 * A rule's weight says how many such steps it can take: one per operation
 * that may be linear (a call, a comparison, a join), since a rule of a
 * thousand calls of `lower(s)` reads `s` a thousand times; times the most
 * operands one chain of `+` joins, since the string it builds is that many
 * times longer than one of them (`len(a+a+...+a)` with 1024 terms reads
 * 1024 copies of `a`). A schema adds as many steps as the most subschemas
 * it can apply to one value (compiler/schema/schema-expansion.ts), up to
 * 10,000 for a schema that shares `$defs` widely; and each placeholder of
 * its message one more (`{{ $ }}` renders the whole payload).
 */
import * as acorn from 'acorn';
import { MAX_SCHEMA_APPLICATIONS, QUADRATIC_FUNCTIONS, schemaApplications } from '../../compiler/index.ts';
import type { RuleDefinition } from '../../compiler/types.ts';
import type { CompiledValidator } from '../app-deps.ts';

/** Rule weights by degree: rules of `counts[d]` total weight cost at most that many times n^d steps. */
export type CostProfile = readonly number[];

const CALLBACK_METHODS = new Set(['every', 'some', 'filter', 'map', 'find']);

/** When a source cannot be read (it compiled, so this is unexpected), assume the worst the language allows. */
const UNKNOWN_DEGREE = 4;
/** The same for its weight: an expression at the length limit (4096 characters) holds fewer than 4096 operations, each joining fewer. */
const UNKNOWN_WEIGHT = 4096 * 4096;

/**
 * The degree histogram of a ruleset.
 *
 * @example
 * rulesetCostProfile([{ code: 'A', name: 'a', expression: 'a.every(x => a.some(y => y == x))' }]); // [0, 0, 0, 1]
 */
export function rulesetCostProfile(rules: readonly RuleDefinition[]): CostProfile {
  const steps = rulesetCostProfileSteps(rules);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** `rulesetCostProfile`, one rule a step (compiles run in slices of time: time-slices.ts). */
export function* rulesetCostProfileSteps(rules: readonly RuleDefinition[]): Generator<void, CostProfile, void> {
  const counts: number[] = [];
  for (const rule of rules) {
    if (rule.enabled === false) continue;
    const degree = ruleDegree(rule);
    while (counts.length <= degree) counts.push(0);
    counts[degree] += ruleWeight(rule);
    yield;
  }
  return counts;
}

const profiles = new WeakMap<CompiledValidator, CostProfile>();

/** Records the profile compileValidator worked out for a validator. */
export function rememberCostProfile(validator: CompiledValidator, profile: CostProfile): void {
  profiles.set(validator, profile);
}

/**
 * The cost profile of a compiled validator, computed once per validator
 * (compileValidator computes it at compile time, so requests never do).
 */
export function costProfileOf(validator: CompiledValidator): CostProfile {
  let profile = profiles.get(validator);
  if (profile === undefined) {
    profile = rulesetCostProfile(validator.ruleset.rules);
    profiles.set(validator, profile);
  }
  return profile;
}

/**
 * Upper estimate of the steps a ruleset takes on a payload of `size`
 * (values plus characters), per payload.
 *
 * @example
 * estimateCost([0, 20, 5], 50); // 20 * 50 + 5 * 2500
 */
export function estimateCost(profile: CostProfile, size: number): number {
  let total = 0;
  const n = Math.max(1, size);
  for (let degree = 0; degree < profile.length; degree++) {
    if (profile[degree] > 0) total += profile[degree] * n ** degree;
  }
  return total;
}

/**
 * Steps per payload value of one rule's degree: what its expression and
 * `when` can take (expressionWeight), or what its schema can apply to one
 * value; plus, per message placeholder, one for rendering (it may render
 * the whole payload, `{{ $ }}`) and what its expression can take.
 */
export function ruleWeight(rule: RuleDefinition): number {
  let weight = 0;
  if (rule.expression !== undefined) weight += expressionWeight(rule.expression);
  if (rule.when !== undefined) weight += expressionWeight(rule.when);
  if (rule.schema !== undefined) {
    const applications = schemaApplications(rule.schema);
    // A schema without a bound does not compile; if one got here, count it as the largest there can be.
    weight += applications.ok ? Math.max(1, applications.count) : MAX_SCHEMA_APPLICATIONS + 1;
  }
  if (rule.message !== undefined) {
    for (const placeholder of placeholders(rule.message)) {
      weight += 1 + (placeholder === undefined ? UNKNOWN_WEIGHT : nodeWeight(placeholder));
    }
  }
  return Math.max(1, weight);
}

/**
 * Binary operators that may take time linear in their operands: deep
 * equality, comparison of strings, and joins. Arithmetic takes numbers
 * only, in constant time.
 */
const LINEAR_OPERATORS = new Set(['==', '!=', '===', '!==', '<', '<=', '>', '>=', '+']);

/**
 * Linear steps one expression can take, per payload value: its operations
 * that may be linear, times the most operands one chain of `+` joins.
 *
 * @example
 * expressionWeight('amount <= 100'); // 1
 * expressionWeight('len(a + a + a) > 0'); // 4 operations × 3 operands = 12
 */
export function expressionWeight(source: string): number {
  try {
    // A rule that only reads a field still takes a step.
    return Math.max(1, nodeWeight(acorn.parseExpressionAt(source, 0, { ecmaVersion: 'latest' }) as unknown as AnyNode));
  } catch {
    return UNKNOWN_WEIGHT;
  }
}

function nodeWeight(node: AnyNode): number {
  const count = { operations: 0, joined: 1 };
  countWork(node, count);
  return count.operations * count.joined;
}

/** Counts the operations that may be linear (iteratively: sources nest deep), and the operands of the longest `+` chain. */
function countWork(root: AnyNode, count: { operations: number; joined: number }): void {
  const pending: AnyNode[] = [root];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (node.type === 'CallExpression' || (node.type === 'BinaryExpression' && LINEAR_OPERATORS.has(node.operator as string))) {
      count.operations++;
    }
    if (isJoin(node)) count.joined = Math.max(count.joined, joinOperands(node));
    pending.push(...children(node));
  }
}

function isJoin(node: AnyNode): boolean {
  return node.type === 'BinaryExpression' && node.operator === '+';
}

/** Operands of the `+` chain under `node`: the leaves once nested `+` are flattened. */
function joinOperands(node: AnyNode): number {
  let operands = 0;
  const pending: AnyNode[] = [node];
  while (pending.length > 0) {
    const at = pending.pop()!;
    if (isJoin(at)) pending.push(at.left as AnyNode, at.right as AnyNode);
    else operands++;
  }
  return operands;
}

/** Each `{{ }}` placeholder of a template, parsed, or undefined where it cannot be read. */
function placeholders(template: string): Array<AnyNode | undefined> {
  const found: Array<AnyNode | undefined> = [];
  for (let open = template.indexOf('{{'); open >= 0; open = template.indexOf('{{', open + 2)) {
    try {
      // parseExpressionAt stops at the end of the expression, so a `}}`
      // inside a string literal does not end the placeholder early.
      found.push(acorn.parseExpressionAt(template, open + 2, { ecmaVersion: 'latest' }) as unknown as AnyNode);
    } catch {
      found.push(undefined);
    }
  }
  return found;
}

/** The degree of one rule: forEach adds one; its fields run one after another, so the largest counts. */
export function ruleDegree(rule: RuleDefinition): number {
  let inner = 1;
  if (rule.expression !== undefined) inner = Math.max(inner, expressionDegree(rule.expression));
  if (rule.when !== undefined) inner = Math.max(inner, expressionDegree(rule.when));
  if (rule.message !== undefined) inner = Math.max(inner, templateDegree(rule.message));
  if (rule.schema !== undefined && JSON.stringify(rule.schema).includes('"uniqueItems"')) inner = Math.max(inner, 2);
  return inner + (rule.forEach === undefined ? 0 : 1);
}

/** The degree of an expression of the rule language. */
export function expressionDegree(source: string): number {
  try {
    const node = acorn.parseExpressionAt(source, 0, { ecmaVersion: 'latest' });
    return Math.max(1, nodeDegree(node as unknown as AnyNode));
  } catch {
    return UNKNOWN_DEGREE;
  }
}

/** The largest degree among a message template's `{{ }}` placeholders. */
function templateDegree(template: string): number {
  let degree = 0;
  for (const placeholder of placeholders(template)) {
    if (placeholder === undefined) return UNKNOWN_DEGREE;
    degree = Math.max(degree, nodeDegree(placeholder), 1);
  }
  return degree;
}

type AnyNode = acorn.Node & Record<string, unknown>;

function nodeDegree(node: AnyNode): number {
  switch (node.type) {
    case 'Literal':
    case 'Identifier':
      return 0;
    case 'MemberExpression':
      return nodeDegree(node.object as AnyNode);
    case 'CallExpression': {
      const callee = node.callee as AnyNode;
      const args = node.arguments as AnyNode[];
      if (
        callee.type === 'MemberExpression' &&
        callee.property !== undefined &&
        (callee.property as AnyNode).type === 'Identifier' &&
        CALLBACK_METHODS.has((callee.property as unknown as acorn.Identifier).name) &&
        args.length === 1 &&
        args[0].type === 'ArrowFunctionExpression'
      ) {
        // The body runs once per element of the receiver.
        return Math.max(nodeDegree(callee.object as AnyNode), 1 + nodeDegree(args[0].body as AnyNode), 1);
      }
      let degree = 1;
      for (const arg of args) degree = Math.max(degree, nodeDegree(arg));
      if (callee.type === 'Identifier' && QUADRATIC_FUNCTIONS.has((callee as unknown as acorn.Identifier).name)) {
        degree = Math.max(degree, 2);
      }
      if (callee.type === 'MemberExpression') degree = Math.max(degree, nodeDegree(callee.object as AnyNode));
      return degree;
    }
    default: {
      // Every other operation: at most linear in its operands.
      let degree = 1;
      for (const child of children(node)) degree = Math.max(degree, nodeDegree(child));
      return degree;
    }
  }
}

function children(node: AnyNode): AnyNode[] {
  const out: AnyNode[] = [];
  for (const key of Object.keys(node)) {
    if (key === 'loc' || key === 'range') continue;
    const value = node[key];
    if (Array.isArray(value)) {
      for (const item of value) if (isNode(item)) out.push(item);
    } else if (isNode(value)) {
      out.push(value);
    }
  }
  return out;
}

function isNode(value: unknown): value is AnyNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}
