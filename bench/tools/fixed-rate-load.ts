/**
 * Open-loop load at a fixed rate, for latency. Requests fall due in 1 ms
 * slots at the offered rate whether or not earlier ones were answered.
 * Each latency runs from the moment this process offered the request (the
 * timer tick that found its slot due) to the last byte of its answer: a
 * server that stalls is charged for every request that waited behind the
 * stall, including the ones this process could not send yet because every
 * connection was busy (no coordinated omission). How late the tick itself
 * came is this process's lateness, not the server's (Node's timers fire at
 * millisecond granularity, later when this process is held up): it is
 * reported beside the latency as `dispatchLagMs` and not counted in it.
 *
 * Why not autocannon's `overallRate`: autocannon 9 gives each connection a
 * quota per second and sends it as fast as the server answers, then waits
 * for the next second (`reqsMadeThisSecond` in its lib/httpClient.js). At
 * "half the maximum throughput" the server ran flat out for half of every
 * second and idled for the other half, and the p99 measured the queue of
 * that burst, not a steady half load. Its correction for coordinated
 * omission assumes one request per `Math.ceil(1 / rate)` = 1 ms, whatever
 * the rate.
 *
 * Plain sockets with one prepared request, so that the load generator
 * allocates little and its own pauses stay out of the figures.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';

export interface FixedRateOptions {
  /** Must be on 127.0.0.1. */
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Offered requests per second, over all connections. */
  rate: number;
  /** Seconds of offered load: `rate × durationS` requests in all. */
  durationS: number;
  /** Keep-alive connections; a request due while all are busy waits for the first free one. */
  connections: number;
  /** Give up when the last answer has not come this many seconds after the last slot; default 10. */
  timeoutS?: number;
  /**
   * Ends the load before `rate × durationS` requests: once it aborts no
   * request is offered, and the run resolves when those offered are answered.
   */
  stop?: AbortSignal;
  /**
   * Count the answers instead of stopping at the first that is not 2xx:
   * by status, and the 2xx answers that lack `header` (a lower-case name).
   */
  tally?: { header: string };
}

export interface LatencyPercentiles {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface FixedRateFigures {
  offeredRate: number;
  /** Answered requests (all of them 2xx: anything else rejects the run). */
  requests: number;
  /** Answers per second from the first slot to the last answer. */
  achievedRate: number;
  durationS: number;
  /** From the moment each request was offered to the last byte of its answer, ms. */
  latencyMs: LatencyPercentiles;
  /** From each slot to the moment this process dispatched its requests, ms: the load generator's own share of the latency. */
  dispatchLagMs: LatencyPercentiles;
  /** With `tally`: answers by status code. */
  statuses?: Record<number, number>;
  /** With `tally`: 2xx answers without the tallied header. */
  okWithoutHeader?: number;
}

// Every run's latencies, kept beside its figures rather than in them: the
// figures go into the results file, these are a number per request.
const latenciesOf = new WeakMap<FixedRateFigures, Float64Array>();

/**
 * Percentiles over every request of several runs, as if they were one: a
 * p99 of all requests rather than of one run. A run with a long stall
 * weighs in with all its slow requests, where the median run leaves it out.
 *
 * @example
 * const runs = [await runFixedRate(options), await runFixedRate(options)];
 * pooledLatency(runs).p99;
 */
export function pooledLatency(runs: readonly FixedRateFigures[]): LatencyPercentiles {
  const parts = runs.map((run) => {
    const latencies = latenciesOf.get(run);
    if (latencies === undefined) throw new Error('pooledLatency takes figures returned by runFixedRate');
    return latencies;
  });
  const all = new Float64Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.length;
  }
  return percentiles(all);
}

/** Nearest-rank percentiles of a filled typed array (sorted in place); NaN for none. */
function percentiles(values: Float64Array): LatencyPercentiles {
  if (values.length === 0) return { p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, p999: Number.NaN, max: Number.NaN };
  values.sort();
  const at = (q: number): number => values[Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1))];
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: values[values.length - 1] };
}

/** The request bytes, written as they are for every request. */
function requestBytes(url: URL, headers: Record<string, string>, body: string): Buffer {
  const payload = Buffer.from(body);
  const lines = [`POST ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, 'connection: keep-alive'];
  for (const [name, value] of Object.entries(headers)) {
    if (/[\r\n]/.test(name + value)) throw new Error(`header ${JSON.stringify(name)} holds a line break`);
    if (name.toLowerCase() !== 'content-length') lines.push(`${name}: ${value}`);
  }
  lines.push(`content-length: ${payload.length}`, '', '');
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), payload]);
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = [Buffer.from('\r\ncontent-length:'), Buffer.from('\r\nContent-Length:')];
/** Bytes per read; an answer longer than this arrives in parts and is copied together. */
const READ_BUFFER_BYTES = 64 * 1024;

/** The Content-Length of an answer head (`data[0, headEnd)`), or -1 when it has none. */
function contentLength(data: Buffer, headEnd: number): number {
  for (const name of CONTENT_LENGTH) {
    const at = data.indexOf(name);
    if (at < 0 || at >= headEnd) continue;
    let i = at + name.length;
    while (data[i] === 0x20 || data[i] === 0x09) i++;
    let value = 0;
    const first = i;
    for (; i < headEnd && data[i] >= 0x30 && data[i] <= 0x39; i++) value = value * 10 + data[i] - 0x30;
    return i > first ? value : -1;
  }
  return -1;
}

/** An answer's status, and where its body lies in `data` (valid only during the call: the read buffer is reused). */
type AnswerListener = (connection: Connection, status: number, data: Buffer, bodyStart: number, bodyEnd: number) => void;

/**
 * One keep-alive connection with at most one request in flight. Answers
 * are read into one buffer per connection (`onread`) and framed by
 * Content-Length (both servers measured send it), so reading one
 * allocates nothing.
 */
class Connection {
  /** When the request in flight was offered (performance.now()); NaN when idle. */
  due = Number.NaN;
  readonly socket: net.Socket;
  /** Bytes of an answer that came in more than one read, copied out of the read buffer. */
  #partial: Buffer | null = null;
  readonly #onAnswer: AnswerListener;
  readonly #onFailure: (error: Error) => void;

  constructor(socket: net.Socket, onAnswer: AnswerListener, onFailure: (error: Error) => void) {
    this.socket = socket;
    this.#onAnswer = onAnswer;
    this.#onFailure = onFailure;
    socket.setNoDelay(true);
  }

  read(bytes: number, buffer: Buffer): void {
    let data = buffer;
    let length = bytes;
    if (this.#partial !== null) {
      data = Buffer.concat([this.#partial, buffer.subarray(0, bytes)]);
      length = data.length;
    }
    // The read buffer holds older bytes past `length`: a match there is not this answer's.
    const headEnd = data.indexOf(HEAD_END);
    const bodyLength = headEnd >= 0 && headEnd + 4 <= length ? contentLength(data, headEnd) : Number.NaN;
    if (bodyLength === -1) return this.#onFailure(new Error(`an answer without Content-Length: ${data.toString('latin1', 0, Math.min(headEnd, 200))}`));
    const end = headEnd + 4 + bodyLength;
    if (Number.isNaN(bodyLength) || end > length) {
      this.#partial = Buffer.from(data.subarray(0, length));
      return;
    }
    if (end < length || Number.isNaN(this.due)) return this.#onFailure(new Error('bytes from the server that answer no request'));
    this.#partial = null;
    const status = (data[9] - 0x30) * 100 + (data[10] - 0x30) * 10 + (data[11] - 0x30);
    this.#onAnswer(this, status, data, headEnd + 4, end);
  }

  send(request: Buffer, due: number): void {
    this.due = due;
    this.socket.write(request);
  }
}

/** A connected socket whose reads go to `read` (set once the Connection exists). */
function connect(port: number, host: string, read: (bytes: number, buffer: Buffer) => void): Promise<net.Socket> {
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      port, host,
      // true: keep reading (false would pause the socket).
      onread: { buffer, callback: (bytes: number) => (read(bytes, buffer), true) },
    });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Offers `rate × durationS` requests in 1 ms slots and resolves with the
 * latency distribution once every one is answered (or fewer, see
 * `stop`). Rejects on a non-2xx answer (unless `tally`), a connection
 * error or close, or a timeout.
 *
 * @example
 * const { latencyMs } = await runFixedRate({ url, headers, body, rate: 5000, durationS: 6, connections: 10 });
 */
export async function runFixedRate(options: FixedRateOptions): Promise<FixedRateFigures> {
  const url = new URL(options.url);
  if (url.hostname !== '127.0.0.1') throw new Error(`load runs only against 127.0.0.1, not ${url.hostname}`);
  let total = Math.round(options.rate * options.durationS);
  if (!(total > 0) || !(options.connections > 0)) throw new Error('a fixed-rate run needs a positive rate, duration and connection count');
  const request = requestBytes(url, options.headers, options.body);
  const tally = options.tally === undefined ? undefined : { marker: `\r\n${options.tally.header}:`, statuses: new Map<number, number>(), okWithout: 0 };

  const latencies = new Float64Array(total);
  const lags = new Float64Array(total);
  /** Times at which requests were offered while every connection was busy, first in first out. */
  const waiting: number[] = [];
  let waitingHead = 0;
  let answered = 0;
  let outcome: Error | 'done' | undefined;
  let settle: () => void = () => {};
  const finish = (result: Error | 'done'): void => {
    if (outcome !== undefined) return;
    outcome = result;
    settle();
  };
  const idle: Connection[] = [];
  const onAnswer: AnswerListener = (connection, status, data, bodyStart, bodyEnd) => {
    const ok = status >= 200 && status <= 299;
    if (tally !== undefined) {
      tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
      if (ok && !data.toString('latin1', 0, bodyStart).toLowerCase().includes(tally.marker)) tally.okWithout++;
    } else if (!ok) {
      return finish(new Error(`load on ${options.url}: answer ${status}: ${data.toString('utf8', bodyStart, Math.min(bodyEnd, bodyStart + 300))}`));
    }
    latencies[answered++] = performance.now() - connection.due;
    if (answered === total) return finish('done');
    if (waitingHead < waiting.length) connection.send(request, waiting[waitingHead++]);
    else {
      connection.due = Number.NaN;
      idle.push(connection);
    }
  };
  const onFailure = (error: Error): void => finish(new Error(`load on ${options.url}: ${error.message}`));

  const opened = await Promise.allSettled(Array.from({ length: options.connections }, async () => {
    // eslint-disable-next-line prefer-const -- the socket's callback reads it, and the socket is made first
    let connection: Connection | undefined;
    const socket = await connect(Number(url.port || 80), url.hostname, (bytes, buffer) => connection!.read(bytes, buffer));
    connection = new Connection(socket, onAnswer, onFailure);
    socket.on('error', onFailure);
    socket.on('close', () => onFailure(new Error('the server closed a connection')));
    return connection;
  }));
  const connections = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const refused = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (refused !== undefined) {
    for (const connection of connections) connection.socket.destroy();
    throw new Error(`load on ${options.url}: could not connect: ${(refused.reason as Error).message}`);
  }
  idle.push(...connections);

  const start = performance.now() + 1;
  const requestsPerMs = options.rate / 1000;
  let issued = 0;
  let slot = 0;
  let ticker: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  const tick = (): void => {
    const now = performance.now();
    if (options.stop?.aborted === true && issued < total) {
      total = issued;
      if (answered === total) return finish('done');
    }
    // Every slot whose time has come. A request's latency runs from this moment (see the module comment).
    while (issued < total && start + slot <= now) {
      const through = Math.min(total, Math.floor((slot + 1) * requestsPerMs));
      for (; issued < through; issued++) {
        lags[issued] = now - (start + slot);
        const connection = idle.pop();
        if (connection === undefined) waiting.push(now);
        else connection.send(request, now);
      }
      slot++;
    }
    if (issued < total) {
      ticker = setTimeout(tick, Math.max(0, start + slot - performance.now()));
      return;
    }
    const timeoutMs = (options.timeoutS ?? 10) * 1000;
    deadline = setTimeout(() => finish(new Error(`load on ${options.url}: ${total - answered} of ${total} requests unanswered`
      + ` ${timeoutMs / 1000} s after the last was due`)), timeoutMs);
  };

  await new Promise<void>((resolve) => {
    settle = resolve;
    if (outcome !== undefined) return resolve();
    ticker = setTimeout(tick, Math.max(0, start - performance.now()));
  });
  const end = performance.now();
  clearTimeout(ticker);
  clearTimeout(deadline);
  for (const connection of connections) connection.socket.destroy();
  if (outcome instanceof Error) throw outcome;
  const figures: FixedRateFigures = {
    offeredRate: options.rate,
    requests: answered,
    achievedRate: answered / ((end - start) / 1000),
    durationS: options.durationS,
    latencyMs: percentiles(latencies.subarray(0, answered)),
    dispatchLagMs: percentiles(lags.subarray(0, answered)),
    ...(tally === undefined ? {} : { statuses: Object.fromEntries(tally.statuses), okWithoutHeader: tally.okWithout }),
  };
  latenciesOf.set(figures, latencies.subarray(0, answered));
  return figures;
}
