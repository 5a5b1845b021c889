/**
 * Loop fusion: which rules of one generated function walk the same payload
 * array, so that one loop can serve them all (ruleset-source.ts writes it).
 *
 * Two kinds of pass fuse:
 *
 * - a `forEach` rule over a plain payload path (`items`, `order.lines`)
 *   whose fieldPath, if any, lies inside the element (`items[].price`),
 *   without a schema or a decision table;
 * - `sum(list.map(x => ...))` over the same path, in the expression, `when`
 *   or message of a rule that is neither a `forEach` rule nor a table rule,
 *   whose callback reads nothing of the rule (only its element, the payload
 *   and the clock), so that its value is the same wherever it is computed.
 *
 * A path fuses when at least two such passes read it. The loop then runs
 * where the first of them is in evaluation order, the sums are kept for
 * the rules that use them, and each `forEach` rule's failures are kept
 * aside and added at that rule's own place: the failures, their order and
 * their paths are exactly those of the rules run one after the other.
 * Rules only read the payload, and the passes that run earlier have no
 * effect but their failures, so running them earlier changes nothing else.
 */
import { capturedBy, payloadKeys } from './expression/generate.ts';
import { childrenOf } from './expression/ir-walk.ts';
import type { Expr } from './expression/ir.ts';
import type { PathSegment } from './paths.ts';
import type { RulePlan } from './rule-plan.ts';

/** `sum(list.map(x => body))`: the call and its callback. */
export interface FusedSum {
  /** The index of the rule it appears in. */
  rule: number;
  call: Expr & { kind: 'call' };
  callback: Expr & { kind: 'callback' };
}

/** The passes over one payload array that one loop makes. */
export interface LoopGroup {
  /** The array's payload path. */
  keys: readonly (string | number)[];
  /** The index of the rule before whose block the loop runs: the first pass's. */
  first: number;
  /** The `forEach` rules over the array, by index, in evaluation order. */
  rules: readonly number[];
  sums: readonly FusedSum[];
}

/** A path's keys when every segment is a plain key or index (no `[]`, no `length`). */
function plainPath(segments: readonly PathSegment[]): (string | number)[] | undefined {
  const keys: (string | number)[] = [];
  for (const s of segments) {
    if ('each' in s) return undefined;
    if ('key' in s) {
      if (s.key === 'length') return undefined;
      keys.push(s.key);
    } else keys.push(s.index);
  }
  return keys.length > 0 ? keys : undefined;
}

/** The array path of a `forEach` rule that fuses, else undefined. */
function forEachKeys(plan: RulePlan): (string | number)[] | undefined {
  if (plan.forEach === undefined || plan.schema !== undefined || plan.table !== undefined) return undefined;
  const field = plan.fieldPath;
  // A fieldPath outside the element is read once for the whole rule: not an element pass.
  if (field !== undefined && !field.segments.some((s) => 'each' in s)) return undefined;
  return plainPath(plan.forEach.segments);
}

/** The `sum(list.map(...))` calls of an expression whose value does not depend on where they run. */
function sumsIn(e: Expr, found: (Expr & { kind: 'call' })[]): void {
  if (e.kind === 'call' && e.fn === 'sum' && e.args.length === 1) {
    const only = e.args[0];
    if (only.kind === 'callback' && only.method === 'map' && only.depth === 1 &&
      capturedBy(only).every((c) => c === 'payload' || c === 'now') && payloadKeys(only.object) !== undefined) {
      found.push(e);
      return;
    }
  }
  // childrenOf leaves callback bodies out: a sum there may read the callback's parameter.
  for (const child of childrenOf(e)) sumsIn(child, found);
}

/** The expressions of a rule that run at its own place (not per element): expression, `when`, message. */
function ruleLevelExprs(plan: RulePlan): Expr[] {
  const exprs: Expr[] = [];
  if (plan.expression !== undefined) exprs.push(plan.expression);
  if (plan.when !== undefined) exprs.push(plan.when);
  for (const part of plan.message ?? []) if (part.kind === 'expr') exprs.push(part.expr);
  return exprs;
}

/**
 * The loops to fuse among `plans` (the rules of one generated function, in
 * evaluation order): one group per payload array read by two passes or more.
 *
 * @example
 * fusibleLoops(plans)[0]; // { keys: ['items'], first: 16, rules: [17, 18, 19], sums: [...] }
 */
export function fusibleLoops(plans: readonly RulePlan[]): LoopGroup[] {
  const byPath = new Map<string, { keys: (string | number)[]; rules: number[]; sums: FusedSum[] }>();
  const groupOf = (keys: (string | number)[]): { rules: number[]; sums: FusedSum[] } => {
    const key = JSON.stringify(keys);
    let group = byPath.get(key);
    if (group === undefined) {
      group = { keys, rules: [], sums: [] };
      byPath.set(key, group);
    }
    return group;
  };
  plans.forEach((plan, index) => {
    const listKeys = forEachKeys(plan);
    if (listKeys !== undefined) groupOf(listKeys).rules.push(index);
    if (plan.forEach !== undefined || plan.table !== undefined) return;
    const calls: (Expr & { kind: 'call' })[] = [];
    for (const e of ruleLevelExprs(plan)) sumsIn(e, calls);
    for (const call of calls) {
      const callback = call.args[0] as Expr & { kind: 'callback' };
      groupOf(payloadKeys(callback.object) as (string | number)[]).sums.push({ rule: index, call, callback });
    }
  });
  const groups: LoopGroup[] = [];
  for (const { keys, rules, sums } of byPath.values()) {
    if (rules.length + sums.length < 2) continue;
    const first = Math.min(...rules, ...sums.map((s) => s.rule));
    groups.push({ keys, first, rules, sums });
  }
  return groups.sort((a, b) => a.first - b.first);
}
