/**
 * A ruleset as one self-contained ES module (docs/api.md, `?format=module`):
 * no imports, no Node built-ins, runs in Node and in browsers, and exports
 * a synchronous `validate(payload)` that returns what the service's single
 * validation returns, less `executionTimeMs`.
 *
 * How: the rules are planned and generated exactly as `compileRuleset` does
 * (same factory source, same rule order). The factory reads everything it
 * needs from `rt` and `refs`; the module rebuilds both from their origins:
 * `rt` is `compiler/runtime.ts` itself, `matches()` patterns and schema
 * patterns come from a pattern table decided at build time, schema
 * validators are Ajv's standalone code for the same schemas, and the
 * schema-failure mapper is `compiler/schema/schema-failures.ts`. esbuild
 * bundles these from an in-memory entry into one file.
 *
 * `now()` and `age()` see `Date.now()` at the moment `validate` is called,
 * or the time a caller passes as `validate(payload, { now })` (a client
 * replaying a decision, or pinning the clock as a test does).
 */
import { build, type Plugin } from 'esbuild';
import { planRulesetSteps } from '../compile-ruleset.ts';
import { generateSourceSteps, type RefOrigin } from '../ruleset-source.ts';
import { compilerSourceFile, sourceRoot } from '../source-files.ts';
import { runStepsAtOnce, type StepRunner } from '../steps.ts';
import type { CompileError, CompileOptions, RuleDefinition } from '../types.ts';
import { literal } from './literal.ts';
import { PatternTable } from './pattern-table.ts';
import { PATTERNS_MODULE, schemaModuleSource } from './schema-module.ts';

const NAMESPACE = 'rules-standalone';
const ENTRY = `${NAMESPACE}:entry`;
const SCHEMA_PREFIX = `${NAMESPACE}:schema/`;

/** Names in the module's header comment; anything else is left out. */
const HEADER_SAFE = /^[A-Za-z0-9_.:-]{1,100}$/;

export interface StandaloneModuleOptions extends CompileOptions {
  /** Named in the module's header comment. */
  about?: { tenantId?: string; context?: string; rulesetVersion?: number };
  /** Minify the output (default false: readable, like the validator source). */
  minify?: boolean;
  /**
   * Runs the planning and generation steps (compiler/steps.ts); default at
   * once. The service spreads them over the event loop, as it does compiles.
   */
  runSteps?: StepRunner;
}

/** A built module. */
export interface StandaloneModule {
  /** The ES module text. */
  code: string;
  /** Rules compiled into the module. */
  ruleCount: number;
  /** Wall-clock build time in milliseconds (fractional). */
  buildMs: number;
}

/** Thrown when a rule does not compile: the module would check less than what was published. */
export class StandaloneBuildError extends Error {
  readonly code = 'STANDALONE_BUILD_FAILED';
  constructor(message: string, readonly errors: readonly CompileError[] = []) {
    super(message);
    this.name = 'StandaloneBuildError';
  }
}

/**
 * Builds the standalone module of a ruleset. Asynchronous because esbuild
 * is (tens of milliseconds): callers cache the result.
 *
 * @example
 * const { code } = await buildStandaloneModule([{ code: 'A', name: 'Positive', fieldPath: 'amount', expression: '$value > 0' }]);
 * // in a browser or Node: const { validate } = await import(url); validate({ amount: -1 }).isValid === false
 */
export async function buildStandaloneModule(
  rules: RuleDefinition[],
  options: StandaloneModuleOptions = {},
): Promise<StandaloneModule> {
  const started = performance.now();
  const run = options.runSteps ?? runStepsAtOnce;
  const { plans, errors } = await run(planRulesetSteps(rules, options));
  if (errors.length > 0) {
    throw new StandaloneBuildError(`${errors.length} rule(s) do not compile; first: ${errors[0].ruleCode}: ${errors[0].message}`, errors);
  }
  const generated = await run(generateSourceSteps(plans));
  const patterns = new PatternTable();
  const modules = new Map<string, string>();
  const imports: string[] = [`import { runtime } from ${literal(compilerSourceFile('runtime.ts'))};`];
  const refs: string[] = [];
  for (const [name, origin] of Object.entries(generated.origins)) {
    refs.push(`  ${literal(name)}: ${refExpression(name, origin, patterns, modules, imports)},`);
  }
  if (patterns.size > 0) imports.push(`import { matcher } from ${literal(PATTERNS_MODULE)};`);
  modules.set(PATTERNS_MODULE, patterns.source({
    dfaMatcher: compilerSourceFile('regex/dfa-matcher.ts'),
    re2Matcher: compilerSourceFile('standalone/bundled/re2-matcher.ts'),
  }));
  modules.set(ENTRY, entrySource(imports, refs, generated.source));

  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    // esbuild resolves packages (re2js) from the checkout's node_modules.
    absWorkingDir: sourceRoot(),
    legalComments: 'none',
    minify: options.minify === true,
    banner: { js: header(options.about) },
    metafile: true,
    logLevel: 'silent',
    plugins: [virtualModules(modules)],
  });
  const [output] = result.outputFiles;
  const imported = Object.values(result.metafile.outputs).flatMap((o) => o.imports);
  if (output === undefined || imported.length > 0) {
    throw new StandaloneBuildError(`the bundle is not self-contained: ${imported.map((i) => i.path).join(', ')}`);
  }
  return { code: output.text, ruleCount: plans.length, buildMs: performance.now() - started };
}

/** The expression that rebuilds one ref inside the module. */
function refExpression(
  name: string,
  origin: RefOrigin,
  patterns: PatternTable,
  modules: Map<string, string>,
  imports: string[],
): string {
  switch (origin.kind) {
    case 'pattern':
      patterns.add(origin.pattern);
      return `matcher(${literal(origin.pattern)})`;
    case 'schema': {
      // Ref names come from the compiler's scope (`sv0`...): identifiers.
      const module = `${SCHEMA_PREFIX}${name}`;
      modules.set(module, schemaModuleSource(origin.schema, patterns));
      imports.push(`import ${name} from ${literal(module)};`);
      return name;
    }
    case 'schemaFailures':
      imports.push(`import { schemaFailures } from ${literal(compilerSourceFile('schema/schema-failures.ts'))};`);
      return 'schemaFailures';
  }
}

function entrySource(imports: readonly string[], refs: readonly string[], factory: string): string {
  return [
    ...imports,
    'const refs = Object.freeze({',
    ...refs,
    '});',
    `const run = ${factory}(runtime, refs);`,
    '/**',
    ' * Validates one payload (a JSON value; the service accepts objects) against the',
    ' * ruleset: { isValid, totalRulesEvaluated, failures }, as the service\'s single',
    ' * validation answers, less executionTimeMs. now() is options.now (epoch',
    ' * milliseconds or a Date) when given, else Date.now() at the call.',
    ' */',
    'export function validate(payload, options) {',
    '  const now = options == null || options.now === undefined ? Date.now() : Number(options.now);',
    '  return run(payload, now);',
    '}',
  ].join('\n');
}

function header(about: StandaloneModuleOptions['about']): string {
  const parts: string[] = [];
  if (about?.tenantId !== undefined && HEADER_SAFE.test(about.tenantId)) parts.push(`tenant ${about.tenantId}`);
  if (about?.context !== undefined && HEADER_SAFE.test(about.context)) parts.push(`context ${about.context}`);
  if (about?.rulesetVersion !== undefined && Number.isSafeInteger(about.rulesetVersion)) {
    parts.push(`ruleset version ${about.rulesetVersion}`);
  }
  const what = parts.length > 0 ? ` (${parts.join(', ')})` : '';
  return [
    `// Standalone validator${what}, generated by the rules service.`,
    '// Self-contained ES module for Node and browsers: import { validate } and call',
    '// validate(payload[, { now }]) -> { isValid, totalRulesEvaluated, failures }. now() is Date.now() unless given.',
  ].join('\n');
}

/** Serves the entry, the pattern table and schema modules from memory. */
function virtualModules(modules: ReadonlyMap<string, string>): Plugin {
  return {
    name: NAMESPACE,
    setup(b) {
      b.onResolve({ filter: /^rules-standalone:/ }, (args) => ({
        path: args.path.slice(NAMESPACE.length + 1),
        namespace: NAMESPACE,
      }));
      b.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
        const contents = modules.get(`${NAMESPACE}:${args.path}`);
        if (contents === undefined) return { errors: [{ text: `unknown virtual module ${args.path}` }] };
        return { contents, loader: 'js', resolveDir: sourceRoot() };
      });
    },
  };
}
