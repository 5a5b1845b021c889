/**
 * Reading GET /metrics in tests: one sample of the Prometheus text, by its
 * exact series (name and labels as the service writes them).
 */
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/**
 * The value of one sample line of a Prometheus text, by its exact name and
 * labels; undefined when the text has no such series.
 *
 * @example
 * sampleOf('rules_validator_cache_hits_total 3\n', 'rules_validator_cache_hits_total'); // 3
 */
export function sampleOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * The value of one series from the app's /metrics (which needs no key),
 * or a thrown error naming the series when it is not there.
 *
 * @example
 * await metricSample(t, 'rules_validator_cache_hits_total'); // 3
 */
export async function metricSample(t: TestApp, series: string): Promise<number> {
  const response = await t.request('GET', '/metrics', { key: null, tenant: null });
  expect(response.status).toBe(200);
  const value = sampleOf(response.text, series);
  if (value === undefined) throw new Error(`no ${series} in /metrics`);
  return value;
}
