/**
 * The CLI's `impact` (docs/operations.md): the impact report of a context's
 * draft or a numbered version on its recorded samples, computed on the
 * database directly with the same replay as the API
 * (src/rules/impact-report.ts), or fetched from a service with --url and
 * --key (remote-file-commands.ts), and printed for a person to read.
 */
import type { Config } from '../config.ts';
import { ImpactReplay, ReplayBudgetExceededError, replayInPages, type ImpactReport, type Verdict } from '../rules/impact-report.ts';
import { impactTargetRuleset } from '../rules/impact-target.ts';
import { NotFoundError, type LiveRuleset, type SampleCursor, type Storage } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import { CommandError } from './cli-errors.ts';
import { compiled } from './file-commands.ts';
import { formatTable } from './format-table.ts';
import type { Command } from './parse-command.ts';
import type { CommandOutput } from './run-command.ts';

export type ImpactCommand = Extract<Command, { kind: 'impact' }>;

/** Runs `impact` on the database. */
export async function runImpactCommand(command: ImpactCommand, storage: Storage, config: Config): Promise<CommandOutput> {
  const { tenantId, context } = command;
  const liveRuleset = await storage.rules.liveRuleset(tenantId, context);
  const live = liveRuleset === null ? null : await compiled(liveRuleset, config);
  let targetRuleset: LiveRuleset | null;
  try {
    targetRuleset = await impactTargetRuleset(storage, tenantId, context, command.target, live?.rulesetVersion ?? null);
  } catch (error) {
    if (error instanceof NotFoundError) throw new CommandError(`${error.message} (tenant ${tenantId})`);
    throw error;
  }
  const target = targetRuleset === null ? live! : await compiled(targetRuleset, config);
  const limits = {
    maxPayloadDepth: config.maxPayloadDepth, evaluationDeadlineMs: TUNING.evaluationDeadlineMs.value, budgetMs: TUNING.impactReplayBudgetMs.value,
  };
  const replay = new ImpactReplay({ live, target }, limits, Date.now());
  const read = (count: number, before?: SampleCursor) =>
    storage.samples.newestBefore(tenantId, context, count, before, TUNING.impactBytesPerRead.value);
  // As the API's report: at most the context's maxSamples newest, even before the sweep drops the rest.
  const { maxSamples } = await storage.tenants.getSampling(tenantId);
  try {
    await replayInPages(replay, read, Math.min(command.limit, maxSamples), TUNING.impactSamplesPerRead.value);
  } catch (error) {
    if (error instanceof ReplayBudgetExceededError) throw new CommandError(`${error.message}; ask for fewer with --limit`);
    throw error;
  }
  return reported(command, replay.report());
}

/** What `impact` prints: the counts, the rules that moved, and the examples with their sample ids. */
export function reported(command: ImpactCommand, report: ImpactReport): CommandOutput {
  const target = command.target === 'draft' ? 'the draft' : `version ${command.target}`;
  const lines = [`Impact of ${target} of context ${command.context} on its ${report.samples} newest sample(s), compared with the live rules:`];
  if (report.samples === 0) {
    lines.push('No samples are recorded for this context (sampling is set with PUT /api/v1/tenant/sampling).');
    return { text: lines.join('\n'), json: report };
  }
  lines.push(formatTable(['', 'SAMPLES'], [
    ['unchanged', String(report.unchanged)],
    ['became invalid', String(report.becameInvalid)],
    ['became valid', String(report.becameValid)],
    ['failures changed', String(report.failuresChanged)],
  ]));
  if (report.byRule.length > 0) {
    lines.push('', formatTable(['RULE', 'NEW FAILURES', 'RESOLVED FAILURES'], report.byRule.map((rule) => [
      rule.ruleCode, String(rule.newFailures), String(rule.resolvedFailures),
    ])));
  }
  if (report.examples.length > 0) {
    lines.push('', formatTable(['SAMPLE', 'RECORDED', 'LIVE', 'TARGET'], report.examples.map((example) => [
      example.sampleId, example.recordedAt, verdictText(example.live), verdictText(example.target),
    ])));
  }
  return { text: lines.join('\n'), json: report };
}

function verdictText(verdict: Verdict): string {
  return verdict.isValid ? 'valid' : `invalid (${verdict.failures.join(', ') || 'no rule'})`;
}
