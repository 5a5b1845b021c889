/**
 * The benchmark guard's machinery runs: child servers start and stop, the
 * service answers correctly before any load, a load round produces
 * figures, and the verdict follows the thresholds. No timing is asserted:
 * how fast anything is on this machine is the benchmark's business.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { guardThresholds, judge, runGuard, type GuardFigures } from '../../bench/guard.ts';
import { startChildServer } from '../../bench/tools/child-server.ts';
import { runLoad } from '../../bench/tools/load.ts';
import { markdownTable, median, percentile } from '../../bench/tools/report-table.ts';
import { summaryMarkdown } from '../../bench/run.ts';

const bareEntry = path.resolve(import.meta.dirname, '../../bench/tools/bare-server.ts');

function figures(engine: [number, number], httpRatio: number): GuardFigures {
  return {
    engine: { passing: engine[0], failing: engine[1], rounds: 300 },
    http: { ratio: httpRatio, serviceRps: 1000, bareRps: 1500, serviceCpuUs: 40, bareCpuUs: 25, cpuRatio: 1.6, roundRatios: [httpRatio] },
  };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('guard verdict', () => {
  it.each([
    { name: 'both within bounds', engine: [1.2, 1.4], http: 0.75, ok: true, failed: [] },
    { name: 'engine ratio exactly at the bound', engine: [2, 1], http: 0.6, ok: true, failed: [] },
    { name: 'engine too slow on the failing payload', engine: [1.1, 2.3], http: 0.9, ok: false, failed: ['engine'] },
    { name: 'HTTP below the bare-route share', engine: [1.1, 1.2], http: 0.59, ok: false, failed: ['http'] },
    { name: 'both regressed', engine: [3, 3], http: 0.2, ok: false, failed: ['engine', 'http'] },
    { name: 'an unmeasured figure', engine: [Number.NaN, 1], http: 0.9, ok: false, failed: ['engine'] },
  ] as const)('$name', ({ engine, http, ok, failed }) => {
    const verdict = judge(figures([...engine], http));
    expect(verdict.ok).toBe(ok);
    const failedChecks = verdict.lines.filter((line) => line.endsWith('FAILED')).map((line) => line.split(':')[0]);
    expect(failedChecks).toEqual(failed);
  });

  it.each([
    { name: 'realistic suite within bounds', realistic: [0.9, 1.1], ok: true },
    { name: 'realistic suite exactly at the bound', realistic: [2, 1.2], ok: true },
    { name: 'realistic suite too slow on the failing set', realistic: [1.1, 2.4], ok: false },
    { name: 'realistic suite unmeasured', realistic: [1, Number.NaN], ok: false },
  ] as const)('$name', ({ realistic, ok }) => {
    const verdict = judge({ ...figures([1.2, 1.3], 0.8), realistic: { passing: realistic[0], failing: realistic[1], rounds: 151 } });
    expect(verdict.ok).toBe(ok);
    expect(verdict.lines).toHaveLength(3);
    const realisticLine = verdict.lines.find((line) => line.startsWith('realistic:'))!;
    expect(realisticLine).toContain(`fails above ${guardThresholds.maxRealisticRatio}`);
    expect(realisticLine.endsWith(ok ? 'ok' : 'FAILED')).toBe(true);
    expect(verdict.lines.filter((line) => line.endsWith('FAILED')).map((line) => line.split(':')[0])).toEqual(ok ? [] : ['realistic']);
  });

  it.each([
    { name: 'decision table looked up by its index', tables: [0.01, 0.02], ok: true },
    { name: 'decision table exactly at the bound', tables: [0.1, 0.05], ok: true },
    { name: 'decision table scanned row by row again', tables: [0.02, 0.9], ok: false },
    { name: 'decision table unmeasured', tables: [Number.NaN, 0.01], ok: false },
  ] as const)('$name', ({ tables, ok }) => {
    const verdict = judge({ ...figures([1.2, 1.3], 0.8), tables: { late: tables[0], missing: tables[1] } });
    expect(verdict.ok).toBe(ok);
    const tablesLine = verdict.lines.find((line) => line.startsWith('tables:'))!;
    expect(tablesLine).toContain(`fails above ${guardThresholds.maxTableScanRatio}`);
    expect(verdict.lines.filter((line) => line.endsWith('FAILED')).map((line) => line.split(':')[0])).toEqual(ok ? [] : ['tables']);
  });

  it('prints the figures and thresholds whatever the verdict', () => {
    const [engineLine, httpLine] = judge(figures([1.25, 1.5], 0.7)).lines;
    expect(engineLine).toContain('passing 1.25, failing 1.50');
    expect(engineLine).toContain(`fails above ${guardThresholds.maxEngineRatio}`);
    expect(httpLine).toContain('= 0.70');
    expect(httpLine).toContain(`fails below ${guardThresholds.minHttpRatio}`);
  });
});

describe('benchmark helpers', () => {
  it('medians and percentiles of rounds', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
    expect(percentile([5, 1, 4, 2, 3], 90)).toBe(5);
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
  });

  it('renders markdown tables with escaped cells', () => {
    expect(markdownTable({ header: ['a', 'b'], rows: [['x|y', '1']] })).toBe('| a | b |\n| --- | ---: |\n| x\\|y | 1 |');
  });

  it('summarises a run whose WORKERS suite was skipped', () => {
    const markdown = summaryMarkdown({
      generatedAt: '2026-01-01T00:00:00.000Z', quick: true, durationS: 1,
      environment: { node: 'v20', platform: 'linux', arch: 'x64', cpu: 'cpu', cores: 2, loadAverage: [1, 1, 1] },
      workers: { skipped: 'WORKERS not implemented' },
    });
    expect(markdown).toContain('# Benchmark results');
    expect(markdown).toContain('## WORKERS\n\nskipped: WORKERS not implemented');
  });

  it('refuses to send load anywhere but 127.0.0.1', async () => {
    await expect(runLoad({ url: 'http://localhost:1/x', headers: {}, body: '{}', connections: 1, durationS: 1 }))
      .rejects.toThrow('only against 127.0.0.1');
  });
});

describe('guard machinery', () => {
  it('starts a child server and leaves no process behind', async () => {
    const bare = await startChildServer({ name: 'bare route', entry: bareEntry, env: {} });
    expect(isRunning(bare.pid)).toBe(true);
    const response = await fetch(`${bare.baseUrl}/api/v1/validation/validate`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"context":"c","payload":{}}',
    });
    expect(await response.json()).toMatchObject({ isValid: true, failures: [] });
    await bare.stop();
    expect(isRunning(bare.pid)).toBe(false);
  }, 60_000);

  it('measures the service against the bare route and judges the figures', async () => {
    // The isolation check runs against the real service in isolation-check.test.ts.
    const { figures: measured, verdict } = await runGuard({ print: false, engine: false, isolation: false, httpRounds: 1, httpRoundS: 1 });
    expect(measured.http.roundRatios).toHaveLength(1);
    expect(measured.http.serviceRps).toBeGreaterThan(0);
    expect(measured.http.bareRps).toBeGreaterThan(0);
    expect(measured.http.ratio).toBeCloseTo(measured.http.roundRatios[0]);
    // The engine was skipped: an unmeasured figure never passes.
    expect(verdict.ok).toBe(false);
    expect(verdict.lines).toHaveLength(2);
  }, 180_000);
});
