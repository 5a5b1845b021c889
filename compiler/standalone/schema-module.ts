/**
 * A schema rule's validator as module text: Ajv's standalone code, compiled
 * on an Ajv configured like the service's (`createStandaloneAjv`), so its
 * errors, and therefore the failures built from them, are the same.
 *
 * Ajv's output reaches what it needs with `require(...)`: ajv-formats'
 * format checks and Ajv's runtime helpers (resolved and inlined by the
 * bundler), and the pattern engine, which here is the module's pattern table
 * (`PATTERNS_MODULE`), filled while Ajv compiles.
 */
import standaloneCodeModule from 'ajv/dist/standalone/index.js';
import { patternEngine, type PatternMatcher } from '../regex/compile-pattern.ts';
import { createStandaloneAjv, withRootId } from '../schema/index.ts';
import { literal } from './literal.ts';
import type { PatternTable } from './pattern-table.ts';

// CommonJS with a default export; under NodeNext the namespace's default is
// the function itself.
const standaloneCode = standaloneCodeModule as unknown as typeof standaloneCodeModule.default;

/** The virtual module name that schema code imports its patterns from. */
export const PATTERNS_MODULE = 'rules-standalone:patterns';

/**
 * Module text exporting the schema's validator as `default` (and
 * `validate`); records the schema's patterns in `patterns`.
 *
 * @example
 * const text = schemaModuleSource({ type: 'string', pattern: '^a' }, table);
 */
export function schemaModuleSource(schema: unknown, patterns: PatternTable): string {
  return new SchemaCodeWriter(patterns).source(schema);
}

/**
 * Writes the code of many schemas on one Ajv (creating an Ajv and compiling
 * its meta-schema costs far more than compiling a rule's schema), recording
 * their patterns in one table. ES modules by default; `esm: false` gives
 * CommonJS (`module.exports`, `require`), which another thread evaluates
 * with `new Function` (compiler/portable/).
 */
export class SchemaCodeWriter {
  readonly #ajv: ReturnType<typeof createStandaloneAjv>;
  #recording = false;

  constructor(patterns: PatternTable, options: { esm?: boolean } = {}) {
    const engine = Object.assign(
      (pattern: string, flags: string): PatternMatcher => {
        if (this.#recording) patterns.add(pattern);
        return patternEngine(pattern, flags);
      },
      { code: `require(${literal(PATTERNS_MODULE)}).patternEngine` },
    );
    this.#ajv = createStandaloneAjv(engine, { esm: options.esm ?? true });
    // Ajv compiles its meta-schema (which has patterns of its own) on first
    // use; doing that first keeps its patterns out of the table.
    // The meta-schema is synchronous: the answer is a boolean, and not needed.
    void this.#ajv.validateSchema({});
  }

  /** The module text of one schema's validator. */
  source(schema: unknown): string {
    const compiled = withRootId(schema as object | boolean);
    this.#recording = true;
    try {
      return standaloneCode(this.#ajv, this.#ajv.compile(compiled));
    } finally {
      this.#recording = false;
      // Every rule schema has the same root id: the next could not be added beside this one.
      if (typeof compiled === 'object') this.#ajv.removeSchema(compiled);
    }
  }
}
