/**
 * Lifecycle operations compile before their transaction.
 *
 * A publish, archive or rollback compiles the ruleset about to go live
 * inside the transaction that makes it live (storage's beforeCommit), so
 * that what goes live is what compiled. A large context takes seconds to
 * compile, and for those seconds the transaction would hold the context's
 * lock and a database connection (the embedded database has only one,
 * shared by every tenant).
 *
 * So the operation first runs as a dry run: its beforeCommit throws the
 * ruleset it was handed, which rolls the transaction back, and that
 * ruleset is compiled outside any transaction. Then the operation runs
 * for real, and its beforeCommit uses the early validator (under the new
 * ruleset version) when the rules going live are still exactly those; if
 * an edit landed in between, it compiles them again. Storage reads the
 * rules' contents only once: when the rule versions going live are those
 * the dry run read, the real run gets the dry run's rules (`readBefore`).
 * A dry run that never reaches beforeCommit (nothing to make live) was the
 * operation itself, and its result is the answer. The price: one more short transaction
 * per operation.
 */
import type { CompiledValidator, ValidatorService } from './compiled-validator.ts';
import type { BeforeCommit, LiveRuleset } from '../storage/types.ts';
import { dropBuild, withVersion } from './compile-validator.ts';
import { TUNING } from '../tuning.ts';
import { runInSlices } from '../time-slices.ts';

/** Ends a dry run from beforeCommit, carrying the ruleset it would have made live. */
class DryRunEnded extends Error {
  // A code of its own: storage's error mapping then passes it unchanged.
  readonly code = 'DRY_RUN_ENDED';

  constructor(readonly next: LiveRuleset) {
    super('dry run ended before commit');
  }
}

/**
 * Runs a lifecycle operation whose beforeCommit compiles, compiling before
 * its transaction (see above), and installs the validator it made live.
 * `operation` is called once or twice with the beforeCommit to pass to
 * storage. Throws what the operation throws (404, 409), or the 400/409 of
 * a ruleset that does not compile.
 *
 * The real run and its install are one change of the context
 * (`whileChanging`): the change notice its commit sends can arrive before
 * the install, and cache sync waits instead of compiling it again.
 *
 * `check`, when given, vets the validator about to go live (the context's
 * stored tests): it runs on the early validator before the transaction,
 * and again inside it on a validator compiled anew; what it throws refuses
 * the operation, and nothing changes.
 *
 * @example
 * const { result } = await compileAhead(validators, (compile) => storage.rules.publishContext(tenantId, context, compile));
 */
export async function compileAhead<T extends { live?: CompiledValidator }>(
  validators: ValidatorService,
  operation: (beforeCommit: BeforeCommit<CompiledValidator>) => Promise<T>,
  check?: GoLiveCheck,
): Promise<T> {
  let next: LiveRuleset;
  try {
    return await operation((ruleset) => {
      throw new DryRunEnded(ruleset);
    });
  } catch (error) {
    if (!(error instanceof DryRunEnded)) throw error;
    next = error.next;
  }
  const early = { validator: await compileChecked(validators, next, check), ruleset: next };
  return validators.whileChanging(next.tenantId, next.context, async () => {
    const outcome = await operation(compileUnlessEarly(validators, early, check));
    if (outcome.live !== undefined) validators.install(outcome.live);
    return outcome;
  });
}

/** The validator compiled before the transaction, with the rules it was compiled from (a validator keeps none). */
export interface EarlyValidator {
  validator: CompiledValidator;
  ruleset: LiveRuleset;
}

/**
 * The beforeCommit of the real run: the early validator when the rules
 * going live are the ones it was compiled from, else a compile of them.
 */
export function compileUnlessEarly(validators: ValidatorService, early: EarlyValidator, check?: GoLiveCheck): BeforeCommit<CompiledValidator> {
  const beforeCommit = async (next: LiveRuleset): Promise<CompiledValidator> => {
    // Storage hands over the early rules themselves when the same rule versions go live.
    if (next.rules === early.ruleset.rules) return withVersion(early.validator, next.rulesetVersion);
    if (await runInSlices(sameRules(early.ruleset, next), TUNING.installSliceMs.value)) return withVersion(early.validator, next.rulesetVersion);
    return compileChecked(validators, next, check);
  };
  // The dry run's ruleset: storage reads only the versions going live when they are the same.
  return Object.assign(beforeCommit, { readBefore: early.ruleset });
}

/**
 * Compiles `next` and vets it with `check`. The build the validator was
 * installed from is kept while the check runs, so that the stored tests
 * evaluate it on their thread (go-live-tests.ts) instead of compiling the
 * rules again from a copy of them.
 */
async function compileChecked(validators: ValidatorService, next: LiveRuleset, check: GoLiveCheck | undefined): Promise<CompiledValidator> {
  const validator = await validators.compile(next, 'change', { keepBuild: check !== undefined });
  try {
    await check?.(validator);
  } finally {
    dropBuild(validator);
  }
  return validator;
}

/** Vets a validator about to go live; throws to refuse the operation. */
export type GoLiveCheck = (validator: CompiledValidator) => void | Promise<void>;

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
