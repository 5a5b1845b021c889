/**
 * Local evaluation's collaborators (docs/api.md, "Local evaluation"), built
 * once by buildApp: the signer, the signed modules, the change feed, and
 * the one question every route of it asks first: may this key have this
 * context's module?
 */
import type { ValidatorService } from '../app-deps.ts';
import type { Config } from '../config.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import type { ModuleSigner } from '../signing/module-signer.ts';
import type { ContextState, LiveRuleset, Role, Storage } from '../storage/types.ts';
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
  validators: ValidatorService;
  signer: ModuleSigner;
  log: { warn(o: object, msg?: string): void };
}

/**
 * @example
 * const local = createLocalEvaluation({ config, storage, validators, signer, log: app.log });
 * const state = await local.access(tenantId, context, request.auth.role, true);
 */
export function createLocalEvaluation(options: LocalEvaluationOptions): LocalEvaluation {
  const { config, storage, validators, signer } = options;
  const modules = new SignedModules({ signer, maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows });

  /** The cached validator's rules when they are the live version's, else the database's. */
  const liveRuleset = async (tenantId: string, context: string, version: number): Promise<LiveRuleset | null> => {
    const cached = validators.peek(tenantId, context);
    if (cached !== undefined && cached.rulesetVersion === version) return cached.ruleset;
    return storage.rules.liveRuleset(tenantId, context);
  };

  const moduleOf = async (tenantId: string, context: string): Promise<SignedModule | null> => {
    const state = await storage.contextSettings.state(tenantId, context);
    if (state?.rulesetVersion == null) return null;
    const ruleset = await liveRuleset(tenantId, context, state.rulesetVersion);
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
