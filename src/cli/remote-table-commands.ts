/**
 * The decision-table commands against a running service (`--url`): `table
 * export` through GET /rules/{id}/table.csv and `table import` through PUT
 * with the file as `text/csv`, so the service checks, compiles and audits
 * the change (as the key). Printed as on the database (table-commands.ts).
 */
import type { RuleWarning } from '../rules/rule-warnings.ts';
import type { Rule } from '../storage/types.ts';
import type { TableCommand } from './parse-command.ts';
import type { CommandOutput } from './run-command.ts';
import { request, requestText, TextBody, type Remote } from './service-request.ts';
import { readCsvFile, tableExported, tableImported } from './table-commands.ts';

/** Runs `table export` or `table import` through the service at `remote.url`. */
export async function runRemoteTableCommand(command: TableCommand, remote: Remote): Promise<CommandOutput> {
  const path = `/api/v1/rules/${encodeURIComponent(command.ruleId)}/table.csv`;
  if (command.kind === 'table-export') {
    const { text, headers } = await requestText(remote, command.tenantId, path);
    // A service older than X-Rule-Version sends none: the version is then not said.
    const version = headers.get('x-rule-version');
    return tableExported(command, text, version === null ? undefined : Number(version));
  }
  // The service bounds the body (MAX_BODY_BYTES, 413) and checks it is UTF-8 as well.
  const csv = await readCsvFile(command.file);
  const body = new TextBody('text/csv; charset=utf-8', csv);
  // --version: the service refuses (409 STALE_VERSION) when the rule has moved on since.
  const target = command.version === undefined ? path : `${path}?version=${command.version}`;
  return tableImported(await request<Rule & { warnings: RuleWarning[] }>(remote, command.tenantId, 'PUT', target, body));
}
