/**
 * The evaluation deadline of requests of several evaluations (batch items,
 * transaction contexts): which evaluations run under the `vm` watchdog,
 * and that a request is stopped at the deadline either way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  EvaluationTimeoutError, UNGUARDED_COST_LIMIT, evaluateEachWithin, evaluateWithin, runWithDeadline, setDeadlineClock,
} from '../../src/validators/evaluation-deadline.ts';

/** True when the caller runs inside the watchdog's script (its filename is on the stack). */
function underWatchdog(): boolean {
  return (new Error().stack ?? '').includes('at evaluation-deadline');
}

function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* spin */ }
}

const SMALL = Math.floor(UNGUARDED_COST_LIMIT / 4);

describe('evaluateEachWithin', () => {
  it('runs evaluations that are small together in order, directly', () => {
    const seen: Array<[number, boolean]> = [];
    evaluateEachWithin([SMALL, SMALL, SMALL], (i) => seen.push([i, underWatchdog()]));
    expect(seen).toEqual([[0, false], [1, false], [2, false]]);
  });

  it('runs a batch of small evaluations that is large together directly too, without the watchdog thread', () => {
    const costs = Array.from({ length: 100 }, () => SMALL);
    const seen: boolean[] = [];
    evaluateEachWithin(costs, () => seen.push(underWatchdog()));
    expect(seen).toHaveLength(100);
    expect(seen.every((watched) => !watched)).toBe(true);
  });

  it('stops such a batch between evaluations once the deadline has passed, every evaluation run whole', () => {
    const costs = Array.from({ length: 200 }, () => SMALL);
    let started = 0;
    let finished = 0;
    const run = (): void => evaluateEachWithin(costs, () => {
      started++;
      busyFor(10);
      finished++;
    }, 100);
    expect(run).toThrow(EvaluationTimeoutError);
    // 200 evaluations take 2 s; a loaded machine may run fewer than ten in the 100 ms, never all of them.
    expect(started).toBeGreaterThan(1);
    expect(started).toBeLessThan(200);
    expect(finished).toBe(started);
  });

  it('lets the last evaluation finish even when the deadline passes during it', () => {
    const seen: number[] = [];
    evaluateEachWithin([UNGUARDED_COST_LIMIT, UNGUARDED_COST_LIMIT], (i) => {
      if (i === 1) busyFor(250);
      seen.push(i);
    }, 200);
    expect(seen).toEqual([0, 1]);
  });

  it('puts every evaluation under the watchdog when one is large, and the watchdog stops even an endless one', () => {
    const seen: Array<[number, boolean]> = [];
    const run = (): void => evaluateEachWithin([SMALL, UNGUARDED_COST_LIMIT + 1], (i) => {
      seen.push([i, underWatchdog()]);
      if (i === 1) for (;;) { /* never returns: only the watchdog ends it */ }
    }, 50);
    expect(run).toThrow(EvaluationTimeoutError);
    expect(seen).toEqual([[0, true], [1, true]]);
  });

  it('has nothing to run for no evaluations', () => {
    let calls = 0;
    evaluateEachWithin([], () => calls++);
    expect(calls).toBe(0);
  });
});

describe('evaluateWithin', () => {
  it('calls a small evaluation directly and a large one under the watchdog', () => {
    expect(evaluateWithin(UNGUARDED_COST_LIMIT, underWatchdog)).toBe(false);
    expect(evaluateWithin(UNGUARDED_COST_LIMIT + 1, underWatchdog)).toBe(true);
  });
});

describe("a niced thread's deadline, in its own CPU time", () => {
  /** Blocks the thread for `ms` of wall time without using the CPU, as a thread the scheduler does not run. */
  function blockedFor(ms: number): void {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  }

  afterEach(() => {
    setDeadlineClock('wall');
  });

  it('refuses on wall time on the event loop, however little CPU the evaluation used', () => {
    expect(() => runWithDeadline(() => blockedFor(300), 100)).toThrow(EvaluationTimeoutError);
  });

  it.runIf(typeof (process as { threadCpuUsage?: unknown }).threadCpuUsage === 'function')(
    'lets an evaluation that waited for the CPU finish, and still refuses one that used more CPU than the deadline',
    () => {
      expect(setDeadlineClock('thread-cpu')).toBe(true);
      // Three deadlines of wall time, next to no CPU time: what a niced thread on busy cores sees.
      expect(runWithDeadline(() => {
        blockedFor(300);
        return 'done';
      }, 100)).toBe('done');
      expect(() => runWithDeadline(() => busyFor(250), 100)).toThrow(EvaluationTimeoutError);
      // Stopped by the watchdog at the wall-time bound, however long it would run.
      const started = performance.now();
      expect(() => runWithDeadline(() => busyFor(60_000), 100)).toThrow(EvaluationTimeoutError);
      expect(performance.now() - started).toBeLessThan(10_000);
      // A batch of small evaluations is judged on the same clock.
      let ran = 0;
      evaluateEachWithin([SMALL, SMALL, SMALL], () => {
        blockedFor(100);
        ran++;
      }, 100);
      expect(ran).toBe(3);
    },
  );
});
