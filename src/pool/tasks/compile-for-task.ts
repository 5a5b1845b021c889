/**
 * A ruleset compiled on a management thread for one task, and dropped with
 * it: the validator (and the explaining variant when asked for), or the
 * problem a publish of the same ruleset would get (rules are checked when
 * saved, so only a compiler change since, or a draft over a ruleset-wide
 * limit, gets there). The thread runs nothing
 * else meanwhile, so the compile runs at once rather than in slices.
 */
import { explainRuleset } from '../../../compiler/explain-ruleset.ts';
import type { CompiledValidator } from '../../validators/compiled-validator.ts';
import type { CompileError, CompilerLimits } from '../../../compiler/types.ts';
import { PROBLEMS, ProblemError, type ProblemSpec } from '../../errors.ts';
import type { ExplainFn } from '../../rules/stored-tests.ts';
import type { LiveRuleset } from '../../storage/types.ts';
import { rulesetCompileErrors } from '../../validators/compile-errors.ts';
import { compileValidator, runAtOnce } from '../../validators/compile-validator.ts';

export interface CompileForTaskOptions {
  /** Also the explaining variant (`explain`). */
  explain?: boolean;
  /** Put before each error's path (`rule.` when the body held the rule). */
  pathPrefix?: string;
  /** The context named in the problem's detail; none for a rule tested alone. */
  context?: string;
}

/**
 * Compiles `ruleset`; a ProblemError (409 LIMIT_EXCEEDED or 400 INVALID_BODY
 * naming every error) when it does not compile.
 *
 * @example
 * const { validator, explain } = await compileForTask(ruleset, limits, { explain: true, context: 'loans' });
 */
export async function compileForTask(
  ruleset: LiveRuleset, limits: Partial<CompilerLimits>, options: CompileForTaskOptions = {},
): Promise<{ validator: CompiledValidator; explain?: ExplainFn }> {
  const outcome = await compileValidator(ruleset, limits, runAtOnce);
  if (outcome.validator === undefined || outcome.errors.length > 0) throw new ProblemError(compileRefusal(outcome.errors, options));
  if (options.explain !== true) return { validator: outcome.validator };
  return { validator: outcome.validator, explain: explainRuleset(ruleset.rules, { limits }).explain };
}

/**
 * The problem a publish of a ruleset with these compile errors would get:
 * 409 LIMIT_EXCEEDED (a ruleset-wide limit) or 400 INVALID_BODY, naming every error.
 */
function compileRefusal(errors: readonly CompileError[], options: CompileForTaskOptions): ProblemSpec {
  const fieldErrors = rulesetCompileErrors(errors, options.pathPrefix);
  if (errors.some((error) => error.code === 'LIMIT_EXCEEDED')) return PROBLEMS.rulesetOverLimit(fieldErrors, options.context);
  return PROBLEMS.rulesetDoesNotCompile(fieldErrors, options.context);
}
