/**
 * The validator of a context for a request: from the cache when it is
 * there (the usual case, answered synchronously so the caller can stay
 * synchronous too), else loaded and compiled (ValidatorService.load). A
 * context without a published ruleset is a 404 naming where the request
 * named it.
 */
import type { CompiledValidator, ValidatorService } from '../app-deps.ts';
import { PROBLEMS, ProblemError, type NamedContext } from '../errors.ts';

/**
 * The cached validator (counted as a cache hit), or a promise of the
 * loaded one.
 *
 * @example
 * const validator = lookupValidator(validators, tenantId, 'loan', 'context');
 */
export function lookupValidator(
  validators: ValidatorService, tenantId: string, context: string, path: string,
): CompiledValidator | Promise<CompiledValidator> {
  return validators.get(tenantId, context) ?? loadValidator(validators, tenantId, context, path);
}

/** The validator loaded from the database; rejects with the 404 when the context has no published ruleset. */
export async function loadValidator(validators: ValidatorService, tenantId: string, context: string, path: string): Promise<CompiledValidator> {
  const validator = await validators.load(tenantId, context);
  if (validator === null) throw contextNotFound([{ context, path }]);
  return validator;
}

/** The 404 of contexts without a published ruleset: every one the request names, each with its path. */
export function contextNotFound(unknown: NamedContext[]): ProblemError {
  return new ProblemError(PROBLEMS.contextsNotPublished(unknown));
}
