/**
 * An import's dry run on a management thread (POST /contexts/{context}/import?dryRun=true):
 * the file read and checked as every import's is (import-check-task.ts),
 * then compared with the context's rules, which the route read as the
 * database's JSON text, and answered from here. Only the answer goes back
 * (written as JSON by the pool: answer-json.ts): the event loop never
 * receives the file's thousands of checked rules, nor parses the context's.
 */
import { PROBLEMS, ProblemError } from '../../errors.ts';
import type { FileWarning } from '../../rules/rules-file.ts';
import { importChanges, importResult } from '../../storage/import-changes.ts';
import type { ImportBaseText, ImportResult } from '../../storage/types.ts';
import { runImportCheckTask, type ImportCheckInput } from './import-check-task.ts';
import { storedRulesOf } from './stored-rules.ts';

export interface ImportDryRunInput extends ImportCheckInput {
  context: string;
  /** The context's live ruleset version and rules when the route read them. */
  base: ImportBaseText;
  prune: boolean;
}

/** The route's answer. */
export type ImportAnswer = ImportResult & { warnings: FileWarning[] };

/**
 * What the import would change; a ProblemError 400 naming every problem of
 * the file, a LimitExceededError (409) when the context would have too many rules.
 *
 * @example
 * await runImportDryRunTask({ ...checkInput, context: 'loans', base: { rulesetVersion: 3, rulesJson: '[]' }, prune: false });
 */
export async function runImportDryRunTask(input: ImportDryRunInput): Promise<ImportAnswer> {
  const checked = await runImportCheckTask(input);
  if (!checked.ok) throw new ProblemError(PROBLEMS.invalidBody(checked.errors));
  const { plan, warnings } = checked;
  const changes = importChanges(input.context, storedRulesOf(input.base.rulesJson), plan, {
    prune: input.prune, maxRulesPerContext: input.maxRulesPerContext,
  });
  return { ...importResult(changes, true, input.base.rulesetVersion), warnings };
}
