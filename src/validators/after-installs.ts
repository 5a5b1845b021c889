/**
 * A validator service that calls a function after each install: how cache
 * sync tells sibling workers, and local evaluation its change feed, of the
 * validators this process makes live.
 */
import type { CompiledValidator, ValidatorService } from './compiled-validator.ts';

/**
 * The validator service, calling `installed` after every validator this
 * process installs (its own publishes, rollbacks, imports, archives).
 *
 * @example
 * const told = afterInstalls(validators, (v) => events.changed(v.tenantId, v.context, v.rulesetVersion));
 */
export function afterInstalls(inner: ValidatorService, installed: (validator: CompiledValidator) => void): ValidatorService {
  return {
    get: inner.get.bind(inner),
    peek: inner.peek.bind(inner),
    load: inner.load.bind(inner),
    compile: inner.compile.bind(inner),
    install(validator) {
      inner.install(validator);
      installed(validator);
    },
    whileChanging: inner.whileChanging.bind(inner),
    invalidate: inner.invalidate.bind(inner),
    recompile: inner.recompile.bind(inner),
  };
}
