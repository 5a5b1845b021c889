/**
 * The isolation targets and their verdict, kept pure so that the verdict
 * itself is tested (test/bench/isolation-verdict.test.ts): what the quiet
 * tenant (B) saw during one phase, what the noisy tenant's (A's) calls got,
 * and which target each phase met or missed, in words.
 */
import { fixed, int } from '../tools/report-table.ts';
import type { ManagementAnswer } from './management-call.ts';

/** The targets of `npm run bench:isolation` (bench/README.md, "Isolation"). */
export const isolationTargets = {
  /** B's p99 during a phase, at most this multiple of its idle p99. */
  maxP99ToIdle: 2,
  /** B's worst request during any phase, strictly under this. */
  maxWorstMs: 100,
  /**
   * Each of A's calls answers within this (a 4xx is fine, a 5xx never is):
   * the default budget of a heavy operation is of the order of 10 s, and
   * a call may wait for its tenant's earlier ones.
   */
  maxAnswerMs: 30_000,
} as const;

export type IsolationTargets = typeof isolationTargets;

/** What B saw during one phase. */
export interface QuietFigures {
  /** Answers received. */
  requests: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers by status code. */
  statuses: Record<string, number>;
  /** 2xx answers without RateLimit headers: passed without being counted. */
  uncounted: number;
  /** The load generator's own lateness (not counted in the latencies), worst case. */
  dispatchLagMaxMs: number;
  /** Set when B's load could not finish (a connection closed, answers never came). */
  error?: string;
}

/** A's calls of one operation during a phase, summed up. */
export interface OperationFigures {
  operation: string;
  calls: number;
  /** Answers by status code, `0` for none. */
  statuses: Record<string, number>;
  /** The problem codes of the 4xx and 5xx answers, each once. */
  codes: string[];
  maxMs: number;
  totalMs: number;
  /** 2xx answers without RateLimit headers. */
  uncounted: number;
  /** The largest answer, bytes. */
  maxBytes: number;
  /** 4xx answers that were not problem+json with a code. */
  unclear: number;
  /** Calls answered after the target's time, or not at all. */
  late: number;
  /** The notes of the first call and of each miss, at most a few. */
  notes: string[];
}

export interface PhaseVerdict {
  /** B's p99 over its idle p99. */
  p99Ratio: number;
  /** B's p99 and worst request within their targets (and B's load measured). */
  latencyMet: boolean;
  /** No 5xx for either tenant. */
  noServerErrors: boolean;
  /** No 2xx without RateLimit headers for either tenant. */
  allCounted: boolean;
  /** Each of A's calls answered in time, and each 4xx with a problem code. */
  noisyAnswered: boolean;
  /** Every target met. */
  met: boolean;
  /** One short phrase per missed target. */
  misses: string[];
}

const NOTES_KEPT = 4;

/**
 * A's answers of one phase, by operation, in the order they first appear.
 *
 * @example
 * summariseAnswers([{ operation: 'publish', status: 200, ms: 900, ... }])[0].statuses // { '200': 1 }
 */
export function summariseAnswers(answers: readonly ManagementAnswer[], targets: IsolationTargets = isolationTargets): OperationFigures[] {
  const byOperation = new Map<string, OperationFigures>();
  for (const a of answers) {
    let f = byOperation.get(a.operation);
    if (f === undefined) {
      f = { operation: a.operation, calls: 0, statuses: {}, codes: [], maxMs: 0, totalMs: 0, uncounted: 0, maxBytes: 0, unclear: 0, late: 0, notes: [] };
      byOperation.set(a.operation, f);
    }
    f.calls++;
    f.statuses[a.status] = (f.statuses[a.status] ?? 0) + 1;
    if (a.code !== undefined && !f.codes.includes(a.code)) f.codes.push(a.code);
    f.maxMs = Math.max(f.maxMs, a.ms);
    f.totalMs += a.ms;
    f.maxBytes = Math.max(f.maxBytes, a.bytes);
    const ok = a.status >= 200 && a.status < 300;
    if (ok && !a.counted) f.uncounted++;
    const unclear = a.status >= 400 && a.status < 500 && a.code === undefined;
    if (unclear) f.unclear++;
    const late = a.status === 0 || a.ms > targets.maxAnswerMs;
    if (late) f.late++;
    const miss = unclear || late || a.status >= 500 || (ok && !a.counted);
    if ((f.calls === 1 || miss) && f.notes.length < NOTES_KEPT) f.notes.push(`${a.status} in ${fixed(a.ms / 1000, 1)} s: ${a.note}`);
  }
  return [...byOperation.values()];
}

/** Answers with a status of 500 or more in a `statuses` tally. */
export function serverErrors(statuses: Record<string, number>): number {
  return Object.entries(statuses).reduce((sum, [status, count]) => sum + (Number(status) >= 500 ? count : 0), 0);
}

/**
 * Judges one phase against the targets; the idle phase is judged with its
 * own p99 as `idleP99Ms` (a ratio of 1). A figure that could not be
 * measured (NaN) misses: it proves nothing.
 *
 * @example
 * judgePhase({ quiet, noisy }, 4.1).misses // ['B p99 9.0 ms = 2.2x idle (target <= 2x)']
 */
export function judgePhase(
  phase: { quiet: QuietFigures; noisy: readonly OperationFigures[] }, idleP99Ms: number, targets: IsolationTargets = isolationTargets,
): PhaseVerdict {
  const { quiet, noisy } = phase;
  const latency: string[] = [];
  const p99Ratio = quiet.p99Ms / idleP99Ms;
  if (quiet.error !== undefined) latency.push(`B's load failed: ${quiet.error}`);
  if (!(p99Ratio <= targets.maxP99ToIdle)) {
    latency.push(`B p99 ${fixed(quiet.p99Ms, 1)} ms = ${fixed(p99Ratio, 2)}x idle (target <= ${targets.maxP99ToIdle}x)`);
  }
  if (!(quiet.maxMs < targets.maxWorstMs)) latency.push(`B worst ${int(quiet.maxMs)} ms (target < ${targets.maxWorstMs} ms)`);
  const errors: string[] = [];
  const uncounted: string[] = [];
  const answered: string[] = [];
  const quietErrors = serverErrors(quiet.statuses);
  if (quietErrors > 0) errors.push(`B got ${quietErrors} 5xx`);
  if (quiet.uncounted > 0) uncounted.push(`B got ${quiet.uncounted} answers uncounted (2xx without RateLimit headers)`);
  for (const op of noisy) {
    const opErrors = serverErrors(op.statuses);
    if (opErrors > 0) errors.push(`A ${op.operation}: ${opErrors} 5xx`);
    if (op.uncounted > 0) uncounted.push(`A ${op.operation}: ${op.uncounted} uncounted`);
    if (op.late > 0) answered.push(`A ${op.operation}: ${op.late} not answered within ${targets.maxAnswerMs / 1000} s`);
    if (op.unclear > 0) answered.push(`A ${op.operation}: ${op.unclear} 4xx without a problem code`);
  }
  const misses = [...latency, ...errors, ...uncounted, ...answered];
  return {
    p99Ratio, latencyMet: latency.length === 0, noServerErrors: errors.length === 0, allCounted: uncounted.length === 0,
    noisyAnswered: answered.length === 0, met: misses.length === 0, misses,
  };
}
