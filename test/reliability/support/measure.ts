/**
 * Measuring tools for the reliability suites: latency summaries, a
 * background load that records every request it makes, memory samples
 * taken after a full garbage collection, and a report line that vitest
 * prints. Figures are reported, not asserted tightly: CI machines are
 * loaded and the bounds that tests check are generous on purpose.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Environment that lifts the per-tenant and per-address rate limits: these
 * suites send thousands of requests on purpose, and rate limiting has its
 * own tests.
 */
export const UNLIMITED: Readonly<Record<string, string>> = Object.freeze({ RATE_LIMIT_MAX: '1000000000' });

/** Percentiles of a sample, in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The value at quantile q (0..1) of the sample, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** p50, p90, p99 and max of a sample. */
export function summarize(values: readonly number[]): LatencySummary {
  const round = (n: number): number => Math.round(n * 100) / 100;
  return {
    count: values.length,
    p50: round(quantile(values, 0.5)),
    p90: round(quantile(values, 0.9)),
    p99: round(quantile(values, 0.99)),
    // A reduce, not Math.max(...values): a sample of 100,000s of latencies overflows the stack as arguments.
    max: round(values.length === 0 ? Number.NaN : values.reduce((a, b) => Math.max(a, b), -Infinity)),
  };
}

/** Prints a figure the reliability suites report (visible in vitest's output). */
export function report(label: string, figures: unknown): void {
  process.stdout.write(`[reliability] ${label}: ${JSON.stringify(figures)}\n`);
}

let gc: (() => void) | undefined;

/**
 * A full garbage collection, so memory samples compare live data, not
 * garbage not yet collected. Node exposes gc() only behind a flag; setting
 * the flag at run time and reading gc from a fresh context is the usual way
 * to get it without restarting the worker.
 */
export function collectGarbage(): void {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

/** Heap and RSS in MiB after a full collection. */
export function memorySample(): { heapUsedMiB: number; rssMiB: number } {
  collectGarbage();
  const usage = process.memoryUsage();
  return { heapUsedMiB: Math.round(usage.heapUsed / 2 ** 20), rssMiB: Math.round(usage.rss / 2 ** 20) };
}

/** One request of a background load: resolves true when its answer was right. */
export type Probe = () => Promise<boolean>;

/**
 * Runs `probe` in `concurrency` loops until stopped, timing each call.
 *
 * @example
 * const load = new BackgroundLoad(async () => (await validate()).status === 200, 2);
 * load.start();
 * ...
 * const { latencies, failures } = await load.stop();
 */
export class BackgroundLoad {
  readonly #probe: Probe;
  readonly #concurrency: number;
  readonly #latencies: number[] = [];
  readonly #failures: string[] = [];
  #running = false;
  #loops: Promise<void>[] = [];

  constructor(probe: Probe, concurrency = 1) {
    this.#probe = probe;
    this.#concurrency = concurrency;
  }

  start(): void {
    this.#running = true;
    this.#loops = Array.from({ length: this.#concurrency }, () => this.#loop());
  }

  async stop(): Promise<{ latencies: number[]; failures: string[] }> {
    this.#running = false;
    await Promise.all(this.#loops);
    return { latencies: [...this.#latencies], failures: [...this.#failures] };
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      const started = performance.now();
      try {
        const ok = await this.#probe();
        this.#latencies.push(performance.now() - started);
        if (!ok) this.#failures.push('wrong answer');
      } catch (error) {
        this.#failures.push(error instanceof Error ? error.message : String(error));
      }
    }
  }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
