/**
 * An import's checks on a management thread (POST /contexts/{context}/import,
 * with or without `dryRun`): every rule of the file compiled as a save
 * would compile it, its payload schema and tests checked, and the warnings
 * of its rules worked out, before the route touches the database. A file
 * of thousands of rules takes seconds of this.
 */
import { PayloadSchema } from '../../../compiler/index.ts';
import type { FieldError } from '../../domain-errors.ts';
import { checkRulesFile, rulesFileWarnings, warningSchemaOf, type FileWarning, type RulesFileLimits } from '../../rules/rules-file.ts';
import { LimitExceededError, type ImportPlan } from '../../storage/types.ts';
import { readImportBody } from './import-body.ts';

export interface ImportCheckInput {
  /** The request body as sent: read here (import-body.ts), never on the event loop. */
  body: Uint8Array;
  limits: RulesFileLimits;
  /** Rules a context may have (MAX_RULES_PER_CONTEXT): a file with more is refused before its rules are checked. */
  maxRulesPerContext: number;
  /**
   * The payload schema the context has now (its JSON), null when none;
   * the file's rules are warned against it when the file carries no
   * `payloadSchema` key (read before the body is, so always sent).
   */
  storedPayloadSchema: unknown;
}

/** What to import and its warnings, or every problem of the file. */
export type ImportCheckOutput = { ok: true; plan: ImportPlan; warnings: FileWarning[] } | { ok: false; errors: FieldError[] };

/**
 * Reads and checks the file; a ProblemError for a body that is not a rules file (400), a
 * LimitExceededError for one with more rules than a context may have (409).
 *
 * @example
 * await runImportCheckTask({ body, limits: { maxExpressionLength: 4096, maxPayloadDepth: 64 }, maxRulesPerContext: 5000, storedPayloadSchema: null });
 */
export async function runImportCheckTask(input: ImportCheckInput): Promise<ImportCheckOutput> {
  const file = readImportBody(input.body);
  if (file.rules.length > input.maxRulesPerContext) {
    throw new LimitExceededError(`the file has ${file.rules.length} rules, a context may have at most ${input.maxRulesPerContext}`);
  }
  const checked = checkRulesFile(file, input.limits);
  if (!checked.ok) return checked;
  const { plan } = checked;
  const stored = input.storedPayloadSchema;
  const schema = await warningSchemaOf(plan, () => Promise.resolve(stored === null || stored === undefined ? undefined : new PayloadSchema(stored)));
  return { ok: true, plan, warnings: rulesFileWarnings(plan, schema, input.limits.maxExpressionLength) };
}
