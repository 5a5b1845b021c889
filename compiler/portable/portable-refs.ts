/**
 * A compiled validator's refs (regex matchers, schema validators, the
 * schema-failure mapper) as plain data that crosses threads, and back.
 *
 * A thread that compiled a ruleset sends, for each ref, what the
 * standalone module would rebuild it from (standalone/): a `matches()`
 * pattern with the runner `compilePattern` decided for it (native RegExp
 * source, DFA tables or an RE2 source), and a schema as Ajv's standalone
 * code, CommonJS, generated on an Ajv configured like the service's, with
 * the runners of its patterns. The thread that installs the validator
 * evaluates that code once (`rebuildRefsSteps`): no rule, schema or pattern is
 * parsed or compiled there.
 *
 * What schema code may `require` is a fixed list: Ajv's runtime helpers,
 * ajv-formats' formats, and the pattern table of its own patterns.
 */
import { createRequire } from 'node:module';
import type { RefOrigin } from '../ruleset-source.ts';
import { compilePattern, runnerMatcher, type PatternMatcher, type PatternRunner } from '../regex/compile-pattern.ts';
import { schemaFailures } from '../schema/index.ts';
import { PatternTable } from '../standalone/pattern-table.ts';
import { PATTERNS_MODULE, SchemaCodeWriter } from '../standalone/schema-module.ts';
import type { Steps } from '../steps.ts';

/** One ref as plain data, by the name generated code reads it under. */
export type PortableRef =
  | { name: string; kind: 'pattern'; pattern: string; runner: PatternRunner }
  | { name: string; kind: 'schema'; code: string }
  | { name: string; kind: 'schemaFailures' };

/** A validator's refs as plain data, and the runners of the patterns its schemas' code asks for. */
export interface PortableRefs {
  refs: PortableRef[];
  schemaPatterns: Array<[pattern: string, runner: PatternRunner]>;
}

/**
 * The refs of a compiled validator as plain data (run where it compiled).
 *
 * @example
 * const refs = portableRefs(compiled.generated().origins);
 */
export function portableRefs(origins: Readonly<Record<string, RefOrigin>>): PortableRefs {
  const schemaPatterns = new PatternTable();
  let schemas: SchemaCodeWriter | undefined;
  const refs = Object.entries(origins).map(([name, origin]): PortableRef => {
    switch (origin.kind) {
      case 'pattern':
        return { name, kind: 'pattern', pattern: origin.pattern, runner: runnerOf(origin.pattern) };
      case 'schema':
        schemas ??= new SchemaCodeWriter(schemaPatterns, { esm: false });
        return { name, kind: 'schema', code: schemas.source(origin.schema) };
      case 'schemaFailures':
        return { name, kind: 'schemaFailures' };
    }
  });
  return { refs, schemaPatterns: schemaPatterns.entries() };
}

/** A pattern's runner; it compiled a moment ago for the same rule, so a refusal is a bug. */
function runnerOf(pattern: string): PatternRunner {
  // Length limits were applied when the rule was planned; here only the engine is looked up.
  const compiled = compilePattern(pattern, { maxPatternLength: Number.POSITIVE_INFINITY });
  if (!compiled.ok) throw new Error(`${compiled.code}: pattern ${JSON.stringify(pattern)}: ${compiled.message}`);
  return compiled.runner;
}

/**
 * The refs generated code reads, rebuilt from their plain data (run where
 * the validator is installed), one ref a step: a ruleset of thousands of
 * rules has as many schema validators and matchers, each evaluated or
 * built here, and the installing thread gives its event loop turns in
 * between (src/time-slices.ts).
 *
 * @example
 * const validate = runSteps(instantiateGeneratedSteps(layout, runSteps(rebuildRefsSteps(refs)))).validate;
 */
export function* rebuildRefsSteps({ refs, schemaPatterns }: PortableRefs): Steps<Readonly<Record<string, unknown>>> {
  const rebuilt: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  let patternEngine: PatternEngine | undefined;
  for (const ref of refs) {
    switch (ref.kind) {
      case 'pattern':
        rebuilt[ref.name] = runnerMatcher(ref.pattern, ref.runner);
        break;
      case 'schema':
        patternEngine ??= patternEngineOf(schemaPatterns);
        rebuilt[ref.name] = evaluateSchemaCode(ref.code, patternEngine);
        break;
      case 'schemaFailures':
        rebuilt[ref.name] = schemaFailures;
        break;
    }
    yield;
  }
  return Object.freeze(rebuilt);
}

const requirePackage = createRequire(import.meta.url);
// Each package once: Node's require resolves the name again on every call
// (file system checks), which a ruleset of thousands of schemas would pay
// thousands of times per install.
const requiredPackages = new Map<string, unknown>();
/** What Ajv's standalone code requires: its runtime helpers and ajv-formats' formats. */
const ALLOWED_PACKAGES = /^(?:ajv\/dist\/runtime\/[a-z0-9_]+|ajv-formats\/dist\/formats)$/i;

type PatternEngine = (pattern: string, flags: string) => PatternMatcher;

/** What schema code calls for its patterns: matchers of the runners sent with it, each made once. */
function patternEngineOf(patterns: ReadonlyArray<[string, PatternRunner]>): PatternEngine {
  const matchers = new Map<string, PatternMatcher>(patterns.map(([pattern, runner]) => [pattern, runnerMatcher(pattern, runner)]));
  return (pattern, flags) => {
    const found = matchers.get(pattern);
    if (found === undefined || flags !== 'u') throw new Error(`schema code asked for pattern ${JSON.stringify(pattern)}/${flags}, which it was not built with`);
    return found;
  };
}

/** Ajv's CommonJS standalone code, run once; its export is the schema's validate function. */
function evaluateSchemaCode(code: string, patternEngine: PatternEngine): unknown {
  const require = (name: string): unknown => {
    if (name === PATTERNS_MODULE) return { patternEngine };
    if (!ALLOWED_PACKAGES.test(name)) throw new Error(`schema code may not require ${JSON.stringify(name)}`);
    let required = requiredPackages.get(name);
    if (required === undefined) {
      required = requirePackage(name);
      requiredPackages.set(name, required);
    }
    return required;
  };
  const module = { exports: {} as unknown };
  // Ajv's code for a schema the policy accepted, generated on a compile thread, by design.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval, @typescript-eslint/no-unsafe-call -- see above
  new Function('require', 'module', 'exports', code)(require, module, module.exports);
  return module.exports;
}
