/**
 * The isolation benchmark's machinery against the real service (the
 * bundle, two bootstrapped tenants, PGlite): the guard's short form sets up
 * tenant A's quadratic context through the API and measures tenant B idle
 * and during A's stored-test run. Small sizes; no timing is asserted: how
 * fast anything is here is the benchmark's business.
 */
import { describe, expect, it } from 'vitest';
import { runIsolationCheck } from '../../bench/isolation/isolation-check.ts';

describe('isolation check', () => {
  it('measures tenant B idle and while tenant A runs its stored tests, every answer counted and none a 5xx', async () => {
    const figures = await runIsolationCheck({ idleMs: 1000, sizes: { quadraticItems: 1000, quadraticTests: 2 } });

    expect(figures.requests).toBeGreaterThan(0);
    expect(figures.idleP99Ms).toBeGreaterThan(0);
    expect(figures.p99Ms).toBeGreaterThan(0);
    expect(figures.ratio).toBeCloseTo(figures.p99Ms / figures.idleP99Ms);
    expect(figures.worstMs).toBeGreaterThanOrEqual(figures.p99Ms);
    expect(figures.serverErrors).toBe(0);
    expect(figures.uncounted).toBe(0);
    expect(figures.noisy).toMatch(/^200 in \d+\.\d s$/);
  }, 180_000);
});
