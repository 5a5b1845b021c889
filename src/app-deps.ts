/**
 * What route plugins receive: the service's collaborators, built once in
 * `buildApp` and passed as plugin options (`{ deps }`). Handlers never build
 * their own storage, caches or compilers.
 */
import type {} from 'fastify';
import type { Config } from './config.ts';
import type { ManagementPool } from './pool/management-pool.ts';
import type { PayloadSchemas } from './rules/payload-schemas.ts';
import type { SampleSink } from './sampling/sample-recorder.ts';
import type { ApiKeyRecord, ChangeOrigin, Role, Storage } from './storage/types.ts';
import type { ValidatorService } from './validators/compiled-validator.ts';

/** Defined beside the cache that holds them (validators/ sits below the routes that receive them here). */
export type { CompiledValidator, ValidatorService } from './validators/compiled-validator.ts';

/** API keys: generation, hashing and the cached lookup behind authentication. */
export interface KeyService {
  /** Creates a key; the secret is returned only here. */
  create(tenantId: string, name: string, role: Role, origin?: ChangeOrigin): Promise<{ record: ApiKeyRecord; key: string }>;
  /** Revokes a key and drops it from the auth cache at once. */
  revoke(tenantId: string, keyId: string, origin?: ChangeOrigin): Promise<ApiKeyRecord>;
}

export interface AppDeps {
  readonly config: Config;
  readonly storage: Storage;
  readonly validators: ValidatorService;
  readonly keys: KeyService;
  /** Payload schemas of contexts, parsed and cached, for save-time warnings. */
  readonly payloadSchemas: PayloadSchemas;
  /** The queue of sampled validations (sampling/sample-recorder.ts). */
  readonly samples: SampleSink;
  /** Worker threads for heavy management work, with a fair queue per tenant and one budget per operation (pool/management-pool.ts). */
  readonly pool: ManagementPool;
}

/** Who is calling, set by the authentication hook on every /api/v1 request. */
export interface RequestAuth {
  readonly tenantId: string;
  readonly role: Role;
  readonly keyId: string;
  readonly keyName: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook; null only on routes outside /api/v1. */
    auth: RequestAuth | null;
  }
  interface FastifyContextConfig {
    /**
     * Who may call a route under /api/v1 (default 'admin'): 'admin' keys only; 'validator': admin and validator keys;
     * 'client': admin and client keys (local evaluation's routes); 'any': every key. Client keys are refused everywhere else.
     */
    role?: Role | 'any';
    /** A CORS preflight (OPTIONS) of a local-evaluation route: answered without a key (local-evaluation/cors.ts). */
    preflight?: true;
  }
}
