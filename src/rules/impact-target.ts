/**
 * The target of an impact report (POST /contexts/{context}/impact and the
 * CLI's `impact`): the ruleset a context publish would make live now
 * (`draft`), or a numbered ruleset version of the context, as the compiler
 * takes it. The route compiles it with the validator service, the CLI with
 * the compiler directly; neither caches it.
 */
import { ContextNotFoundError, type LiveRuleset, type Storage } from '../storage/types.ts';
import { rulesetOfVersion } from './ruleset-version.ts';

/** What a report compares the live ruleset with. */
export type ImpactTarget = 'draft' | number;

/**
 * The target's ruleset, or null when it is the live ruleset itself (version
 * `liveVersion`), whose validator the caller already has. ContextNotFoundError
 * when the context has no rules (draft) or is unknown; RulesetVersionNotFoundError
 * for a version it does not have.
 *
 * @example
 * const ruleset = await impactTargetRuleset(storage, 'acme', 'loans', 'draft', live?.rulesetVersion ?? null);
 */
export async function impactTargetRuleset(
  storage: Pick<Storage, 'rules' | 'history'>,
  tenantId: string,
  context: string,
  target: ImpactTarget,
  liveVersion: number | null,
): Promise<LiveRuleset | null> {
  if (target === liveVersion) return null;
  if (target === 'draft') {
    const draft = await storage.rules.draftRuleset(tenantId, context);
    if (draft === null) throw new ContextNotFoundError(context);
    // A draft that changes nothing carries the live version's number.
    return draft.rulesetVersion === liveVersion ? null : draft;
  }
  return rulesetOfVersion(storage, tenantId, context, target);
}
