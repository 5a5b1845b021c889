/**
 * The one Ajv instance that compiles every tenant's schemas in this process,
 * so thousands of contexts do not mean thousands of Ajv instances.
 *
 * Sharing is safe because nothing a schema does outlives its compile: `$id`
 * is refused before Ajv sees the schema and `addUsedSchema` is off, so the
 * instance's registry never holds tenant schemas; each compiled schema is
 * removed from Ajv's cache at once; and the values Ajv's code generator keeps
 * in its shared scope (the schema, its patterns, the validate function) are
 * dropped after each compile (see `forgetCompiledValues`).
 */
import { Ajv2020, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import addFormatsPlugin from 'ajv-formats';
import { ajvRegExpEngine } from '../regex/index.ts';

// ajv-formats is CommonJS with a default export; under NodeNext the
// namespace's default is the plugin function.
const addFormats = addFormatsPlugin as unknown as typeof addFormatsPlugin.default;

/**
 * Options of docs/rule-language.md.
 *
 * `strictRequired` stays off: it refuses `{"type":"object","required":["a"]}`
 * unless `properties.a` is declared too, which is valid and common JSON
 * Schema, and it guards no safety property. `allowUnionTypes` lets
 * `"type": ["string", "number"]` through strictTypes for the same reason.
 * Everything else of strict mode (unknown keywords, unknown formats, keywords
 * applied to the wrong type) is an error at save time.
 */
function ajvOptions(): Options {
  return {
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    allErrors: true,
    ownProperties: true,
    $data: false,
    addUsedSchema: false,
    validateFormats: true,
    unicodeRegExp: true,
    logger: false,
    code: { regExp: ajvRegExpEngine },
  };
}

function createAjv(options: Options): Ajv2020 {
  const ajv = new Ajv2020(options);
  addFormats(ajv, { mode: 'full' });
  return ajv;
}

let shared: Ajv2020 | undefined;

/** The process-wide instance; created on first use. */
export function sharedAjv(): Ajv2020 {
  shared ??= createAjv(ajvOptions());
  return shared;
}

/**
 * The `$id` every rule schema is compiled under (tenants may not give one).
 * Without an id, Ajv with `addUsedSchema` off cannot resolve `"$ref": "#"`,
 * the usual way to write a recursive schema ("can't resolve reference #
 * from id #"), though it resolves `#/$defs/...`. The id names no resource
 * anywhere and is never registered: `addUsedSchema` is off.
 */
const RULE_SCHEMA_ID = 'urn:rules-service:rule-schema';

/**
 * The schema as it is compiled: an object schema gets RULE_SCHEMA_ID (on a
 * copy of its top level), a boolean one stays as it is.
 *
 * @example
 * withRootId({ type: 'object' }); // { $id: 'urn:rules-service:rule-schema', type: 'object' }
 */
export function withRootId(schema: object | boolean): object | boolean {
  return typeof schema === 'object' ? { $id: RULE_SCHEMA_ID, ...schema } : schema;
}

/** `text` (an Ajv error message) without RULE_SCHEMA_ID, which the tenant never wrote: `at "#"`, not `at "urn:...#"`. */
export function withoutRootId(text: string): string {
  return text.split(RULE_SCHEMA_ID).join('');
}

/**
 * Compiles a schema (already checked by the policy and deep-copied) on the
 * shared instance and leaves the instance as it found it. Throws Ajv's error
 * when Ajv refuses the schema.
 */
export function compileOnSharedAjv(schema: object | boolean): ValidateFunction {
  const ajv = sharedAjv();
  const compiled = withRootId(schema);
  try {
    return ajv.compile(compiled);
  } finally {
    // Boolean schemas are never cached by Ajv.
    if (typeof compiled === 'object') ajv.removeSchema(compiled);
    forgetCompiledValues(ajv);
  }
}

/**
 * An Ajv configured exactly like the shared one, with `code.source` and
 * `code.esm` on (or off: `output`), for the standalone module. A fresh instance per call: it
 * keeps what it compiles, which the standalone code generator needs.
 * `regExp` replaces the pattern engine (it must apply the same regex
 * policy); its `code` is what the standalone output imports.
 *
 * @example
 * const ajv = createStandaloneAjv();
 * const source = standaloneCode(ajv, ajv.compile(schema));
 */
export function createStandaloneAjv(regExp?: RegExpEngine, output: { esm: boolean } = { esm: true }): Ajv2020 {
  const options = ajvOptions();
  return createAjv({ ...options, code: { ...options.code, ...(regExp === undefined ? {} : { regExp }), source: true, esm: output.esm } });
}

/** The parts of Ajv's ValueScope that grow with every compile. */
interface ValueScopeInternals {
  _values: Record<string, Map<unknown, unknown>>;
  _scope: Record<string, unknown[]>;
}

/**
 * Ajv's code generator registers every compiled schema, pattern and
 * validate function in a scope shared by the whole instance (values referred
 * to by compiled code), and `removeSchema` does not clear it: with one shared
 * instance that is a leak proportional to all compiles ever made. A compiled
 * validator copies the values it uses out of the scope when it is created,
 * so once `compile` has returned, the scope can be emptied; values needed
 * again (formats, helper functions) are registered again by the next compile.
 */
function forgetCompiledValues(ajv: Ajv2020): void {
  const scope = ajv.scope as unknown as ValueScopeInternals;
  for (const prefix of Object.keys(scope._values)) delete scope._values[prefix];
  for (const prefix of Object.keys(scope._scope)) delete scope._scope[prefix];
}

/** Sizes of the instance's internal caches, for tests and metrics. */
export function sharedAjvCacheSizes(): { schemas: number; refs: number; cache: number; scopeValues: number } {
  const ajv = sharedAjv() as unknown as {
    schemas: Record<string, unknown>;
    refs: Record<string, unknown>;
    _cache: Map<unknown, unknown>;
    scope: ValueScopeInternals;
  };
  let scopeValues = 0;
  for (const values of Object.values(ajv.scope._scope)) scopeValues += values.length;
  return {
    schemas: Object.keys(ajv.schemas).length,
    refs: Object.keys(ajv.refs).length,
    cache: ajv._cache.size,
    scopeValues,
  };
}
