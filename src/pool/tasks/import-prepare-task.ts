/**
 * A real import's work before its transaction, on a management thread
 * (POST /contexts/{context}/import without `dryRun`): the file read and
 * checked as every import's is (import-check-task.ts), compared with the
 * context's rules as the route read them (their JSON text, with each
 * rule's id and version), and what to write handed back with the contents
 * as JSON text. The event loop then neither parses, compares nor receives
 * the file's thousands of rules as objects; its transaction writes this
 * only if the context's rules are still those compared with (the digest:
 * storage/context-import.ts).
 */
import type { FieldError } from '../../domain-errors.ts';
import { importBaseDigest, importChanges, importResult, importWrites, type ContextRule, type RuleHead } from '../../storage/import-changes.ts';
import type { PreparedImport } from '../../storage/types.ts';
import { listJson } from '../answer-json.ts';
import { runImportCheckTask } from './import-check-task.ts';
import type { ImportDryRunInput } from './import-dry-run-task.ts';
import { storedRulesOf } from './stored-rules.ts';

/** As a dry run's: the checks' input, the context's rules as read, and `prune`. */
export type ImportPrepareInput = ImportDryRunInput;

/**
 * What to write and the file's warnings (as the answer's serializer writes
 * them: a 5,000-rule file has thousands, half a megabyte), or every problem of the file.
 */
export type ImportPrepareOutput = { ok: true; prepared: PreparedImport; warningsJson: Uint8Array } | { ok: false; errors: FieldError[] };

/**
 * The import worked out; a ProblemError for a body that is not a rules
 * file (400), a LimitExceededError when the context would have too many rules (409).
 *
 * @example
 * await runImportPrepareTask({ ...checkInput, context: 'loans', base: await storage.rules.importBaseText(tenantId, 'loans'), prune: false });
 */
export async function runImportPrepareTask(input: ImportPrepareInput): Promise<ImportPrepareOutput> {
  const checked = await runImportCheckTask(input);
  if (!checked.ok) return checked;
  const { plan, warnings } = checked;
  const base = storedRulesOf(input.base.rulesJson) as Array<ContextRule & RuleHead>;
  const changes = importChanges(input.context, base, plan, { prune: input.prune, maxRulesPerContext: input.maxRulesPerContext });
  const prepared: PreparedImport = {
    baseDigest: importBaseDigest(base),
    writes: importWrites(changes),
    result: importResult(changes, false, input.base.rulesetVersion),
  };
  if (plan.payloadSchema !== undefined) prepared.payloadSchema = plan.payloadSchema;
  if (plan.tests !== undefined) prepared.tests = plan.tests;
  return { ok: true, prepared, warningsJson: listJson('RuleWarning', warnings) };
}
