/**
 * One bounded load run with autocannon (programmatic API): closed loop
 * (each connection sends its next request when the answer arrives), a
 * fixed duration or request count, traffic only to 127.0.0.1. Latency at a
 * fixed rate is `fixed-rate-load.ts`'s job: autocannon's `overallRate`
 * sends in bursts (see there).
 * Any response that is not 2xx, and any connection error, stops the
 * benchmark: a figure that counts 429s or 413s would measure the wrong
 * thing.
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  /** Must be on 127.0.0.1. */
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  /** Seconds. */
  durationS: number;
  /** Exactly this many requests, however long they take (durationS is then ignored). */
  requests?: number;
  /** Seconds before one request counts as a timeout; default 10. */
  timeoutS?: number;
}

export interface LoadFigures {
  /** 2xx responses per second over the run. */
  requestsPerSec: number;
  requests: number;
  durationS: number;
  /** Milliseconds, whole-ms resolution (autocannon's histogram), of a closed loop: they leave out time a request waited to be sent. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
}

/**
 * Runs one load and returns its figures.
 *
 * @example
 * const { requestsPerSec } = await runLoad({ url, headers, body, connections: 10, durationS: 3 });
 */
export async function runLoad(options: LoadOptions): Promise<LoadFigures> {
  const host = new URL(options.url).hostname;
  if (host !== '127.0.0.1') throw new Error(`load runs only against 127.0.0.1, not ${host}`);
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    ...(options.requests === undefined ? { duration: options.durationS } : { amount: options.requests }),
    timeout: options.timeoutS ?? 10,
    bailout: 10,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    const codes = Object.entries(result.statusCodeStats).map(([code, { count }]) => `${code}: ${count}`).join(', ');
    throw new Error(`load on ${options.url}: ${result.non2xx} non-2xx responses (${codes}), ${result.errors} errors`
      + ` (${result.timeouts} timeouts)`);
  }
  if (result['2xx'] === 0) throw new Error(`load on ${options.url}: no response in ${options.durationS} s`);
  return {
    requestsPerSec: result['2xx'] / result.duration,
    requests: result['2xx'],
    durationS: result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMaxMs: result.latency.max,
  };
}
