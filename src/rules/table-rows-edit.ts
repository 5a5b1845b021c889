/**
 * Reading and replacing a decision table's rows as CSV (docs/api.md,
 * "Decision tables as CSV"), for GET and PUT /rules/{id}/table.csv and the
 * CLI's `table export` and `table import` alike, so that both find the
 * rule, read the CSV, check and save the new version the same way.
 *
 * Only rows change: the inputs, hit policy and noMatch stay as the rule
 * has them (table-csv.ts).
 */
import type { TableDefinition } from '../../compiler/types.ts';
import { RuleHasNoTableError, TableCsvInvalidError } from '../domain-errors.ts';
import { normalizeContent } from '../storage/rule-content.ts';
import { RuleNotFoundError, type ChangeOrigin, type Rule, type RuleContent, type RuleStore } from '../storage/types.ts';
import { csvToRows } from './table-csv.ts';

/** A stored rule that has a decision table. */
export type TableRule = Rule & { table: TableDefinition };

/**
 * The tenant's rule `id` (its latest version) with its table;
 * RuleNotFoundError for an unknown id (a malformed one included),
 * RuleHasNoTableError for a rule without a table.
 *
 * @example
 * const rule = await findTableRule(storage.rules, 'acme', id);
 * tableToCsv(rule.table);
 */
export async function findTableRule(rules: Pick<RuleStore, 'get'>, tenantId: string, id: string): Promise<TableRule> {
  const rule = await rules.get(tenantId, id);
  if (rule === null) throw new RuleNotFoundError();
  if (rule.table === undefined) throw new RuleHasNoTableError(rule.id, rule.code);
  return rule as TableRule;
}

export interface TableRowsEdit {
  /** The CSV text, without a byte-order mark. */
  csv: string;
  /** The version the edit is based on (a stale one is StaleVersionError); default the rule's latest. */
  basedOnVersion?: number;
  /** Who made the change, for the audit trail (`rule.update`). */
  origin: ChangeOrigin;
}

/** How the new rows are checked: the server reviews a table on a management thread (src/pool/rule-review.ts), the CLI in its own process. */
export interface TableRowsCheck {
  /** MAX_TABLE_ROWS. */
  maxTableRows: number;
  /** Throws RuleInvalidError naming each problem that keeps the content from compiling. */
  assertCompiles(code: string, content: RuleContent): Promise<void> | void;
}

/**
 * Saves `stored` with the CSV's rows as a new version (unchanged when the
 * rows are the same): TableCsvInvalidError when the CSV does not fit the
 * table, RuleInvalidError when a row does not compile (`table.rows[r].when[c]`),
 * and the store's ConflictErrors (stale version, archived rule).
 *
 * @example
 * const updated = await replaceTableRows(storage.rules, 'acme', stored, { csv, origin }, { maxTableRows: 10000, assertCompiles });
 */
export async function replaceTableRows(
  rules: Pick<RuleStore, 'update'>, tenantId: string, stored: TableRule, edit: TableRowsEdit, check: TableRowsCheck,
): Promise<Rule> {
  const read = csvToRows(edit.csv, stored.table, check.maxTableRows);
  if (!read.ok) throw new TableCsvInvalidError(read.errors);
  // The stored content with new rows: RULE_CONTENT_FIELDS are the content, the rest of the resource is the server's.
  const next = { ...normalizeContent(stored), table: { ...stored.table, rows: read.rows } };
  await check.assertCompiles(stored.code, next);
  const basedOn = edit.basedOnVersion ?? stored.version;
  return rules.update(tenantId, stored.id, basedOn, next, { origin: edit.origin, action: 'rule.update' });
}

/**
 * The text without the byte-order mark a spreadsheet's UTF-8 export often
 * starts with.
 *
 * @example
 * withoutByteOrderMark('\uFEFFa,b\r\n'); // 'a,b\r\n'
 */
export function withoutByteOrderMark(text: string): string {
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}
