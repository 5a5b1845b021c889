/**
 * A Prometheus histogram built for the request path. prom-client's
 * Histogram builds a label object and a hash string on every observation
 * (about a microsecond); here each label combination is resolved once to a
 * Series, and observing is a bucket scan and three additions. The registry
 * renders it through `get()`, the shape prom-client's own metrics return.
 */
import type { Metric, Registry } from 'prom-client';

/** One label combination's buckets. */
export class HistogramSeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly #bounds: readonly number[];
  /** Non-cumulative: counts[i] observations fell in (bounds[i-1], bounds[i]]; the last slot is +Inf. */
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;

  constructor(bounds: readonly number[], labels: Record<string, string>) {
    this.#bounds = bounds;
    this.#counts = new Float64Array(bounds.length + 1);
    this.labels = Object.freeze({ ...labels });
  }

  observe(value: number): void {
    const bounds = this.#bounds;
    let index = 0;
    while (index < bounds.length && value > bounds[index]) index++;
    this.#counts[index]++;
    this.#sum += value;
    this.#count++;
  }

  /** Cumulative bucket counts, +Inf last, with the sum and count. */
  snapshot(): { cumulative: number[]; sum: number; count: number } {
    const cumulative: number[] = [];
    let running = 0;
    for (const count of this.#counts) {
      running += count;
      cumulative.push(running);
    }
    return { cumulative, sum: this.#sum, count: this.#count };
  }
}

interface RenderedValue {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
}

/**
 * A histogram whose series are created once and observed without
 * allocation.
 *
 * @example
 * const histogram = new LatencyHistogram({ name: 'http_request_duration_seconds', help: '…', buckets: [0.001, 0.01], registry });
 * const series = histogram.series({ method: 'POST', route: '/api/v1/validation/validate', status_code: '200' });
 * series.observe(0.00004);
 */
export class LatencyHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  readonly #series: HistogramSeries[] = [];

  constructor(options: { name: string; help: string; buckets: readonly number[]; registry: Registry }) {
    this.name = options.name;
    this.help = options.help;
    this.#bounds = Object.freeze([...options.buckets].sort((a, b) => a - b));
    // The registry only calls get() on what it holds; the cast stands for
    // that contract, which prom-client's types spell as its own classes.
    options.registry.registerMetric(this as unknown as Metric);
  }

  /** A new series for one label combination; the caller keeps it and observes through it. */
  series(labels: Record<string, string>): HistogramSeries {
    const series = new HistogramSeries(this.#bounds, labels);
    this.#series.push(series);
    return series;
  }

  /** The samples, as prom-client's registry renders them. */
  // eslint-disable-next-line @typescript-eslint/require-await -- prom-client's metric interface: get() answers a promise
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: RenderedValue[] }> {
    const values: RenderedValue[] = [];
    for (const series of this.#series) {
      const { cumulative, sum, count } = series.snapshot();
      if (count === 0) continue;
      for (let i = 0; i < this.#bounds.length; i++) {
        values.push({ value: cumulative[i], labels: { le: this.#bounds[i], ...series.labels }, metricName: `${this.name}_bucket` });
      }
      values.push({ value: count, labels: { le: '+Inf', ...series.labels }, metricName: `${this.name}_bucket` });
      values.push({ value: sum, labels: { ...series.labels }, metricName: `${this.name}_sum` });
      values.push({ value: count, labels: { ...series.labels }, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
