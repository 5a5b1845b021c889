/**
 * The CLI's decision-table commands (docs/operations.md, "CLI"): a rule's
 * rows as CSV, `table export` and `table import`, on the database through
 * the same code as GET and PUT /rules/{id}/table.csv
 * (rules/table-rows-edit.ts), so the CSV is read, checked, compiled and
 * saved as the route saves it, audited as a change at the CLI.
 * `remote-table-commands.ts` runs them through those routes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Config } from '../config.ts';
import { RuleHasNoTableError, RuleInvalidError, TableCsvInvalidError } from '../domain-errors.ts';
import { PayloadSchemas } from '../rules/payload-schemas.ts';
import { assertRuleCompiles } from '../rules/check-rule-content.ts';
import { withWarnings, type RuleWarning } from '../rules/rule-warnings.ts';
import { tableToCsv } from '../rules/table-csv.ts';
import { findTableRule, replaceTableRows, withoutByteOrderMark, type TableRule } from '../rules/table-rows-edit.ts';
import { RuleArchivedError, RuleNotFoundError, StaleVersionError, type ChangeOrigin, type Rule, type Storage } from '../storage/types.ts';
import { CommandError } from './cli-errors.ts';
import type { TableCommand } from './parse-command.ts';
import { describeErrors } from './rules-file-io.ts';
import type { CommandOutput } from './run-command.ts';

/** The audit trail's actor for changes made here, as for every change the CLI makes. */
const AT_THE_CLI: ChangeOrigin = { actor: { cli: true } };

/** Runs `table export` or `table import` on the database. */
export async function runTableCommand(command: TableCommand, storage: Storage, config: Config): Promise<CommandOutput> {
  const { tenantId, ruleId } = command;
  if (command.kind === 'table-export') {
    const rule = await tableRule(storage, tenantId, ruleId);
    return tableExported(command, tableToCsv(rule.table), rule.version);
  }
  const csv = await readCsvFile(command.file, config.maxBodyBytes);
  const stored = await tableRule(storage, tenantId, ruleId);
  const { maxExpressionLength, maxTableRows } = config;
  let updated: Rule;
  try {
    updated = await replaceTableRows(storage.rules, tenantId, stored, { csv, basedOnVersion: command.version, origin: AT_THE_CLI }, {
      maxTableRows, assertCompiles: (code, content) => assertRuleCompiles(code, content, { maxExpressionLength, maxTableRows }),
    });
  } catch (error) {
    throw importRefusal(command, error);
  }
  const payloadSchemas = new PayloadSchemas({ store: storage.payloadSchemas, limits: { maxExpressionLength } });
  return tableImported(await withWarnings({ payloadSchemas, maxExpressionLength }, tenantId, updated));
}

/**
 * What `table export` prints: the CSV as it is (a script redirects it to a
 * file), or where it was written and the rule's version it is from (what
 * `table import --version` takes); --json says the version either way.
 */
export async function tableExported(command: Extract<TableCommand, { kind: 'table-export' }>, csv: string, version: number | undefined): Promise<CommandOutput> {
  const { ruleId, out } = command;
  if (out === undefined) return { text: csv, json: { ruleId, version, csv }, verbatim: true };
  try {
    await writeFile(out, csv, 'utf8');
  } catch (error) {
    throw new CommandError(`cannot write ${out}: ${(error as Error).message}`);
  }
  const from = version === undefined ? '' : ` (version ${version})`;
  return { text: `Wrote the decision table of rule ${ruleId}${from} to ${out}.`, json: { ruleId, version, out } };
}

/** What `table import` prints: the rule's new version (the same one when the rows did not change) and its warnings. */
export function tableImported(rule: Rule & { warnings: RuleWarning[] }): CommandOutput {
  const rows = rule.table?.rows.length ?? 0;
  const lines = [
    `Rule ${rule.code} (${rule.id}): ${rows} row(s); version ${rule.version}, status ${rule.status}.`,
    ...rule.warnings.map((warning) => `warning ${warning.code} at ${warning.path}: ${warning.message}`),
  ];
  return { text: lines.join('\n'), json: rule };
}

/**
 * The CSV file's text: UTF-8 (a byte-order mark dropped), at most
 * `maxBytes` (MAX_BODY_BYTES, as the route takes); CommandError otherwise.
 */
export async function readCsvFile(path: string, maxBytes?: number): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new CommandError(`cannot read ${path}: ${(error as Error).message}`);
  }
  if (maxBytes !== undefined && bytes.length > maxBytes) {
    throw new CommandError(`${path} has ${bytes.length} bytes; a table's CSV may have at most ${maxBytes} (MAX_BODY_BYTES)`);
  }
  try {
    return withoutByteOrderMark(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new CommandError(`${path} is not UTF-8 text (save the CSV as UTF-8)`);
  }
}

async function tableRule(storage: Storage, tenantId: string, ruleId: string): Promise<TableRule> {
  try {
    return await findTableRule(storage.rules, tenantId, ruleId);
  } catch (error) {
    if (error instanceof RuleNotFoundError) throw new CommandError(`tenant ${tenantId} has no rule ${ruleId}`);
    if (error instanceof RuleHasNoTableError) {
      throw new CommandError(`rule ${error.ruleCode} (${ruleId}) has no decision table: give it one first (PUT /api/v1/rules/{id} or a rules file); CSV carries only its rows`);
    }
    throw error;
  }
}

/** Why the file's rows were not saved, each problem by its place (`line 3`, `table.rows[1].when[0]`). */
function importRefusal({ file, ruleId, version }: Extract<TableCommand, { kind: 'table-import' }>, error: unknown): unknown {
  if (error instanceof TableCsvInvalidError) return new CommandError(`${file} was not imported, the CSV is invalid:\n${describeErrors(error.errors)}`);
  if (error instanceof RuleInvalidError) return new CommandError(`${file} was not imported, a row does not compile:\n${describeErrors(error.errors)}`);
  if (error instanceof RuleArchivedError) return new CommandError(`rule ${ruleId} is archived: restore it before changing its table`);
  if (error instanceof StaleVersionError && version !== undefined) {
    return new CommandError(`${file} was not imported: ${error.message} (--version ${version}); export the table again and redo the changes on it`);
  }
  if (error instanceof StaleVersionError) return new CommandError(`rule ${ruleId} changed while its table was being imported (${error.message}); run the import again`);
  return error;
}
