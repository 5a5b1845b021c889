/**
 * `bench` (docs/operations.md, "What each rule costs"): a rules file's, or
 * a context's, validator timed by tinybench over its tests' payloads (or a
 * context's recorded samples), and each rule's share of the time
 * (rule-costs.ts). The rules are compiled here by the same compiler and
 * checks as `test FILE`; a context's come from its export, read on the
 * database or, with --url, through GET …/export.
 */
import type { Config } from '../config.ts';
import type { IncomingRulesFile, RulesFile } from '../rules/rules-file.ts';
import type { Storage } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import { CommandError } from './cli-errors.ts';
import { exportFile } from './file-commands.ts';
import { formatTable } from './format-table.ts';
import { compileRulesFile } from './offline-test.ts';
import type { Command } from './parse-command.ts';
import { measureRuleCosts, tinybenchVersion, type Figures, type RuleCostReport } from './rule-costs.ts';
import { describeErrors, readRulesFile } from './rules-file-io.ts';
import type { CommandOutput } from './run-command.ts';
import { request, type Remote } from './service-request.ts';

export type BenchFileCommand = Extract<Command, { kind: 'bench' }>;
export type BenchContextCommand = Extract<Command, { kind: 'bench-context' }>;

/** What was measured, as the report names it. */
type BenchSource =
  | { kind: 'file'; file: string }
  | { kind: 'context'; tenantId: string; context: string; ruleset: 'live' | 'draft'; rulesetVersion: number | null };

/** The payloads validated: the tests', or the newest recorded samples. */
interface Payloads {
  from: 'tests' | 'samples';
  values: unknown[];
}

/** `bench FILE`: offline, over the file's tests' payloads. */
export async function benchFile(command: BenchFileCommand, config: Config): Promise<CommandOutput> {
  const file = await readRulesFile(command.file);
  const payloads: Payloads = { from: 'tests', values: (file.tests ?? []).map((test) => test.payload) };
  return benchRules(file, { kind: 'file', file: command.file }, payloads, command, config);
}

/** `bench <tenant> <context>` on the database: its stored tests' payloads, or its newest samples with --samples. */
export async function benchContext(command: BenchContextCommand, storage: Storage, config: Config): Promise<CommandOutput> {
  const file = await exportFile(command.tenantId, command.context, command.draft, storage);
  const payloads: Payloads = command.samples === undefined
    ? { from: 'tests', values: file.tests.map((test) => test.payload) }
    : { from: 'samples', values: await newestSamples(command, storage) };
  return benchRules(file, contextSource(command, file), payloads, command, config);
}

/** `bench <tenant> <context> --url`: the context's rules file from the service (GET …/export), its stored tests' payloads. */
export async function benchRemoteContext(command: BenchContextCommand, remote: Remote, config: Config): Promise<CommandOutput> {
  const path = `/api/v1/contexts/${encodeURIComponent(command.context)}/export${command.draft ? '?from=draft' : ''}`;
  const file = await request<RulesFile>(remote, command.tenantId, 'GET', path);
  const payloads: Payloads = { from: 'tests', values: file.tests.map((test) => test.payload) };
  return benchRules(file, contextSource(command, file), payloads, command, config);
}

function contextSource(command: BenchContextCommand, file: RulesFile): BenchSource {
  return { kind: 'context', tenantId: command.tenantId, context: command.context, ruleset: command.draft ? 'draft' : 'live', rulesetVersion: file.rulesetVersion };
}

/** The context's newest recorded samples, a page at a time as impact reads them. */
async function newestSamples(command: BenchContextCommand, storage: Storage): Promise<unknown[]> {
  const wanted = command.samples ?? 0;
  const payloads: unknown[] = [];
  let before: Parameters<Storage['samples']['newestBefore']>[3];
  while (payloads.length < wanted) {
    const page = await storage.samples.newestBefore(
      command.tenantId, command.context, Math.min(wanted - payloads.length, TUNING.impactSamplesPerRead.value), before, TUNING.impactBytesPerRead.value,
    );
    if (page.length === 0) break;
    for (const sample of page) payloads.push(sample.payload);
    before = page.at(-1);
  }
  return payloads;
}

async function benchRules(
  file: IncomingRulesFile, source: BenchSource, payloads: Payloads, command: BenchFileCommand | BenchContextCommand, config: Config,
): Promise<CommandOutput> {
  const name = sourceName(source);
  const compiled = await compileRulesFile(file, config);
  if (!compiled.ok) {
    return {
      text: `${name} does not compile; nothing was measured:\n${describeErrors(compiled.errors)}`,
      json: { errors: compiled.errors },
      exitCode: 1,
    };
  }
  if (payloads.values.length === 0) throw new CommandError(nothingToTime(name, source, payloads.from));
  const rules = compiled.ruleset.rules;
  if (!rules.some((rule) => rule.enabled !== false)) throw new CommandError(`${name} has no enabled rule: nothing to measure`);
  const limits = { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows };
  const report = await measureRuleCosts(rules, payloads.values, { taskMs: command.timeMs, top: command.top, limits });
  const document: BenchDocument = {
    source,
    payloads: { from: payloads.from, count: payloads.values.length, validationsPerPass: report.validationsPerPass },
    rules: rules.filter((rule) => rule.enabled !== false).length,
    runtime: { node: process.version, tinybench: await tinybenchVersion(), taskMs: report.taskMs },
    validator: report.validator,
    baselines: report.baselines,
    noiseUs: report.noiseUs,
    shares: report.rules,
    shareSum: report.shareSum,
    unmeasured: report.unmeasured,
    screened: report.screened,
  };
  return { text: benchText(document, name, command.top), json: document };
}

/** What `bench --json` prints (docs/operations.md documents each field). */
export interface BenchDocument {
  source: BenchSource;
  payloads: { from: Payloads['from']; count: number; validationsPerPass: number };
  /** Enabled rules: those the validator runs. */
  rules: number;
  runtime: { node: string; tinybench: string; taskMs: number };
  validator: Figures;
  baselines: RuleCostReport['baselines'];
  noiseUs: number;
  shares: RuleCostReport['rules'];
  shareSum: number;
  unmeasured: string[];
  screened: RuleCostReport['screened'];
}

function nothingToTime(name: string, source: BenchSource, from: Payloads['from']): string {
  if (from === 'samples') return `${name} has no recorded samples (sampling is set with PUT /api/v1/tenant/sampling)`;
  const samples = source.kind === 'context' ? ' (or, on the database, over recorded samples with --samples N)' : '';
  return `${name} has no tests: bench times the validator over the tests' payloads${samples}`;
}

function sourceName(source: BenchSource): string {
  if (source.kind === 'file') return source.file;
  const version = source.ruleset === 'live' ? `live rules, version ${source.rulesetVersion ?? '-'}` : 'draft rules';
  return `context ${source.context} of tenant ${source.tenantId} (${version})`;
}

/** The report for a person: the validator's time, then each rule's share, largest first. */
function benchText(document: BenchDocument, name: string, top: number): string {
  const { payloads, validator, runtime } = document;
  const what = payloads.from === 'tests' ? `the payloads of its ${payloads.count} test(s)` : `its ${payloads.count} newest recorded sample(s)`;
  const lines = [
    `Benchmark of ${name}: ${document.rules} rule(s), over ${what}; a pass validates ${payloads.validationsPerPass} payloads.`,
    `tinybench ${runtime.tinybench} on node ${runtime.node}, ${runtime.taskMs} ms per task.`,
    '',
    'Time per validation, all rules (per pass divided by the validations in it):',
    formatTable(['MEAN', 'MEDIAN', 'P99', 'OPS/S', 'SAMPLES', 'RME'], [figureCells(validator)]),
    `tinybench per pass: mean ${fixed(validator.tinybench.meanMs, 4)} ms, p99 ${fixed(validator.tinybench.p99Ms, 4)} ms, ${whole(validator.tinybench.hz)} ops/s`
    + ` (the mean of ${document.baselines.length} runs, whose means were ${micro(Math.min(...document.baselines.map((run) => run.meanUs)))}`
    + ` to ${micro(Math.max(...document.baselines.map((run) => run.meanUs)))}).`,
    '',
    'Each rule\'s share: what the validator saves without it, of all rules\' median time in the runs just before and after.',
    trimLines(formatTable(['RULE', 'SHARE', 'SAVES', 'ALL RULES', 'WITHOUT IT', ''], document.shares.map((cost) => [
      cost.code, `${fixed(cost.share * 100, 1)}%`, micro(cost.savedUs), micro(cost.allUs), micro(cost.without.medianUs),
      cost.withinNoise ? 'within noise' : cost.savedUs < 0 ? 'slower without it: noise' : '',
    ]))),
    `The shares add up to ${fixed(document.shareSum * 100, 1)}%; the rest is what every validation pays whatever its rules, and noise.`,
    `Run-to-run noise: ±${micro(document.noiseUs)} (from the ${document.baselines.length} runs of all rules); a smaller saving is within noise.`,
  ];
  if (document.unmeasured.length > 0) {
    lines.push(`${document.unmeasured.length} rule(s) not measured (--top ${top}): the ${top} costliest alone were; --json lists every rule's time alone.`);
  }
  return lines.join('\n');
}

/** The last column is often empty: no blanks left at the ends of lines. */
function trimLines(text: string): string {
  return text.split('\n').map((line) => line.trimEnd()).join('\n');
}

function figureCells(figures: Figures): string[] {
  return [micro(figures.meanUs), micro(figures.medianUs), micro(figures.p99Us), whole(figures.opsPerSecond), String(figures.samples), `±${fixed(figures.rmePercent, 1)}%`];
}

function micro(us: number): string {
  return `${fixed(us, 3)} µs`;
}

function fixed(value: number, digits: number): string {
  return value.toFixed(digits);
}

function whole(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
