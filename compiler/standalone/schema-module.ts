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
 * `validate`); records the schema's patterns in `patterns`. An ES module
 * by default; `esm: false` gives CommonJS (`module.exports`, `require`),
 * which a thread evaluates with `new Function` (compiler/portable/).
 *
 * @example
 * const text = schemaModuleSource({ type: 'string', pattern: '^a' }, table);
 */
export function schemaModuleSource(schema: unknown, patterns: PatternTable, options: { esm?: boolean } = {}): string {
  let recording = false;
  const engine = Object.assign(
    (pattern: string, flags: string): PatternMatcher => {
      if (recording) patterns.add(pattern);
      return patternEngine(pattern, flags);
    },
    { code: `require(${literal(PATTERNS_MODULE)}).patternEngine` },
  );
  const ajv = createStandaloneAjv(engine, { esm: options.esm ?? true });
  // Ajv compiles its meta-schema (which has patterns of its own) on first
  // use; doing that first keeps its patterns out of the module.
  // The meta-schema is synchronous: the answer is a boolean, and not needed.
  void ajv.validateSchema({});
  recording = true;
  const validate = ajv.compile(withRootId(schema as object | boolean));
  return standaloneCode(ajv, validate);
}
