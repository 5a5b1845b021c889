/**
 * What differs between two rulesets of a context, rules matched by code
 * (docs/api.md, "History and diff"): rules only in the second are added,
 * rules only in the first removed, and rules in both whose content differs
 * changed, field by field. Fields are compared as JSON values, object keys
 * in any order; a field a rule does not set reads as null.
 *
 * Pure: the publish and rollback answers (`changes`) and GET /diff both
 * use it, on rules storage read.
 */
import { RULE_CONTENT_FIELDS } from '../../compiler/rule-schema.ts';
import { runSteps, type Steps } from '../../compiler/steps.ts';
import { contentEquals } from './rule-content.ts';
import type { RuleSnapshot, RulesetChanges } from './types.ts';
import { diffTableRows, type TableRowChange } from './table-row-diff.ts';

/** How one field of a rule changed. */
export interface FieldChange {
  from: unknown;
  to: unknown;
}

/** A rule present on both sides with different content. */
export interface ChangedRule {
  code: string;
  fields: Record<string, FieldChange>;
  /** When both sides have a table whose rows differ: each row added, removed, changed or moved (table-row-diff.ts). */
  tableRows?: TableRowChange[];
  /** Present, true, when more rows changed than are listed. */
  tableRowsTruncated?: true;
}

export interface RulesetDiff {
  added: RuleSnapshot[];
  removed: RuleSnapshot[];
  changed: ChangedRule[];
}

/**
 * The difference from `from` to `to`, each list sorted by code. Linear in
 * the number of rules (a Map by code), so two 1,000-rule versions compare
 * in a few milliseconds (bench/ruleset-diff.bench.ts).
 *
 * @example
 * diffRulesets([a], [{ ...a, priority: 5 }]);
 * // { added: [], removed: [], changed: [{ code: a.code, fields: { priority: { from: 0, to: 5 } } }] }
 */
export function diffRulesets(from: readonly RuleSnapshot[], to: readonly RuleSnapshot[]): RulesetDiff {
  return runSteps(diffRulesetsSteps(from, to));
}

/**
 * `diffRulesets` a rule a step, for the event loop (`runInSlices`): a
 * publish that replaced every rule of a 5,000-rule context compares 5,000
 * pairs, tables included, inside its transaction.
 */
export function* diffRulesetsSteps(from: readonly RuleSnapshot[], to: readonly RuleSnapshot[]): Steps<RulesetDiff> {
  const before = new Map(from.map((rule) => [rule.code, rule]));
  const after = new Map(to.map((rule) => [rule.code, rule]));
  const added: RuleSnapshot[] = [];
  const changed: ChangedRule[] = [];
  for (const rule of after.values()) {
    const old = before.get(rule.code);
    if (old === undefined) {
      added.push(rule);
      continue;
    }
    const fields = changedFields(old, rule);
    if (fields !== null) changed.push(withTableRows({ code: rule.code, fields }));
    yield;
  }
  const removed = [...before.values()].filter((rule) => !after.has(rule.code));
  const byCode = (a: { code: string }, b: { code: string }): number => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);
  return { added: added.sort(byCode), removed: removed.sort(byCode), changed: changed.sort(byCode) };
}

/**
 * The codes of a diff: what a publish or rollback answers as `changes`,
 * with the table rows that changed when any did.
 */
export function changedCodes(diff: RulesetDiff): RulesetChanges {
  const changes: RulesetChanges = {
    added: diff.added.map((rule) => rule.code),
    changed: diff.changed.map((rule) => rule.code),
    removed: diff.removed.map((rule) => rule.code),
  };
  const tableRows = diff.changed.flatMap((rule) => (rule.tableRows ?? []).map((row) => ({ code: rule.code, ...row })));
  if (tableRows.length > 0) changes.tableRows = tableRows;
  return changes;
}

/** The changed rule with its table's row changes, when its table changed and both sides have rows. */
function withTableRows(rule: ChangedRule): ChangedRule {
  const table = rule.fields.table;
  if (table === undefined) return rule;
  const rows = diffTableRows(table.from, table.to);
  if (rows === undefined || rows.rows.length === 0) return rule;
  return { ...rule, tableRows: rows.rows, ...(rows.truncated ? { tableRowsTruncated: true as const } : {}) };
}

/** The content fields whose values differ, in the resource's field order; null when none does. */
function changedFields(from: RuleSnapshot, to: RuleSnapshot): Record<string, FieldChange> | null {
  let fields: Record<string, FieldChange> | null = null;
  const a = from as unknown as Record<string, unknown>;
  const b = to as unknown as Record<string, unknown>;
  for (const field of RULE_CONTENT_FIELDS) {
    const fromValue = a[field] ?? null;
    const toValue = b[field] ?? null;
    if (contentEquals(fromValue, toValue)) continue;
    fields ??= {};
    fields[field] = { from: fromValue, to: toValue };
  }
  return fields;
}
