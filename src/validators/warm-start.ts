/**
 * The warm start: before a process serves, it compiles the validators most
 * likely to be asked for, so that no request after it is ready pays for a
 * compile. Which ones: the contexts every instance used most recently
 * (usage-recorder.ts writes when), then those never used, newest publish
 * first; as many as the validator cache holds without evicting any, within
 * a time budget (WARM_START_MS). Compiles run one at a time on the compile
 * lane (src/pool/compile-lane.ts), ahead of lifecycle compiles, like
 * any cache miss.
 *
 * A compile still running when the budget ends is not waited for: it
 * finishes in the background and its validator is kept if it fits.
 * Nothing here fails the start: a context that no longer compiles is
 * skipped, and a database that stops answering ends the warm-up early.
 */
import { RulesetInvalidError, RulesetOverLimitError } from '../domain-errors.ts';
import type { ContextRef, ContextUsageStore } from '../storage/types.ts';
import type { ValidatorCache } from './validator-cache.ts';

export interface WarmStartLogger {
  info(o: object, msg?: string): void;
  warn(o: object, msg?: string): void;
}

export interface WarmStartOptions {
  validators: Pick<ValidatorCache, 'preload'>;
  usage: Pick<ContextUsageStore, 'likelyUsed'>;
  /** Most contexts to consider: the cache's entry bound. */
  maxContexts: number;
  /** Time the warm-up may take; 0 turns it off. */
  budgetMs: number;
  log: WarmStartLogger;
}

/** Why the warm-up ended. */
export type WarmStartEnd = 'done' | 'full' | 'budget' | 'error' | 'off';

/** What the warm-up did (logged, and returned for tests and the benchmark). */
export interface WarmStartReport {
  /** Validators compiled and cached. */
  compiled: number;
  /** Contexts left out: they no longer compile, or have no ruleset any more. */
  skipped: number;
  /** Contexts the warm-up considered. */
  candidates: number;
  ended: WarmStartEnd;
  durationMs: number;
}

const OUT_OF_TIME = Symbol('out of time');

/**
 * Runs the warm-up; resolves when it is over (never rejects).
 *
 * @example
 * await warmStart({ validators, usage: storage.usage, maxContexts: 1000, budgetMs: 15_000, log: app.log });
 */
export async function warmStart(options: WarmStartOptions): Promise<WarmStartReport> {
  const started = performance.now();
  const report: WarmStartReport = { compiled: 0, skipped: 0, candidates: 0, ended: 'done', durationMs: 0 };
  if (options.budgetMs === 0) {
    report.ended = 'off';
    return report;
  }
  const deadline = started + options.budgetMs;
  const finish = (ended: WarmStartEnd): WarmStartReport => {
    report.ended = ended;
    report.durationMs = performance.now() - started;
    options.log.info({ warmStart: report }, `warm start: ${report.compiled} validators compiled before serving`);
    return report;
  };

  let candidates: ContextRef[] | typeof OUT_OF_TIME;
  try {
    candidates = await beforeDeadline(options.usage.likelyUsed(options.maxContexts), deadline);
  } catch (err) {
    options.log.warn({ err }, 'warm start: could not read which contexts to compile; starting cold');
    return finish('error');
  }
  if (candidates === OUT_OF_TIME) return finish('budget');
  report.candidates = candidates.length;

  for (const { tenantId, context } of candidates) {
    if (performance.now() >= deadline) return finish('budget');
    let outcome: Awaited<ReturnType<ValidatorCache['preload']>> | typeof OUT_OF_TIME;
    try {
      outcome = await beforeDeadline(options.validators.preload(tenantId, context), deadline);
    } catch (err) {
      if (isCompileRefusal(err)) {
        // Published under other limits than this process has; a request will say so.
        options.log.warn({ err, tenant: tenantId, context }, 'warm start: a published ruleset does not compile; skipped');
        report.skipped++;
        continue;
      }
      options.log.warn({ err, tenant: tenantId, context }, 'warm start: could not load a context; starting with what is compiled');
      return finish('error');
    }
    if (outcome === OUT_OF_TIME) return finish('budget');
    if (outcome === 'full') return finish('full');
    if (outcome === 'loaded') report.compiled++;
    else if (outcome === 'none') report.skipped++;
  }
  return finish('done');
}

/** The promise's value, or OUT_OF_TIME at the deadline; a rejection after the deadline is dropped. */
async function beforeDeadline<T>(work: Promise<T>, deadline: number): Promise<T | typeof OUT_OF_TIME> {
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<typeof OUT_OF_TIME>((resolve) => {
    timer = setTimeout(() => resolve(OUT_OF_TIME), Math.max(0, deadline - performance.now()));
  });
  try {
    return await Promise.race([work, timeUp]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {});
  }
}

/** A ruleset refused by the compiler, not a failure to reach the database. */
function isCompileRefusal(error: unknown): boolean {
  return error instanceof RulesetInvalidError || error instanceof RulesetOverLimitError;
}
