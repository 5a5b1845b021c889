/**
 * What the validator cache holds and serves: a compiled validator, and the
 * cache's interface as routes and the request path use it. Here, beside
 * the cache, so that the layers below the routes (rules/, pool/) name a
 * compiled validator without reaching up to app-deps.ts, which re-exports
 * both for the routes.
 */
import type { CostProfile } from '../../compiler/index.ts';
import type { ValidatorFn } from '../../compiler/types.ts';
import type { LiveRuleset } from '../storage/types.ts';
import type { CompilePriority } from './compile-validator.ts';

/**
 * A ruleset compiled for one tenant and context at one ruleset version:
 * what validation needs and a few figures, not the rules themselves. A
 * cached validator lives on the main thread for as long as its context is
 * served, and every object it holds is marked by each of that thread's
 * full collections, whose pauses validations wait for: 5,000 rules as
 * objects were about 2 MB of that heap. What needs the rules again (the
 * go-live stored tests, an impact report, a signed module) has them from
 * the compile that is under way or reads them from the database.
 */
export interface CompiledValidator {
  readonly tenantId: string;
  readonly context: string;
  readonly rulesetVersion: number;
  readonly validate: ValidatorFn;
  /** Generated JavaScript, served by GET /contexts/{c}/validator. */
  readonly source: string;
  readonly ruleCount: number;
  /** Estimated bytes of heap it holds (compile-validator.ts), by which the cache is bounded. */
  readonly estimatedBytes: number;
  readonly compileMs: number;
  /** ISO-8601 time of the compile. */
  readonly compiledAt: string;
  /** Each rule's worst-case cost by degree, worked out by the compiler (evaluation-cost.ts). */
  readonly costProfile: CostProfile;
}

/**
 * The compiled-validator cache and everything that feeds it. `get` is the
 * hot path (synchronous, no I/O); the rest runs on publish or on a miss.
 */
/** How `ValidatorService.compile` is to treat what it compiles. */
export interface CompileOptions {
  /**
   * Keep what the validator was compiled from (compile-validator.ts
   * `keepBuild`: its build, or its rules when it was compiled on this
   * thread), for the go-live stored tests to evaluate the same build;
   * the caller drops it (`dropBuild`) when they have run.
   */
  keepBuild?: boolean;
}

export interface ValidatorService {
  /** The cached validator, or undefined: a use (kept from eviction) and a cache hit. Never touches the database. */
  get(tenantId: string, context: string): CompiledValidator | undefined;
  /** The cached validator without using it: neither kept from eviction nor counted (listings, views of the cache). */
  peek(tenantId: string, context: string): CompiledValidator | undefined;
  /** On a miss: loads the live ruleset and compiles it; concurrent calls share one compile. Null when the context has no ruleset version. */
  load(tenantId: string, context: string): Promise<CompiledValidator | null>;
  /**
   * Compiles a ruleset about to go live (a publish's), or (`priority`
   * `validation`) one that requests wait for. Rejects if any rule fails to
   * compile. Compiles run on the compile lane's threads, one at a time per
   * tenant; this thread only installs what they send back.
   */
  compile(ruleset: LiveRuleset, priority?: CompilePriority, options?: CompileOptions): Promise<CompiledValidator>;
  /** Installs a freshly committed validator, replacing an older version (never a newer one). */
  install(validator: CompiledValidator): void;
  /** Runs a change of a context's live validator by this process, up to its install (cache sync waits for it). */
  whileChanging<T>(tenantId: string, context: string, change: () => Promise<T>): Promise<T>;
  /** Drops the cached validator of a context, e.g. when it was published elsewhere. */
  invalidate(tenantId: string, context: string): void;
  /** Rebuilds from the database now (POST /contexts/{c}/recompile). Null when the context has no ruleset version. */
  recompile(tenantId: string, context: string): Promise<CompiledValidator | null>;
}
