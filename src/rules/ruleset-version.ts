/**
 * A numbered ruleset version of a context as the compiler takes it: the
 * rules that were live in that version (GET /contexts/{context}/versions/{n}),
 * turned into definitions. Used where a caller may name a past version as
 * what to run against: a stored-test run and an impact report.
 */
import { toRuleDefinition } from '../../compiler/rule-schema.ts';
import type { LiveRuleset, Storage } from '../storage/types.ts';

/**
 * Version `rulesetVersion` of the context. ContextNotFoundError when the
 * context is unknown; RulesetVersionNotFoundError for a version it does not have.
 *
 * @example
 * const ruleset = await rulesetOfVersion(storage, 'acme', 'loans', 3);
 */
export async function rulesetOfVersion(
  storage: Pick<Storage, 'history'>,
  tenantId: string,
  context: string,
  rulesetVersion: number,
): Promise<LiveRuleset> {
  const [version] = await storage.history.rulesets(tenantId, context, [rulesetVersion]);
  return { tenantId, context, rulesetVersion, rules: version.rules.map((rule) => toRuleDefinition(rule.code, rule)) };
}
