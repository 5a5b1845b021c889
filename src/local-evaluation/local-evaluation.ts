/**
 * Local evaluation's collaborators (docs/api.md, "Local evaluation"), built
 * once by buildApp: the signer, the signed modules, the change feed, and
 * the one question every route of it asks first: may this key have this
 * context's module?
 */
import type { Config } from '../config.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import type { ModuleSigner } from '../signing/module-signer.ts';
import type { ContextState, Role, Storage } from '../storage/types.ts';
import { SignedModules, type SignedModule } from './signed-modules.ts';
import { ValidatorEvents, type PublishedState } from './validator-events.ts';

export interface LocalEvaluation {
  readonly signer: ModuleSigner;
  readonly events: ValidatorEvents;
  /**
   * The context's settings and live version, for a key of `role`. 404 for
   * an unknown context; 403 when local validation is off and `requireOn`
   * (always for a client key).
   */
  access(tenantId: string, context: string, role: Role, requireOn: boolean): Promise<ContextState>;
  /** The signed module of the context's live ruleset; null when nothing is live. */
  moduleOf(tenantId: string, context: string): Promise<SignedModule | null>;
}

export interface LocalEvaluationOptions {
  config: Config;
  storage: Storage;
  signer: ModuleSigner;
  log: { warn(o: object, msg?: string): void };
}

/**
 * @example
 * const local = createLocalEvaluation({ config, storage, signer, log: app.log });
 * const state = await local.access(tenantId, context, request.auth.role, true);
 */
export function createLocalEvaluation(options: LocalEvaluationOptions): LocalEvaluation {
  const { config, storage, signer } = options;
  const modules = new SignedModules({ signer, maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows });

  const moduleOf = async (tenantId: string, context: string): Promise<SignedModule | null> => {
    const state = await storage.contextSettings.state(tenantId, context);
    if (state?.rulesetVersion == null) return null;
    // The rules are read from the database only to build a module: a cached validator keeps none (compiled-validator.ts).
    const built = modules.built(tenantId, context, state.rulesetVersion);
    if (built !== undefined) return built;
    const ruleset = await storage.rules.liveRuleset(tenantId, context);
    return ruleset === null ? null : modules.of(ruleset);
  };

  const current = async (tenantId: string, context: string): Promise<PublishedState | null> => {
    const module = await moduleOf(tenantId, context);
    return module === null ? null : { context, version: module.rulesetVersion, etag: module.etag };
  };

  const events = new ValidatorEvents({
    heartbeatMs: config.sseHeartbeatMs,
    maxConnections: config.sseMaxConnections,
    maxConnectionsPerTenant: config.sseMaxConnectionsPerTenant,
    current,
    served: async (tenantId, context) => (await storage.contextSettings.state(tenantId, context))?.localValidation === true,
    log: options.log,
  });

  return {
    signer,
    events,
    moduleOf,
    async access(tenantId, context, role, requireOn) {
      const state = await storage.contextSettings.state(tenantId, context);
      if (state === null) throw new ProblemError(PROBLEMS.contextHasNoRules(context));
      if (!state.localValidation && (requireOn || role === 'client')) throw new ProblemError(PROBLEMS.localValidationOff(context));
      return state;
    },
  };
}
