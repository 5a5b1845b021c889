/**
 * The standalone validator module of a context's live ruleset as local
 * evaluation serves it: its bytes, their ETag and their Ed25519 signature,
 * built once per ruleset version (a version's rules never change) and kept
 * in a bounded LRU. The ETag is the SHA-256 of the bytes, so every instance
 * gives the same module the same ETag.
 */
import { createHash } from 'node:crypto';
import { buildStandaloneModule, StandaloneModuleCache } from '../../compiler/standalone/index.ts';
import type { LiveRuleset } from '../storage/types.ts';
import type { ModuleSigner } from '../signing/module-signer.ts';
import { runInSlices } from '../time-slices.ts';

/** One built module, ready to send. */
export interface SignedModule {
  readonly rulesetVersion: number;
  readonly body: Buffer;
  /** A strong validator, quoted: `"sha256-<base64url>"`. */
  readonly etag: string;
  /** Base64 Ed25519 signature of `body`. */
  readonly signature: string;
}

export interface SignedModulesOptions {
  signer: ModuleSigner;
  maxExpressionLength: number;
  maxTableRows: number;
}

/**
 * @example
 * const module = await modules.of(ruleset);
 * reply.header('etag', module.etag).send(module.body);
 */
export class SignedModules {
  readonly #signer: ModuleSigner;
  readonly #maxExpressionLength: number;
  readonly #maxTableRows: number;
  // Single flight and LRU bound, as for the code itself: a version's module never changes.
  readonly #built = new StandaloneModuleCache<SignedModule>();

  constructor(options: SignedModulesOptions) {
    this.#signer = options.signer;
    this.#maxExpressionLength = options.maxExpressionLength;
    this.#maxTableRows = options.maxTableRows;
  }

  /** The module of this ruleset version, built (a slice of time at a time, as compiles are) on a miss; concurrent calls share one build. */
  of(ruleset: LiveRuleset): Promise<SignedModule> {
    return this.#built.get(moduleKey(ruleset.tenantId, ruleset.context, ruleset.rulesetVersion), () => this.#build(ruleset));
  }

  /** The module of this ruleset version when it is built, else undefined: callers read the rules only to build one. */
  built(tenantId: string, context: string, rulesetVersion: number): SignedModule | undefined {
    return this.#built.built(moduleKey(tenantId, context, rulesetVersion));
  }

  async #build(ruleset: LiveRuleset): Promise<SignedModule> {
    const { tenantId, context, rulesetVersion } = ruleset;
    const { code } = await buildStandaloneModule(ruleset.rules, {
      limits: { maxExpressionLength: this.#maxExpressionLength, maxTableRows: this.#maxTableRows },
      about: { tenantId, context, rulesetVersion },
      runSteps: runInSlices,
    });
    const body = Buffer.from(code, 'utf8');
    return Object.freeze({
      rulesetVersion,
      body,
      etag: `"sha256-${createHash('sha256').update(body).digest('base64url')}"`,
      signature: this.#signer.sign(body),
    });
  }
}

function moduleKey(tenantId: string, context: string, rulesetVersion: number): string {
  return `${tenantId}\u0000${context}\u0000${rulesetVersion}`;
}
