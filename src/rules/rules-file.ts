/**
 * Rules files (docs/api.md, "Rules as files"): a context's rules, payload
 * schema and stored tests as one JSON document. This module builds one from
 * what storage reads, and checks one before an import: every problem of
 * every rule, of the payload schema and of the tests, paths as in the
 * document (`rules[3].expression`), and the warnings of its rules. Used by
 * the HTTP routes and the CLI alike.
 */
import { PayloadSchema, resolveLimits, type RuleWarning } from '../../compiler/index.ts';
import type { RuleContentInput } from '../../compiler/rule-schema.ts';
import type { FieldError } from '../domain-errors.ts';
import { toRuleContent } from './rule-body.ts';
import type { ImportPlan, RuleSnapshot, StoredTest } from '../storage/types.ts';
import { ruleContentErrors } from './check-rule-content.ts';
import { payloadSchemaProblems } from './payload-schemas.ts';
import { contentWarnings } from './rule-warnings.ts';
import { storedTestsProblems } from './stored-tests.ts';

export const RULES_FILE_FORMAT = 'rules/v1';

/** A rule of a file: its code and content as POST /rules takes them (a `context` and server-managed fields are ignored). */
export type FileRule = RuleContentInput & { code: string; context?: string };

/** A rules file as export writes it. */
export interface RulesFile {
  format: typeof RULES_FILE_FORMAT;
  context: string;
  rulesetVersion: number | null;
  payloadSchema: unknown;
  rules: Array<Omit<RuleSnapshot, 'context'>>;
  tests: StoredTest[];
}

/** A rules file as import takes it: payloadSchema and tests may be absent (then left as they are). */
export interface IncomingRulesFile {
  format: string;
  rules: FileRule[];
  payloadSchema?: unknown;
  tests?: StoredTest[];
}

/**
 * The document of a context's rules (sorted by code, as storage reads
 * them), without the context in each rule: a file can be imported into
 * any context.
 */
export function toRulesFile(
  context: string, rulesetVersion: number | null, rules: readonly RuleSnapshot[], payloadSchema: unknown, tests: StoredTest[],
): RulesFile {
  return {
    format: RULES_FILE_FORMAT,
    context,
    rulesetVersion,
    payloadSchema: payloadSchema ?? null,
    rules: rules.map(({ context: _context, ...rule }) => rule),
    tests,
  };
}

export interface RulesFileLimits {
  maxExpressionLength: number;
  maxTableRows: number;
  maxPayloadDepth: number;
}

/** A checked file: what to import, or every problem found. */
export type CheckedRulesFile = { ok: true; plan: ImportPlan } | { ok: false; errors: FieldError[] };

/**
 * Checks a file whose shape is right (JSON Schema) for what shape cannot
 * say: unique codes, rules that compile, a payload schema the policy
 * accepts, well-formed tests.
 */
export function checkRulesFile(file: IncomingRulesFile, limits: RulesFileLimits): CheckedRulesFile {
  const errors: FieldError[] = [];
  const seen = new Map<string, number>();
  const rules: ImportPlan['rules'] = [];
  file.rules.forEach((rule, index) => {
    const first = seen.get(rule.code);
    if (first !== undefined) errors.push({ path: `rules[${index}].code`, message: `is the code of rules[${first}] too; codes must be unique` });
    else seen.set(rule.code, index);
    const content = toRuleContent(rule);
    errors.push(...ruleContentErrors(rule.code, content, { maxExpressionLength: limits.maxExpressionLength, maxTableRows: limits.maxTableRows, pathPrefix: `rules[${index}]` }));
    rules.push({ code: rule.code, content });
  });
  if (file.payloadSchema !== undefined && file.payloadSchema !== null) {
    const compilerLimits = resolveLimits({ limits: { maxExpressionLength: limits.maxExpressionLength } });
    for (const problem of payloadSchemaProblems(file.payloadSchema, compilerLimits)) {
      errors.push({ path: problem.path === '' ? 'payloadSchema' : `payloadSchema.${problem.path}`, message: problem.message });
    }
  }
  if (file.tests !== undefined) errors.push(...storedTestsProblems(file.tests, limits.maxPayloadDepth));
  if (errors.length > 0) return { ok: false, errors };
  const plan: ImportPlan = { rules };
  if (file.payloadSchema !== undefined) plan.payloadSchema = file.payloadSchema;
  if (file.tests !== undefined) plan.tests = file.tests;
  return { ok: true, plan };
}

/** A warning of a file's rule: its path names the rule too (`rules[3].expression`). */
export type FileWarning = Omit<RuleWarning, 'path'> & { path: string };

/**
 * The warnings of a file's rules against a payload schema (the file's when
 * it has one, else the context's), paths `rules[i].<field>`.
 */
export function rulesFileWarnings(plan: ImportPlan, payloadSchema: PayloadSchema | undefined, maxExpressionLength: number): FileWarning[] {
  return plan.rules.flatMap(({ code, content }, index) =>
    contentWarnings(code, content, payloadSchema, maxExpressionLength).map((warning) => ({ ...warning, path: `rules[${index}].${warning.path}` })),
  );
}

/** The payload schema a file's rules are warned against: the file's own when it carries the key, else `stored`. */
export async function warningSchemaOf(plan: ImportPlan, stored: () => Promise<PayloadSchema | undefined>): Promise<PayloadSchema | undefined> {
  if (plan.payloadSchema === undefined) return stored();
  return plan.payloadSchema === null ? undefined : new PayloadSchema(plan.payloadSchema);
}
