/**
 * A ruleset compiled for one request and dropped with it (a rule test, a
 * stored-test run, an impact report's target), or the problem a publish of
 * the same ruleset would get. Rules are checked when saved, so only a
 * compiler change since, or a draft over a ruleset-wide limit, gets here.
 */
import type { ValidatorService } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import type { LiveRuleset } from '../storage/types.ts';
import { describeCompileError } from './check-rule-content.ts';

export interface CompileUncachedOptions {
  /** Also the explaining variant (`explain`). */
  explain?: boolean;
  /** Put before each error's field path (`rule.` when the body held the rule). */
  pathPrefix?: string;
  /** The context named in the problem's detail; none for a rule tested alone. */
  context?: string;
}

/**
 * The validator (and its explaining variant when asked), never cached; a
 * ProblemError 409 LIMIT_EXCEEDED or 400 INVALID_BODY naming every error.
 *
 * @example
 * const { validator } = await compileUncachedOrRefuse(validators, ruleset, { context: ruleset.context });
 */
export async function compileUncachedOrRefuse(
  validators: Pick<ValidatorService, 'compileUncached'>, ruleset: LiveRuleset, options: CompileUncachedOptions = {},
) {
  const { validator, errors, explain } = await validators.compileUncached(ruleset, { explain: options.explain === true });
  if (validator !== undefined && errors.length === 0) return { validator, explain };
  const prefix = options.pathPrefix ?? '';
  const fieldErrors = errors.map((error) => ({ path: `${prefix}${error.field}`, message: `rule ${error.ruleCode}: ${describeCompileError(error)}` }));
  if (errors.some((error) => error.code === 'LIMIT_EXCEEDED')) throw new ProblemError(PROBLEMS.rulesetOverLimit(fieldErrors, options.context));
  throw new ProblemError(PROBLEMS.rulesetDoesNotCompile(fieldErrors, options.context));
}
