/**
 * The isolation benchmark's verdict: what a phase's figures meet or miss,
 * how A's answers are summed up per operation, the guard's short-form
 * check, and the rows the results table gets. Pure figures in, verdicts
 * out; no server and no timing.
 */
import { describe, expect, it } from 'vitest';
import { guardThresholds, judge, type GuardFigures } from '../../bench/guard.ts';
import type { IsolationCheckFigures } from '../../bench/isolation/isolation-check.ts';
import {
  isolationTargets, judgePhase, serverErrors, summariseAnswers, type QuietFigures,
} from '../../bench/isolation/isolation-verdict.ts';
import type { IsolationBenchResult, PhaseResult } from '../../bench/isolation/isolation.bench.ts';
import type { ManagementAnswer } from '../../bench/isolation/management-call.ts';
import { FULL_SIZES } from '../../bench/isolation/noisy-tenant.ts';
import type { BenchResults } from '../../bench/tools/bench-results.ts';
import { keptSuitesNote, resultsTable } from '../../bench/tools/readme-results.ts';

function quiet(overrides: Partial<QuietFigures> = {}): QuietFigures {
  return { requests: 1000, p50Ms: 1, p90Ms: 2, p99Ms: 4, maxMs: 20, statuses: { 200: 1000 }, uncounted: 0, dispatchLagMaxMs: 1, ...overrides };
}

function answer(overrides: Partial<ManagementAnswer> = {}): ManagementAnswer {
  return { operation: 'publish', status: 200, ms: 900, bytes: 120, counted: true, note: 'ruleset version 3', ...overrides };
}

describe('a phase against the targets', () => {
  it('is met when B stays within 2x its idle p99 and under 100 ms, and every answer is counted and no 5xx', () => {
    const verdict = judgePhase({ quiet: quiet({ p99Ms: 8, maxMs: 99.9 }), noisy: summariseAnswers([answer()]) }, 4);
    expect(verdict).toMatchObject({ p99Ratio: 2, met: true, misses: [] });
  });

  it.each([
    { name: 'p99 just over 2x idle', q: { p99Ms: 8.2 }, miss: 'B p99 8.2 ms = 2.05x idle (target <= 2x)', failed: 'latencyMet' },
    { name: 'a worst request of exactly 100 ms', q: { maxMs: 100 }, miss: 'B worst 100 ms (target < 100 ms)', failed: 'latencyMet' },
    { name: 'a 503 for B', q: { statuses: { 200: 999, 503: 1 } }, miss: 'B got 1 5xx', failed: 'noServerErrors' },
    { name: 'B answered uncounted', q: { uncounted: 31 }, miss: 'B got 31 answers uncounted (2xx without RateLimit headers)', failed: 'allCounted' },
    { name: 'B\'s load that failed', q: { error: 'the server closed a connection', p99Ms: Number.NaN }, miss: 'B\'s load failed: the server closed a connection', failed: 'latencyMet' },
  ] as const)('misses on $name', ({ q, miss, failed }) => {
    const verdict = judgePhase({ quiet: quiet(q), noisy: [] }, 4);
    expect(verdict.met).toBe(false);
    expect(verdict.misses[0]).toBe(miss);
    expect(verdict[failed]).toBe(false);
  });

  it('misses when B\'s latency could not be measured (NaN proves nothing)', () => {
    expect(judgePhase({ quiet: quiet(), noisy: [] }, Number.NaN).latencyMet).toBe(false);
    expect(judgePhase({ quiet: quiet({ maxMs: Number.NaN }), noisy: [] }, 4).latencyMet).toBe(false);
  });

  it('takes a clear 4xx of A as an answer, and misses on A\'s 5xx, unclear 4xx, late or missing answers and uncounted 2xx', () => {
    const clear = judgePhase({ quiet: quiet(), noisy: summariseAnswers([answer({ status: 429, code: 'RATE_LIMITED', retryAfterS: 1 })]) }, 4);
    expect(clear.met).toBe(true);

    const noisy = summariseAnswers([
      answer({ operation: 'import dry run', status: 503, code: 'SERVICE_UNAVAILABLE', note: 'The database is unavailable.' }),
      answer({ operation: 'impact', status: 400 }),
      answer({ operation: 'explain', ms: isolationTargets.maxAnswerMs + 1, bytes: 183e6 }),
      answer({ operation: 'quadratic', status: 0, ms: 120_000, counted: false, note: 'no answer within 120 s' }),
      answer({ operation: 'publish', counted: false }),
    ]);
    const verdict = judgePhase({ quiet: quiet(), noisy }, 4);
    expect(verdict).toMatchObject({ latencyMet: true, noServerErrors: false, allCounted: false, noisyAnswered: false, met: false });
    expect(verdict.misses).toEqual([
      'A import dry run: 1 5xx',
      'A publish: 1 uncounted',
      'A impact: 1 4xx without a problem code',
      'A explain: 1 not answered within 30 s',
      'A quadratic: 1 not answered within 30 s',
    ]);
  });
});

describe('A\'s answers summed up', () => {
  it('counts statuses, codes, the longest and largest answer per operation, in the order they first came', () => {
    const [publish, edit] = summariseAnswers([
      answer({ ms: 1200, bytes: 300 }),
      answer({ operation: 'publish (rule edit)', ms: 20 }),
      answer({ status: 409, code: 'TESTS_FAILED', ms: 800, note: 'A stored test fails' }),
      answer({ status: 409, code: 'TESTS_FAILED', ms: 700 }),
    ]);
    expect(publish).toMatchObject({
      operation: 'publish', calls: 3, statuses: { 200: 1, 409: 2 }, codes: ['TESTS_FAILED'], maxMs: 1200, totalMs: 2700, maxBytes: 300,
      uncounted: 0, unclear: 0, late: 0,
    });
    // The first call's note, then only the misses' (a 409 with a code is no miss).
    expect(publish.notes).toEqual(['200 in 1.2 s: ruleset version 3']);
    expect(edit).toMatchObject({ operation: 'publish (rule edit)', calls: 1 });
  });

  it('adds up 5xx answers only', () => {
    expect(serverErrors({ 200: 5, 429: 2, 500: 1, 503: 3 })).toBe(4);
    expect(serverErrors({})).toBe(0);
  });
});

function isolationFigures(overrides: Partial<IsolationCheckFigures> = {}): IsolationCheckFigures {
  return { idleP99Ms: 3, p99Ms: 9, ratio: 3, worstMs: 300, requests: 400, serverErrors: 0, uncounted: 0, noisy: '200 in 3.1 s', ...overrides };
}

describe('the guard\'s isolation check', () => {
  const base: GuardFigures = {
    engine: { passing: 1, failing: 1, rounds: 300 },
    http: { ratio: 0.8, serviceRps: 1000, bareRps: 1250, serviceCpuUs: 40, bareCpuUs: 30, cpuRatio: 1.3, roundRatios: [0.8] },
  };
  const isolationLine = (figures: IsolationCheckFigures) => {
    const verdict = judge({ ...base, isolation: figures });
    return { ok: verdict.ok, line: verdict.lines.find((l) => l.startsWith('isolation:'))! };
  };

  it.each([
    { name: 'a ratio at the bound', f: { ratio: guardThresholds.maxIsolationRatio, worstMs: 400 }, ok: true },
    { name: 'a high ratio with a short worst request (a busy machine)', f: { ratio: 12, worstMs: 249 }, ok: true },
    { name: 'a high ratio and a long stall (work on the event loop)', f: { ratio: 80, p99Ms: 240, worstMs: 310 }, ok: false },
    { name: 'a 5xx', f: { serverErrors: 1 }, ok: false },
    { name: 'an uncounted answer', f: { uncounted: 2 }, ok: false },
    { name: 'an unmeasured ratio with a long stall', f: { ratio: Number.NaN, worstMs: 300 }, ok: false },
  ])('$name: ok is $ok', ({ f, ok }) => {
    const { ok: verdictOk, line } = isolationLine(isolationFigures(f));
    expect(verdictOk).toBe(ok);
    expect(line.endsWith(ok ? ': ok' : ': FAILED')).toBe(true);
    expect(line).toContain(`fails above ${guardThresholds.maxIsolationRatio} with a worst of ${guardThresholds.isolationWorstMs} ms or more`);
  });

  it('adds no line when the check did not run', () => {
    expect(judge(base).lines.some((l) => l.startsWith('isolation:'))).toBe(false);
  });
});

function phase(name: string, workers: number, q: Partial<QuietFigures>, noisy: ManagementAnswer[], idleP99Ms: number): PhaseResult {
  const figures = { quiet: quiet(q), noisy: summariseAnswers(noisy) };
  return { name, workers, durationS: 10, ...figures, verdict: judgePhase(figures, idleP99Ms) };
}

describe('the results table\'s isolation rows', () => {
  const isolation: IsolationBenchResult = {
    database: 'PGlite', redis: false, quick: false, rate: 100, sizes: FULL_SIZES, sampledItems: 11_000, targets: isolationTargets,
    runs: [{
      workers: 1, idleP99Ms: 4,
      phases: [
        phase('B idle', 1, {}, [], 4),
        phase('quadratic', 1, { p99Ms: 5800, maxMs: 5873 }, [answer({ operation: 'quadratic', ms: 6100 })], 4),
        phase('publish', 1, { p99Ms: 6 }, [answer({ status: 503, code: 'SERVICE_UNAVAILABLE' })], 4),
      ],
    }],
    workers2Skipped: 'WORKERS=2 needs PostgreSQL (DATABASE_URL not set)', loadAverage: [1, 1, 1], met: false,
  };
  const results: BenchResults = {
    generatedAt: '2030-01-02T03:04:05.000Z', quick: false, durationS: 300,
    environment: { node: 'v20', platform: 'linux', arch: 'x64', cpu: 'cpu', cores: 2, loadAverage: [1, 1, 1] },
    keptFrom: { workers: '2030-01-01T10:00:00.000Z' },
    workers: { skipped: 'DATABASE_URL not set' },
    isolation,
  };
  const rows = resultsTable(results).split('\n').filter((line) => line.startsWith('| isolation'));

  it('gives each phase of A its own latency verdict against the idle p99', () => {
    expect(rows).toContain('| isolation: B\'s validations while A runs quadratic (PGlite, B at 100/s) | B idle: p99 4.0 ms | p99 5.8 s (1450.0x), worst 5.9 s | p99 <= 2x idle, worst < 100 ms | MISSED |');
    expect(rows).toContain('| isolation: B\'s validations while A runs publish (PGlite, B at 100/s) | B idle: p99 4.0 ms | p99 6.0 ms (1.5x), worst 20.0 ms | p99 <= 2x idle, worst < 100 ms | met |');
  });

  it('judges the 5xx, the uncounted answers and A\'s answers over every phase, and says why WORKERS=2 is missing', () => {
    expect(rows).toContain('| isolation: 5xx answers, every phase |  | B 0, A 1 | none | MISSED |');
    expect(rows).toContain('| isolation: answers passed uncounted (2xx without RateLimit headers), every phase |  | B 0, A 0 | none | met |');
    expect(rows).toContain('| isolation: A\'s 2 calls answered within 30 s, a 4xx with a problem code |  | 0 late, unanswered or unclear | none | met |');
    expect(rows).toContain('| isolation with WORKERS=2 |  | skipped: WORKERS=2 needs PostgreSQL (DATABASE_URL not set) |  |  |');
  });

  it('says which suites a --merge run kept from an earlier run, and when that was', () => {
    expect(keptSuitesNote(results)).toBe(' Kept from an earlier run (`--merge`): workers of 2030-01-01 10:00 UTC.');
    expect(resultsTable(results)).toContain('(1/5/15 min). Kept from an earlier run (`--merge`): workers of 2030-01-01 10:00 UTC.');
    expect(keptSuitesNote({ ...results, keptFrom: undefined })).toBe('');
  });
});
