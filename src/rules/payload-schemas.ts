/**
 * Payload schemas of contexts (docs/api.md, "Payload schemas"): a JSON
 * Schema (draft 2020-12) per tenant and context that says what the
 * context's payloads look like. It is checked on the way in by the same
 * policy as a schema rule's `schema` (size, depth, references, patterns,
 * Ajv's strict mode), and read by the save-time warnings only: nothing that
 * validates payloads ever sees it.
 *
 * A parsed copy (compiler PayloadSchema, which also remembers the lookups
 * the warnings made), or the fact that there is none, is kept per context
 * under the revision it was read at. A change made through this process
 * replaces it at once. For a change made through another, a use past
 * TUNING.payloadSchemaRecheckMs since the last look reads the current
 * revision (one indexed read) and rereads the schema only when it changed:
 * such a change is seen within that time, as instances converge on
 * everything else, without any cache sync, and a check typed key by key
 * mostly reads nothing at all.
 */
import { performance } from 'node:perf_hooks';
import { PayloadSchema, resolveLimits, type CompilerLimits } from '../../compiler/index.ts';
import { pointerToPath } from '../../compiler/paths.ts';
import { compileSchema } from '../../compiler/schema/index.ts';
import { PayloadSchemaInvalidError, type FieldError } from '../domain-errors.ts';
import type { ChangeOrigin, PayloadSchemaStore } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';

export interface PayloadSchemasOptions {
  store: PayloadSchemaStore;
  /** The compiler limits rules are saved under (the schema policy's size and depth). */
  limits?: Partial<CompilerLimits>;
  /** Parsed schemas kept; default TUNING.payloadSchemaCacheEntries. */
  maxEntries?: number;
  /** How long a cached entry is used without a look at its revision; default TUNING.payloadSchemaRecheckMs. */
  recheckMs?: number;
}

/** What is known of a context's payload schema: its revision and parsed form, or that there is none (revision null). */
interface CachedSchema {
  revision: string | null;
  schema: PayloadSchema | undefined;
  /** performance.now() of the last look at the database. */
  checkedAt: number;
}

/**
 * The payload schemas of every tenant's contexts, for routes.
 *
 * @example
 * const schemas = new PayloadSchemas({ store: storage.payloadSchemas });
 * await schemas.put('acme', 'orders', { type: 'object', properties: { total: { type: 'number' } } });
 * analyzeRule(rule, { payloadSchema: await schemas.forWarnings('acme', 'orders') });
 */
export class PayloadSchemas {
  readonly #store: PayloadSchemaStore;
  readonly #limits: Readonly<CompilerLimits>;
  readonly #maxEntries: number;
  readonly #recheckMs: number;
  /** By tenant and context, least recently used first. */
  readonly #cached = new Map<string, CachedSchema>();

  constructor(options: PayloadSchemasOptions) {
    this.#store = options.store;
    this.#limits = resolveLimits({ limits: options.limits });
    this.#maxEntries = options.maxEntries ?? TUNING.payloadSchemaCacheEntries.value;
    this.#recheckMs = options.recheckMs ?? TUNING.payloadSchemaRecheckMs.value;
  }

  /** The schema as it was set, or null when the context has none. */
  async get(tenantId: string, context: string): Promise<unknown> {
    const stored = await this.#store.get(tenantId, context);
    return stored === null ? null : stored.schema;
  }

  /** Sets the context's schema; PayloadSchemaInvalidError when the policy refuses it. */
  async put(tenantId: string, context: string, schema: unknown, origin?: ChangeOrigin): Promise<unknown> {
    const problems = payloadSchemaProblems(schema, this.#limits);
    if (problems.length > 0) throw new PayloadSchemaInvalidError(problems);
    const stored = await this.#store.put(tenantId, context, schema, origin);
    this.#remember(keyOf(tenantId, context), stored.revision, new PayloadSchema(schema));
    return stored.schema;
  }

  /** Removes the context's schema; false when it had none. */
  async delete(tenantId: string, context: string, origin?: ChangeOrigin): Promise<boolean> {
    const deleted = await this.#store.delete(tenantId, context, origin);
    this.#remember(keyOf(tenantId, context), null, undefined);
    return deleted;
  }

  /**
   * The context's schema, parsed, for analyzeRule; undefined when the
   * context has none (or no context is named).
   */
  async forWarnings(tenantId: string, context: string | undefined): Promise<PayloadSchema | undefined> {
    if (context === undefined) return undefined;
    const key = keyOf(tenantId, context);
    const cached = this.#cached.get(key);
    if (cached !== undefined && performance.now() - cached.checkedAt < this.#recheckMs) {
      // Most recently used last.
      this.#cached.delete(key);
      this.#cached.set(key, cached);
      return cached.schema;
    }
    const revision = await this.#store.revision(tenantId, context);
    if (cached !== undefined && cached.revision === revision) {
      return this.#remember(key, revision, cached.schema);
    }
    const stored = revision === null ? null : await this.#store.get(tenantId, context);
    if (stored === null) return this.#remember(key, null, undefined);
    return this.#remember(key, stored.revision, new PayloadSchema(stored.schema));
  }

  /** Drops what is known of the context's schema: it was changed behind this object's back (an import), and is read afresh on next use. */
  forget(tenantId: string, context: string): void {
    this.#cached.delete(keyOf(tenantId, context));
  }

  #remember(key: string, revision: string | null, schema: PayloadSchema | undefined): PayloadSchema | undefined {
    this.#cached.delete(key);
    this.#cached.set(key, { revision, schema, checkedAt: performance.now() });
    while (this.#cached.size > this.#maxEntries) {
      const oldest = this.#cached.keys().next().value!;
      this.#cached.delete(oldest);
    }
    return schema;
  }
}

function keyOf(tenantId: string, context: string): string {
  return `${tenantId}\u0000${context}`;
}

/**
 * Why a payload schema is refused: the schema policy of schema rules (the
 * same limits, the same strict Ajv), each problem placed at the schema
 * keyword it names (`properties.amount.maximum`, `properties.street.minLenght`
 * for an unknown keyword, with the keyword probably meant), `""` for the
 * schema as a whole. [] when it is accepted.
 *
 * @example
 * payloadSchemaProblems({ type: 'object', properties: { a: { maximum: 'x' } } }, DEFAULT_LIMITS);
 * // [{ path: 'properties.a.maximum', message: 'schema is invalid: #/properties/a/maximum must be number' }]
 */
export function payloadSchemaProblems(schema: unknown, limits: Readonly<CompilerLimits>): FieldError[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    return [{ path: '', message: 'must be a JSON Schema object' }];
  }
  const compiled = compileSchema(schema, limits);
  if (compiled.ok) return [];
  return [{ path: pointerToPath(compiled.pointer), message: compiled.message }];
}
