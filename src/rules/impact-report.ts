/**
 * The impact report (docs/api.md, "Impact on recorded traffic"): recorded
 * samples replayed against the live ruleset and a target ruleset, and the
 * differences counted. Pure: compiled validators and samples in, the report
 * out; the route reads the samples and compiles the target.
 *
 * Each payload is evaluated as a validation evaluates it: the payload guard
 * measures it, and the cost model decides whether it runs under the
 * evaluation deadline (validators/evaluation-cost.ts, evaluation-deadline.ts).
 * A payload a ruleset cannot answer (stopped at the deadline, failing rules
 * too many times, deeper than the depth limit) counts as invalid with no
 * failing rule code, since a validation of it would be refused. The whole
 * replay also has a budget of evaluation time, so that many slow samples
 * cannot hold the process either: past it the report is refused, naming
 * `limit`.
 */
import { TooManyFailuresError } from '../../compiler/index.ts';
import type { FailureRecord } from '../../compiler/types.ts';
import type { CompiledValidator } from '../validators/compiled-validator.ts';
import { checkPayload, sizeOf, type PayloadSize } from '../http/payload-guard.ts';
import { costProfileOf, estimateCost, type CostProfile } from '../validators/evaluation-cost.ts';
import { EvaluationTimeoutError, runWithDeadline, UNGUARDED_COST_LIMIT } from '../validators/evaluation-deadline.ts';
import { runInSlices } from '../time-slices.ts';

/** What one ruleset answered for one payload: whether it passed, and the codes of the rules that failed, each once. */
export interface Verdict {
  isValid: boolean;
  failures: string[];
}

/** A recorded sample as the replay needs it. */
export interface ReplaySample {
  id: string;
  recordedAt: Date;
  payload: unknown;
}

/** One sample whose verdict changed. */
export interface ImpactExample {
  sampleId: string;
  /** ISO-8601. */
  recordedAt: string;
  live: Verdict;
  target: Verdict;
}

/** Per rule code: samples it fails under the target but not live, and the reverse. */
export interface RuleImpact {
  ruleCode: string;
  newFailures: number;
  resolvedFailures: number;
}

/** The report. `unchanged + becameInvalid + becameValid + failuresChanged === samples`. */
export interface ImpactReport {
  samples: number;
  unchanged: number;
  becameInvalid: number;
  becameValid: number;
  failuresChanged: number;
  byRule: RuleImpact[];
  examples: ImpactExample[];
}

/** The two rulesets compared. `live` null: nothing is published, every payload passes. */
export interface ImpactRulesets {
  live: CompiledValidator | null;
  target: CompiledValidator;
}

export interface ReplayLimits {
  maxPayloadDepth: number;
  /** Longest any one evaluation may run (EVALUATION_DEADLINE_MS's tunable). */
  evaluationDeadlineMs: number;
  /** Evaluation time the whole replay may take. */
  budgetMs: number;
}

/** Examples kept of each kind of change. */
export const EXAMPLES_PER_KIND = 20;

/** Thrown when the replay used up its budget of evaluation time. */
export class ReplayBudgetExceededError extends Error {
  constructor(readonly budgetMs: number, readonly replayed: number) {
    super(`replaying took longer than ${budgetMs} ms after ${replayed} samples`);
    this.name = 'ReplayBudgetExceededError';
  }
}

type ChangeKind = 'unchanged' | 'becameInvalid' | 'becameValid' | 'failuresChanged';

const NOTHING_LIVE: Verdict = Object.freeze({ isValid: true, failures: Object.freeze([]) as unknown as string[] });
const REFUSED: Verdict = Object.freeze({ isValid: false, failures: Object.freeze([]) as unknown as string[] });

/**
 * The report of `samples` (newest first), computed at once.
 *
 * @example
 * const report = replayImpact(samples, { live, target: draft }, limits, Date.now());
 * // { samples: 3, unchanged: 2, becameInvalid: 1, ..., byRule: [{ ruleCode: 'MAX_AMOUNT', newFailures: 1, resolvedFailures: 0 }] }
 */
export function replayImpact(samples: Iterable<ReplaySample>, rulesets: ImpactRulesets, limits: ReplayLimits, now: number): ImpactReport {
  const replay = new ImpactReplay(rulesets, limits, now);
  const steps = replay.steps(samples);
  while (steps.next().done !== true) {
    // One sample a step.
  }
  return replay.report();
}

/**
 * A replay fed samples a page at a time, newest first, one sample a step,
 * so the caller can read the next page meanwhile and give the event loop a
 * turn between slices (time-slices.ts `runInSlices`).
 *
 * @example
 * const replay = new ImpactReplay({ live, target }, limits, Date.now());
 * for (const page of pages) await runInSlices(replay.steps(page));
 * replay.report();
 */
export class ImpactReplay {
  readonly #tally = new ImpactTally();
  readonly #live: { validator: CompiledValidator; profile: CostProfile } | null;
  readonly #target: { validator: CompiledValidator; profile: CostProfile };
  /** One ruleset on both sides (the target is what is live): evaluated once. */
  readonly #same: boolean;
  readonly #limits: ReplayLimits;
  readonly #now: number;
  #spentMs = 0;

  constructor(rulesets: ImpactRulesets, limits: ReplayLimits, now: number) {
    this.#live = rulesets.live === null ? null : { validator: rulesets.live, profile: costProfileOf(rulesets.live) };
    this.#target = { validator: rulesets.target, profile: costProfileOf(rulesets.target) };
    this.#same = rulesets.live === rulesets.target;
    this.#limits = limits;
    this.#now = now;
  }

  /** Replays the next samples; throws ReplayBudgetExceededError once the replay has spent its budget. */
  *steps(samples: Iterable<ReplaySample>): Generator<void, void, void> {
    const limits = this.#limits;
    for (const sample of samples) {
      const started = performance.now();
      const size: PayloadSize = { values: 0, characters: 0 };
      const fits = checkPayload(sample.payload, 'payload', limits.maxPayloadDepth, size) === undefined;
      const clock: Clock = {
        deadlineMs: limits.evaluationDeadlineMs, budgetMs: limits.budgetMs, remainingMs: limits.budgetMs - this.#spentMs, replayed: this.#tally.samples,
      };
      const steps = sizeOf(size);
      let liveVerdict = REFUSED;
      let targetVerdict = REFUSED;
      if (fits) {
        const live = this.#live;
        liveVerdict = live === null ? NOTHING_LIVE : verdictOf(live.validator, estimateCost(live.profile, steps), sample.payload, this.#now, clock);
        const target = this.#target;
        targetVerdict = this.#same ? liveVerdict : verdictOf(target.validator, estimateCost(target.profile, steps), sample.payload, this.#now, clock);
      }
      this.#tally.add(sample, liveVerdict, targetVerdict);
      this.#spentMs += performance.now() - started;
      if (this.#spentMs > limits.budgetMs) throw new ReplayBudgetExceededError(limits.budgetMs, this.#tally.samples);
      yield;
    }
  }

  /** The report of every sample replayed so far. */
  report(): ImpactReport {
    return this.#tally.report();
  }
}

/** Reads at most `limit` samples recorded before `before` (all from the newest when absent), newest first. */
export type SamplePageReader = (limit: number, before?: ReplaySample) => Promise<ReplaySample[]>;

/**
 * Feeds the replay the newest `limit` samples a page of `pageSize` at a
 * time, reading the next page while one is replayed, and replaying in
 * slices of time so other work gets turns; `first` is the first page, read
 * already. Never holds more than two pages. A page may come back shorter
 * than asked (the reader bounds its bytes), so only an empty page ends the
 * samples before `limit`.
 *
 * @example
 * await replayInPages(replay, (limit, before) => storage.samples.newestBefore(tenantId, context, limit, before), 10_000, 1000);
 */
export async function replayInPages(replay: ImpactReplay, read: SamplePageReader, limit: number, pageSize: number, first?: ReplaySample[]): Promise<void> {
  let left = limit;
  for (let page = first ?? (await read(Math.min(left, pageSize))); page.length > 0;) {
    left -= page.length;
    const more = left > 0;
    const next = more ? read(Math.min(left, pageSize), page.at(-1)) : Promise.resolve([]);
    // Its failure is met when it is awaited below, or not at all when the replay fails first.
    next.catch(() => undefined);
    await runInSlices(replay.steps(page));
    page = await next;
  }
}

/** The time one evaluation may take: its own deadline, and what is left of the replay's budget. */
interface Clock {
  deadlineMs: number;
  budgetMs: number;
  remainingMs: number;
  replayed: number;
}

/** A ruleset's verdict on one payload, under the deadline when its cost could be large. */
function verdictOf(validator: CompiledValidator, cost: number, payload: unknown, now: number, clock: Clock): Verdict {
  if (cost <= UNGUARDED_COST_LIMIT) {
    try {
      return verdictFrom(validator.validate(payload, now));
    } catch (error) {
      if (error instanceof TooManyFailuresError) return REFUSED;
      throw error;
    }
  }
  // The budget left caps the deadline: one slow sample cannot run past it.
  const deadlineMs = Math.max(1, Math.min(clock.deadlineMs, Math.ceil(clock.remainingMs)));
  try {
    return verdictFrom(runWithDeadline(() => validator.validate(payload, now), deadlineMs));
  } catch (error) {
    if (error instanceof EvaluationTimeoutError) {
      if (deadlineMs < clock.deadlineMs) throw new ReplayBudgetExceededError(clock.budgetMs, clock.replayed);
      return REFUSED;
    }
    if (error instanceof TooManyFailuresError) return REFUSED;
    throw error;
  }
}

function verdictFrom(result: { isValid: boolean; failures: FailureRecord[] }): Verdict {
  return { isValid: result.isValid, failures: codesOf(result.failures) };
}

/** The codes of failing rules, each once, in the order failures are reported. */
function codesOf(failures: readonly FailureRecord[]): string[] {
  const codes: string[] = [];
  for (const failure of failures) if (!codes.includes(failure.ruleCode)) codes.push(failure.ruleCode);
  return codes;
}

/** The counts as samples are added. */
class ImpactTally {
  samples = 0;
  readonly #counts: Record<ChangeKind, number> = { unchanged: 0, becameInvalid: 0, becameValid: 0, failuresChanged: 0 };
  readonly #byRule = new Map<string, RuleImpact>();
  readonly #examples: Record<Exclude<ChangeKind, 'unchanged'>, ImpactExample[]> = { becameInvalid: [], becameValid: [], failuresChanged: [] };

  add(sample: ReplaySample, live: Verdict, target: Verdict): void {
    this.samples++;
    const kind = changeOf(live, target);
    this.#counts[kind]++;
    if (kind === 'unchanged') return;
    for (const code of target.failures) if (!live.failures.includes(code)) this.#rule(code).newFailures++;
    for (const code of live.failures) if (!target.failures.includes(code)) this.#rule(code).resolvedFailures++;
    const examples = this.#examples[kind];
    if (examples.length < EXAMPLES_PER_KIND) {
      examples.push({ sampleId: sample.id, recordedAt: sample.recordedAt.toISOString(), live, target });
    }
  }

  report(): ImpactReport {
    // The rules that moved most first; ties by code, so the order is stable.
    const byRule = [...this.#byRule.values()].sort((a, b) =>
      b.newFailures + b.resolvedFailures - (a.newFailures + a.resolvedFailures) || (a.ruleCode < b.ruleCode ? -1 : a.ruleCode > b.ruleCode ? 1 : 0));
    const { becameInvalid, becameValid, failuresChanged } = this.#examples;
    return {
      samples: this.samples,
      ...this.#counts,
      byRule,
      examples: [...becameInvalid, ...becameValid, ...failuresChanged],
    };
  }

  #rule(code: string): RuleImpact {
    let entry = this.#byRule.get(code);
    if (entry === undefined) {
      entry = { ruleCode: code, newFailures: 0, resolvedFailures: 0 };
      this.#byRule.set(code, entry);
    }
    return entry;
  }
}

/** How the verdict moved: a sample invalid under both counts as changed only when its set of failing codes differs. */
function changeOf(live: Verdict, target: Verdict): ChangeKind {
  if (live.isValid) return target.isValid ? 'unchanged' : 'becameInvalid';
  if (target.isValid) return 'becameValid';
  const sameSet = live.failures.length === target.failures.length && live.failures.every((code) => target.failures.includes(code));
  return sameSet ? 'unchanged' : 'failuresChanged';
}
