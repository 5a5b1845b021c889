/**
 * The CLI's rules-file commands (docs/operations.md): export, import and
 * test-drafts, on the database directly, through the same stores and checks as
 * the API (src/rules/rules-file.ts), audited as changes at the CLI.
 * `remote-file-commands.ts` runs the same commands against a service.
 */
import { writeFile } from 'node:fs/promises';
import type { CompiledValidator } from '../app-deps.ts';
import type { Config } from '../config.ts';
import { checkRulesFile, rulesFileWarnings, toRulesFile, warningSchemaOf, type RulesFile } from '../rules/rules-file.ts';
import { PayloadSchema } from '../../compiler/index.ts';
import { describeMismatch, runStoredTests, runStoredTestsHere, storedTestsGate, type TestOutcome } from '../rules/stored-tests.ts';
import { ContextNotFoundError, type ChangeInfo, type ImportResult, type LiveRuleset, type Storage, type StoredTest } from '../storage/types.ts';
import { rulesetCompileErrors } from '../validators/compile-errors.ts';
import { compileValidator } from '../validators/compile-validator.ts';
import { CommandError } from './cli-errors.ts';
import type { FileCommand } from './parse-command.ts';
import { describeErrors, readRulesFile } from './rules-file-io.ts';
import type { CommandOutput } from './run-command.ts';

/** Runs export, import or test-drafts on the database. */
export async function runFileCommand(command: FileCommand, storage: Storage, config: Config): Promise<CommandOutput> {
  switch (command.kind) {
    case 'export':
      return exported(await exportFile(command.tenantId, command.context, command.draft, storage), command.out);
    case 'import':
      return imported(await importFile(command, storage, config));
    case 'test-drafts': {
      const file = command.file === undefined ? undefined : await readRulesFile(command.file);
      const ruleset = await storage.rules.draftRuleset(command.tenantId, command.context);
      if (ruleset === null) throw new CommandError(`context ${command.context} of tenant ${command.tenantId} has no rules`);
      const tests = file?.tests ?? (await storage.tests.list(command.tenantId, command.context));
      return tested(runStoredTests(await compiled(ruleset, config), tests, config), tests);
    }
  }
}

/** What export prints, or writes to `out`. */
export async function exported(file: RulesFile, out: string | undefined): Promise<CommandOutput> {
  const text = `${JSON.stringify(file, null, 2)}`;
  if (out === undefined) return { text, json: file };
  await writeFile(out, `${text}\n`, 'utf8');
  const summary = `Wrote ${file.rules.length} rule(s) and ${file.tests.length} test(s) of context ${file.context} to ${out}.`;
  return { text: summary, json: { out, rules: file.rules.length, tests: file.tests.length } };
}

/** What import prints. */
export function imported(result: ImportResult & { warnings: Array<{ path: string; code: string; message: string }> }): CommandOutput {
  const list = (codes: string[]) => (codes.length === 0 ? '-' : codes.join(', '));
  const lines = [
    result.dryRun ? 'Dry run: nothing was changed.' : 'Imported.',
    `create:    ${list(result.create)}`,
    `update:    ${list(result.update)}`,
    `archive:   ${list(result.archive)}`,
    `unchanged: ${list(result.unchanged)}`,
    `live ruleset version: ${result.rulesetVersion ?? '-'}`,
    ...result.warnings.map((warning) => `warning ${warning.code} at ${warning.path}: ${warning.message}`),
  ];
  return { text: lines.join('\n'), json: result };
}

/**
 * What a test run prints, each test with its path in the file (`tests[2]`);
 * exit status 1 when a test fails. With the `tests` run, a failure says
 * what was expected too, and which codes differ.
 */
export function tested(
  results: ReadonlyArray<Pick<TestOutcome, 'name' | 'ok' | 'isValid' | 'failures'>>, tests?: readonly StoredTest[],
): CommandOutput {
  const passed = results.filter((result) => result.ok).length;
  const failed = results.length - passed;
  const lines = results.map((result, index) => {
    const expected = tests?.[index]?.expect;
    const got = result.isValid ? 'valid' : `invalid (${result.failures.join(', ') || 'no rule'})`;
    const outcome = result.ok || expected === undefined ? got : describeMismatch(expected, result);
    return `${result.ok ? 'ok  ' : 'FAIL'} tests[${index}] ${result.name}: ${outcome}`;
  });
  lines.push(`${passed} passed, ${failed} failed.`);
  return { text: lines.join('\n'), json: { passed, failed, results }, exitCode: failed > 0 ? 1 : 0 };
}

/** The context's rules file: live rules (or what a publish would make live, `draft`), payload schema and stored tests. */
export async function exportFile(tenantId: string, context: string, draft: boolean, storage: Storage): Promise<RulesFile> {
  let rulesets;
  try {
    rulesets = await storage.history.rulesets(tenantId, context, draft ? ['live', 'draft'] : ['live']);
  } catch (error) {
    if (error instanceof ContextNotFoundError) throw new CommandError(`context ${context} of tenant ${tenantId} has no rules`);
    throw error;
  }
  const [live, fromDraft] = rulesets;
  if (!draft && live.rulesetVersion === null) throw new CommandError(`context ${context} of tenant ${tenantId} has no published rules (use --draft)`);
  const [schema, tests] = await Promise.all([storage.payloadSchemas.get(tenantId, context), storage.tests.list(tenantId, context)]);
  return toRulesFile(context, live.rulesetVersion, (fromDraft ?? live).rules, schema?.schema ?? null, tests);
}

async function importFile(command: Extract<FileCommand, { kind: 'import' }>, storage: Storage, config: Config) {
  const { tenantId, context } = command;
  const file = await readRulesFile(command.file);
  if (file.rules.length > config.maxRulesPerContext) {
    throw new CommandError(`the file has ${file.rules.length} rules, a context may have at most ${config.maxRulesPerContext}`);
  }
  const checked = checkRulesFile(file, config);
  if (!checked.ok) throw new CommandError(`${command.file} was not imported:\n${describeErrors(checked.errors)}`);
  const { plan } = checked;
  const options = { dryRun: command.dryRun, prune: command.prune, publish: command.publish, maxRulesPerContext: config.maxRulesPerContext };
  const info: ChangeInfo = { actorKeyId: null, note: null, origin: { actor: { cli: true } } };
  // Read before the transaction: on the embedded database the transaction holds the one connection.
  const tests = plan.tests ?? (await storage.tests.list(tenantId, context));
  const gate = storedTestsGate({ list: () => Promise.resolve(tests) }, runStoredTestsHere(config), command.force);
  const { result } = await storage.rules.importContext(tenantId, context, { plan }, options, async (next) => {
    const validator = await compiled(next, config);
    await gate.check(validator);
    return validator;
  }, gate.info(info));
  const stored = await storage.payloadSchemas.get(tenantId, context);
  const schema = await warningSchemaOf(plan, () => Promise.resolve(stored === null ? undefined : new PayloadSchema(stored.schema)));
  return { ...result, warnings: rulesFileWarnings(plan, schema, config.maxExpressionLength) };
}

/** The ruleset's validator; CommandError naming each rule that does not compile. */
export async function compiled(ruleset: LiveRuleset, config: Config): Promise<CompiledValidator> {
  const { validator, errors } = await compileValidator(ruleset, { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows });
  if (validator !== undefined) return validator;
  throw new CommandError(`the rules do not compile:\n${describeErrors(rulesetCompileErrors(errors))}`);
}
