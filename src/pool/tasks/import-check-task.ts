/**
 * An import's checks on a management thread (POST /contexts/{context}/import,
 * with or without `dryRun`): every rule of the file compiled as a save
 * would compile it, its payload schema and tests checked, and the warnings
 * of its rules worked out, before the route touches the database. A file
 * of thousands of rules takes seconds of this.
 */
import { PayloadSchema } from '../../../compiler/index.ts';
import type { FieldError } from '../../domain-errors.ts';
import { checkRulesFile, rulesFileWarnings, warningSchemaOf, type FileWarning, type IncomingRulesFile, type RulesFileLimits } from '../../rules/rules-file.ts';
import type { ImportPlan } from '../../storage/types.ts';

export interface ImportCheckInput {
  file: IncomingRulesFile;
  limits: RulesFileLimits;
  /**
   * The payload schema the context has now (its JSON), null when none;
   * the file's rules are warned against it when the file carries no
   * `payloadSchema` key.
   */
  storedPayloadSchema: unknown;
}

/** What to import and its warnings, or every problem of the file. */
export type ImportCheckOutput = { ok: true; plan: ImportPlan; warnings: FileWarning[] } | { ok: false; errors: FieldError[] };

/**
 * Checks the file.
 *
 * @example
 * await runImportCheckTask({ file, limits: { maxExpressionLength: 4096, maxTableRows: 10000, maxPayloadDepth: 64 }, storedPayloadSchema: null });
 */
export async function runImportCheckTask(input: ImportCheckInput): Promise<ImportCheckOutput> {
  const checked = checkRulesFile(input.file, input.limits);
  if (!checked.ok) return checked;
  const { plan } = checked;
  const stored = input.storedPayloadSchema;
  const schema = await warningSchemaOf(plan, () => Promise.resolve(stored === null || stored === undefined ? undefined : new PayloadSchema(stored)));
  return { ok: true, plan, warnings: rulesFileWarnings(plan, schema, input.limits.maxExpressionLength) };
}
