/**
 * Whether this process is overloaded: its event loop lags, or another
 * pressure it is told to watch (the management work queue) is past its
 * limit. While it is, management requests are refused with 503 and
 * readiness is 503 (shed-management.ts, routes/health.ts); validations are
 * always answered.
 *
 * Event-loop delay comes from `perf_hooks.monitorEventLoopDelay`: a libuv
 * timer ticking every TUNING.eventLoopResolutionMs records the time since
 * its previous tick, so an idle loop reads about that period and a loop
 * held for 300 ms reads about 300 ms, once, at the first tick after the
 * stall. Every TUNING.overloadSampleMs the monitor takes the window's p99
 * and max, less the timer's period (as @fastify/under-pressure does with
 * its mean, so an idle loop reads 0), and starts a new window.
 *
 * Why p99 and not under-pressure's mean: the mean of a window with one
 * 300 ms stall among 50 ticks is about 6 ms, yet every request that arrived
 * during the stall waited for it. With about 50 ticks a window (fewer when
 * it has a stall), p99 is the window's longest stall.
 *
 * Overload is a lag that lasts: the process sheds once a source has read
 * above its limit in TUNING.overloadWindows windows in a row, and stops at
 * the first window where none does. A lone stall (a process's first
 * requests compiling, a long garbage collection) is in one window only, so
 * it refuses nothing; lag that recurs or lasts a second does. The log says
 * when shedding starts (with the reading) and ends (with how long it lasted
 * and how many requests were refused).
 */
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { TUNING } from '../tuning.ts';

/**
 * Something that can overload the process, read at every sample.
 *
 * @example
 * monitor.watch({ name: 'management_queue', read: () => pool.queueSize, limit: 100 });
 */
export interface PressureSource {
  /** snake_case: the `source` label of rules_overload_pressure_ratio; the log and the 503's detail name it too. */
  readonly name: string;
  /** The current reading: a queue's length, a delay. */
  read(): number;
  /** Above it the process sheds; 0 (or less): read and exported, never shed for. */
  readonly limit: number;
  /** The unit of reading and limit as a detail writes it (`ms`); none for a count. */
  readonly unit?: string;
}

/** One source's last reading against its limit. */
export interface PressureReading {
  readonly source: string;
  readonly reading: number;
  readonly limit: number;
}

/** What /metrics shows of the monitor. */
export interface OverloadStats {
  readonly shedding: boolean;
  /** The last window's event-loop delay, in ms, less the measuring timer's period. */
  readonly delayP99Ms: number;
  readonly delayMaxMs: number;
  /** Each source's last reading (the event-loop delay's is its p99). */
  readonly pressures: readonly PressureReading[];
  /** Requests refused because the process was overloaded, since it started. */
  readonly shed: number;
}

export interface OverloadMonitorOptions {
  /** The p99 event-loop delay past which the process is overloaded, in ms; 0: never for the event loop. */
  maxEventLoopDelayMs: number;
  log: FastifyBaseLogger;
}

/** The name of the event loop's own pressure source. */
export const EVENT_LOOP_DELAY_SOURCE = 'event_loop_delay';

/**
 * Measures the event loop and the watched sources, and says whether the
 * process sheds. `shedding` is a field read: hooks may ask it per request.
 *
 * @example
 * const monitor = new OverloadMonitor({ maxEventLoopDelayMs: config.maxEventLoopDelayMs, log: app.log });
 * monitor.start();
 * if (monitor.shedding) sendProblem(request, reply, PROBLEMS.instanceOverloaded(monitor.reason));
 */
export class OverloadMonitor {
  readonly #log: FastifyBaseLogger;
  readonly #sources: PressureSource[] = [];
  readonly #histogram: IntervalHistogram;
  #timer: NodeJS.Timeout | undefined;
  #delayP99Ms = 0;
  #delayMaxMs = 0;
  #pressures: readonly PressureReading[] = [];
  /** Sources whose last read threw: logged once until they read again. */
  readonly #unreadable = new Set<PressureSource>();
  #shedding = false;
  /** Windows in a row in which a source read above its limit. */
  #overWindows = 0;
  #reason = '';
  #since = 0;
  #shed = 0;
  #shedAtStart = 0;

  constructor(options: OverloadMonitorOptions) {
    this.#log = options.log;
    this.#histogram = monitorEventLoopDelay({ resolution: TUNING.eventLoopResolutionMs.value });
    this.#sources.push({
      name: EVENT_LOOP_DELAY_SOURCE, read: () => this.#delayP99Ms, limit: options.maxEventLoopDelayMs, unit: 'ms',
    });
    // Until the first sample: an idle loop, so that the series exist from the start.
    this.#pressures = [{ source: EVENT_LOOP_DELAY_SOURCE, reading: 0, limit: options.maxEventLoopDelayMs }];
  }

  /** True while the process refuses management requests. */
  get shedding(): boolean {
    return this.#shedding;
  }

  /** What is past its limit, as the 503's detail says it ("event loop delay 350 ms, over its limit of 200 ms"); '' when not shedding. */
  get reason(): string {
    return this.#reason;
  }

  get stats(): OverloadStats {
    return {
      shedding: this.#shedding, delayP99Ms: this.#delayP99Ms, delayMaxMs: this.#delayMaxMs, pressures: this.#pressures, shed: this.#shed,
    };
  }

  /** Adds a source, read from the next sample on. */
  watch(source: PressureSource): void {
    this.#sources.push(source);
  }

  /** Counts a request refused for overload (for the log and rules_overload_shed_total). */
  noteShed(): void {
    this.#shed++;
  }

  /** Starts measuring; the first decision comes one sample later. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#histogram.enable();
    this.#schedule();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#histogram.disable();
  }

  #schedule(): void {
    // Never what keeps a process alive.
    this.#timer = setTimeout(() => this.#sample(), TUNING.overloadSampleMs.value).unref();
  }

  #sample(): void {
    const histogram = this.#histogram;
    const periodMs = TUNING.eventLoopResolutionMs.value;
    // Each stall is one reading, in the window open when the loop got free again: counted once.
    this.#delayP99Ms = histogram.count === 0 ? 0 : Math.max(0, histogram.percentile(99) / 1e6 - periodMs);
    this.#delayMaxMs = histogram.count === 0 ? 0 : Math.max(0, histogram.max / 1e6 - periodMs);
    histogram.reset();

    const pressures: PressureReading[] = [];
    let over: { source: PressureSource; reading: number } | undefined;
    for (const source of this.#sources) {
      let reading: number;
      try {
        reading = source.read();
      } catch (error) {
        if (!this.#unreadable.has(source)) {
          this.#unreadable.add(source);
          this.#log.error({ err: error, source: source.name }, 'overload monitor: a pressure source cannot be read; left out until it can');
        }
        continue;
      }
      this.#unreadable.delete(source);
      pressures.push({ source: source.name, reading, limit: source.limit });
      if (over === undefined && source.limit > 0 && reading > source.limit) over = { source, reading };
    }
    this.#pressures = pressures;
    this.#decide(over);
    this.#schedule();
  }

  #decide(over: { source: PressureSource; reading: number } | undefined): void {
    this.#overWindows = over === undefined ? 0 : this.#overWindows + 1;
    if (over !== undefined && this.#overWindows >= TUNING.overloadWindows.value) {
      const { source, reading } = over;
      const unit = source.unit === undefined ? '' : ` ${source.unit}`;
      this.#reason = `${source.name.replaceAll('_', ' ')} ${Math.round(reading)}${unit}, over its limit of ${source.limit}${unit}`;
      if (!this.#shedding) {
        this.#shedding = true;
        this.#since = performance.now();
        this.#shedAtStart = this.#shed;
        this.#log.warn(
          { source: source.name, reading: Math.round(reading), limit: source.limit },
          `overloaded (${this.#reason}): refusing management requests with 503 and reporting not ready; validations are still answered`,
        );
      }
      return;
    }
    if (over === undefined && this.#shedding) {
      this.#shedding = false;
      this.#reason = '';
      this.#log.info(
        { sheddingMs: Math.round(performance.now() - this.#since), shed: this.#shed - this.#shedAtStart },
        'no longer overloaded: management requests are answered again and readiness is back',
      );
    }
  }
}
