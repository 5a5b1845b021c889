/** The part of autocannon's programmatic API (which ships no types) that the HTTP benchmarks use. */
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Requests in all; overrides duration. */
    amount?: number;
    /** Requests per second over all connections. */
    overallRate?: number;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    /** Stop after this many errors. */
    bailout?: number;
  }

  /** Percentiles of a histogram: latency in milliseconds (whole ms resolution). */
  interface Histogram {
    average: number;
    mean: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
    total: number;
  }

  interface Result {
    /** Seconds, to two decimals. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
  }

  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
