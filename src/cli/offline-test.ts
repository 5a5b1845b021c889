/**
 * `test FILE`: a rules file's tests against the file's own rules, as
 * `opa test` tests policies, with no service and no database: the rules
 * are checked and compiled by the same code as an import
 * (src/rules/rules-file.ts, compile-validator.ts) and each test is run as
 * a stored-test run runs it (src/rules/stored-tests.ts). What a CI job
 * runs on every change to a rules file, before anything is imported.
 */
import { toRuleDefinition } from '../../compiler/rule-schema.ts';
import type { Config } from '../config.ts';
import type { CompiledValidator } from '../app-deps.ts';
import { checkRulesFile, rulesFileWarnings, warningSchemaOf, type IncomingRulesFile } from '../rules/rules-file.ts';
import { runStoredTests } from '../rules/stored-tests.ts';
import type { ImportPlan, LiveRuleset } from '../storage/types.ts';
import { compileValidator } from '../validators/compile-validator.ts';
import { describeCompileError } from '../validators/compile-errors.ts';
import { tested } from './file-commands.ts';
import { describeErrors, readRulesFile } from './rules-file-io.ts';
import type { CommandOutput } from './run-command.ts';

/** Where a test run's rules come from: no tenant, no stored version. */
const OFFLINE_TENANT = 'offline';

/** A rules file's rules checked and compiled, or every error with its path in the file. */
export type CompiledRulesFile =
  | { ok: true; plan: ImportPlan; ruleset: LiveRuleset; validator: CompiledValidator }
  | { ok: false; errors: Array<{ path: string; message: string }> };

/**
 * Checks and compiles a rules file's rules as an import would, with no
 * database: each error named by its path in the file (`rules[3].expression`).
 * `test FILE` and `bench FILE` start here.
 */
export async function compileRulesFile(file: IncomingRulesFile, config: Config): Promise<CompiledRulesFile> {
  const checked = checkRulesFile(file, config);
  const errors = checked.ok ? [] : [...checked.errors];
  if (file.rules.length > config.maxRulesPerContext) {
    errors.unshift({ path: 'rules', message: `has ${file.rules.length} rules, a context may have at most ${config.maxRulesPerContext} (MAX_RULES_PER_CONTEXT)` });
  }
  if (!checked.ok || errors.length > 0) return { ok: false, errors };
  const { plan } = checked;
  const ruleset: LiveRuleset = {
    tenantId: OFFLINE_TENANT,
    // An exported file names its context; tests do not depend on it.
    context: 'file',
    rulesetVersion: 0,
    // In code order, as the database reads a context's rules: failures come in the same order.
    rules: [...plan.rules].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0)).map(({ code, content }) => toRuleDefinition(code, content)),
  };
  const compiled = await compileValidator(ruleset, { maxExpressionLength: config.maxExpressionLength });
  if (compiled.validator === undefined) {
    const byCode = new Map(plan.rules.map(({ code }, index) => [code, index]));
    return {
      ok: false,
      errors: compiled.errors.map((error) => ({
        path: `rules[${byCode.get(error.ruleCode) ?? '?'}].${error.path ?? error.field}`,
        message: describeCompileError(error),
      })),
    };
  }
  return { ok: true, plan, ruleset, validator: compiled.validator };
}

/**
 * Checks, compiles and tests the rules file at `path`. Exit status 1 when
 * it does not compile (each error with its path, `rules[3].expression`) or
 * a test fails (`tests[2]`); warnings are printed and do not fail it.
 */
export async function testFileOffline(path: string, config: Config): Promise<CommandOutput> {
  const compiled = await compileRulesFile(await readRulesFile(path), config);
  if (!compiled.ok) return notCompiled(path, compiled.errors);
  const { plan, validator } = compiled;
  const schema = await warningSchemaOf(plan, () => Promise.resolve(undefined));
  const warnings = rulesFileWarnings(plan, schema, config.maxExpressionLength);
  const tests = plan.tests ?? [];
  const output = tested(runStoredTests(validator, tests, config), tests);
  const warningLines = warnings.map((warning) => `warning ${warning.code} at ${warning.path}: ${warning.message}`);
  return {
    text: [...warningLines, output.text].join('\n'),
    json: { ...(output.json as object), errors: [], warnings },
    exitCode: output.exitCode,
  };
}

/** A file whose rules do not compile: no test is run. */
function notCompiled(path: string, errors: ReadonlyArray<{ path: string; message: string }>): CommandOutput {
  return {
    text: `${path} does not compile; no test was run:\n${describeErrors(errors)}`,
    json: { passed: 0, failed: 0, results: [], errors, warnings: [] },
    exitCode: 1,
  };
}
