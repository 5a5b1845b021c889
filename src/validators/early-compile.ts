/**
 * A context publish compiles before its transaction starts.
 *
 * Publishing compiles the ruleset about to go live inside the transaction
 * that makes it live (storage's beforeCommit), so that what goes live is
 * what compiled. A large context takes seconds to compile, and for those
 * seconds the transaction holds the context's lock and a database
 * connection (the embedded database has only one, shared by every
 * tenant). So the publish first compiles the context's drafts as a publish
 * would make them live (RuleStore.draftRuleset), outside any transaction;
 * inside it, when the rules going live are exactly those (as they are
 * unless an edit landed in between), the validator compiled early is used
 * under the new ruleset version, and the transaction lasts milliseconds.
 * Otherwise the transaction compiles as before.
 */
import type { CompiledValidator, ValidatorService } from '../app-deps.ts';
import type { BeforeCommit, LiveRuleset, RuleStore } from '../storage/types.ts';
import { withRuleset } from './compile-validator.ts';
import { runInSlices } from './time-slices.ts';

/**
 * The validator of the context's drafts, compiled now, or undefined when
 * there is nothing to publish. Throws the 400 a publish of these drafts
 * would (a rule that does not compile).
 */
export async function compileDrafts(
  rules: Pick<RuleStore, 'draftRuleset'>,
  validators: ValidatorService,
  tenantId: string,
  context: string,
): Promise<CompiledValidator | undefined> {
  const draft = await rules.draftRuleset(tenantId, context);
  if (draft === null) return undefined;
  // The draft of a context with nothing to publish has the live version: that one is compiled already.
  if (validators.peek(tenantId, context)?.rulesetVersion === draft.rulesetVersion) return undefined;
  return validators.compile(draft);
}

/**
 * The beforeCommit of a publish: the early validator when the rules going
 * live are the ones it was compiled from, else a compile of them.
 */
export function compileUnlessEarly(validators: ValidatorService, early: CompiledValidator | undefined): BeforeCommit<CompiledValidator> {
  return async (next) => {
    if (early !== undefined && (await runInSlices(sameRules(early.ruleset, next)))) return withRuleset(early, next);
    return validators.compile(next);
  };
}

/**
 * Whether two rulesets hold the same rules in the same order, one rule a
 * step. Both come from the same query and conversion, so equal rules have
 * equal JSON; a difference in form only costs a compile.
 */
function* sameRules(a: LiveRuleset, b: LiveRuleset): Generator<void, boolean, void> {
  if (a.rules.length !== b.rules.length) return false;
  for (let i = 0; i < a.rules.length; i++) {
    if (JSON.stringify(a.rules[i]) !== JSON.stringify(b.rules[i])) return false;
    yield;
  }
  return true;
}
