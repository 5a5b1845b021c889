/**
 * The impact report's replay on a management thread (POST
 * /contexts/{context}/impact): both rulesets compiled there, and the
 * context's newest samples replayed a page at a time. The thread asks the
 * main thread for each page over `pages` (the main thread reads the
 * database), so neither thread ever holds more than two pages. The pages
 * come as the payloads' JSON text, parsed here.
 */
import type { MessagePort } from 'node:worker_threads';
import type { CompilerLimits } from '../../../compiler/types.ts';
import { ProblemError, PROBLEMS } from '../../errors.ts';
import {
  ImpactReplay, replayInPages, ReplayBudgetExceededError, type ImpactReport, type ReplayLimits, type ReplaySample,
} from '../../rules/impact-report.ts';
import type { LiveRuleset, RulesetText, SampleCursor, SampleText } from '../../storage/types.ts';
import { OPERATIONS } from '../operations.ts';
import { reportItems, type TaskProgress } from '../task-progress.ts';
import { compileForTask } from './compile-for-task.ts';
import { rulesetOf } from './stored-rules.ts';

export interface ImpactInput {
  context: string;
  /** What is live, as the database's JSON text (stored-rules.ts); null when nothing is (every sample passes live). */
  live: LiveRuleset | RulesetText | null;
  /** What it is compared with; null when that is the live ruleset itself. */
  target: LiveRuleset | null;
  /** Samples to replay at most, newest first, and how many a page holds. */
  limit: number;
  pageSize: number;
  limits: ReplayLimits;
  compilerLimits: Partial<CompilerLimits>;
  /** Where pages are asked for (SamplePageRequest) and come from (SamplePageAnswer). */
  pages: MessagePort;
}

/** A page asked of the main thread: `count` samples recorded before `before`. */
export interface SamplePageRequest {
  count: number;
  before?: SampleCursor;
}

/** Its answer: the page, or that it could not be read (the main thread keeps the error). */
export type SamplePageAnswer = { ok: true; page: SampleText[] } | { ok: false };

/**
 * The report; a ProblemError when a ruleset does not compile or the replay
 * ran out of its time budget.
 *
 * @example
 * await runImpactTask({ context: 'loans', live, target: draft, limit: 10_000, pageSize: 1000, limits, compilerLimits, pages: port });
 */
export async function runImpactTask(input: ImpactInput, progress?: TaskProgress): Promise<ImpactReport> {
  try {
    const { context, limits } = input;
    const live = input.live === null ? null : (await compileForTask(rulesetOf(input.live), input.compilerLimits, { context })).validator;
    const target = input.target === null ? live! : (await compileForTask(input.target, input.compilerLimits, { context })).validator;
    const replay = new ImpactReplay({ live, target }, limits, Date.now());
    let asked = 0;
    const read = (count: number, before?: ReplaySample): Promise<ReplaySample[]> => {
      reportItems(progress, asked, input.limit);
      asked += count;
      return askForPage(input.pages, { count, ...(before === undefined ? {} : { before: { id: before.id, recordedAt: before.recordedAt } }) });
    };
    try {
      await replayInPages(replay, read, input.limit, input.pageSize);
    } catch (error) {
      if (!(error instanceof ReplayBudgetExceededError)) throw error;
      const { name, path } = OPERATIONS.impactReport;
      throw new ProblemError(PROBLEMS.operationOverTimeBudget(name, error.budgetMs, `after ${error.replayed} samples`, path));
    }
    return replay.report();
  } finally {
    input.pages.close();
  }
}

function askForPage(port: MessagePort, request: SamplePageRequest): Promise<ReplaySample[]> {
  return new Promise((resolve, reject) => {
    port.once('message', (answer: SamplePageAnswer) => {
      if (answer.ok) resolve(answer.page.map(({ id, recordedAt, payloadText }) => ({ id, recordedAt, payload: JSON.parse(payloadText) as unknown })));
      else reject(new Error('the samples could not be read'));
    });
    port.postMessage(request);
  });
}
