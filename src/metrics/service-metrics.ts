/**
 * The service's Prometheus metrics, in a registry per app (never
 * prom-client's global one), plus the process metrics of process-metrics.ts
 * when rendered.
 *
 * Hot-path recording allocates nothing: request latencies go to series
 * created once per route and status (latency-histogram.ts), and the per-request counters
 * (cache hits, validations) are plain numbers copied into their prom-client
 * counters when /metrics is scraped. Tenant and context labels
 * (METRICS_TENANT_LABELS) trade that for one label object per observation
 * and one series per tenant and context: for deployments with few tenants.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { OverloadStats } from '../overload/overload-monitor.ts';
import type { RateLimitObserver, RateLimitScope, RateLimitStoreStatus } from '../rate-limit/register-rate-limit.ts';
import type { ManagementPoolObserver } from '../pool/management-pool.ts';
import type { SamplerStats } from '../sampling/sample-recorder.ts';
import type { InstallObserver } from '../validators/compile-validator.ts';
import type { ValidatorCacheObserver } from '../validators/validator-cache.ts';
import { LatencyHistogram, type HistogramSeries } from './latency-histogram.ts';
import { processMetrics } from './process-metrics.ts';

/** The management pool as a scrape sees it. */
export interface PoolState {
  queued: number;
  running: number;
  threads: number;
}

/** The three validation operations, as labelled. */
export type ValidationOperation = 'single' | 'batch' | 'transaction';

/** Records one response of a route: status code, seconds, and the tenant when known. */
export type RequestRecorder = (statusCode: number, seconds: number, tenantId: string | undefined) => void;

export interface ServiceMetricsOptions {
  /** Add tenant (and, where there is one, context) labels. */
  tenantLabels: boolean;
}

/** Latency buckets in seconds: validations take tens of microseconds, management calls milliseconds. */
const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const COMPILE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const OPERATIONS: readonly ValidationOperation[] = ['single', 'batch', 'transaction'];
const OPERATION_INDEX: Record<ValidationOperation, number> = { single: 0, batch: 1, transaction: 2 };

/**
 * All metrics of one app.
 *
 * @example
 * const metrics = new ServiceMetrics({ tenantLabels: config.metricsTenantLabels });
 * const cache = new ValidatorCache({ ...options, observer: metrics.validatorCache });
 * const text = await metrics.render();
 */
export class ServiceMetrics {
  /** This app's registry. */
  readonly registry = new Registry();
  /** Handed to ValidatorCache. */
  readonly validatorCache: ValidatorCacheObserver;
  /** Handed to registerRateLimit. */
  readonly rateLimit: RateLimitObserver;
  /** Handed to the management pool. */
  readonly pool: ManagementPoolObserver;
  /** Told of each validator installed from a compile thread's build. */
  readonly installs: InstallObserver;

  readonly #tenantLabels: boolean;
  readonly #requestDuration: LatencyHistogram;
  readonly #validations: Counter;
  readonly #failures: Counter;
  readonly #cacheHits: Counter;
  readonly #cacheMisses: Counter;
  readonly #compiles: Counter;
  readonly #compileDuration: Histogram;
  readonly #rateLimited: Counter;
  // Without tenant labels, the hottest counters are plain numbers until a scrape.
  #hits = 0;
  readonly #validCounts = [0, 0, 0];
  readonly #invalidCounts = [0, 0, 0];
  readonly #failureCounts = [0, 0, 0];
  #cacheSize: () => number = () => 0;
  #cacheBytes: () => number = () => 0;
  #rateLimitStore: RateLimitStoreStatus | undefined;
  #samplerStats: () => SamplerStats = () => ({ written: 0, droppedQueueFull: 0, droppedWriteFailed: 0, droppedRejected: 0, droppedTooLarge: 0, queued: 0 });
  #overloadStats: () => OverloadStats = () => ({ shedding: false, delayP99Ms: 0, delayMaxMs: 0, pressures: [], shed: 0 });
  readonly #recorders = new Map<string, RequestRecorder>();
  #poolState: () => PoolState = () => ({ queued: 0, running: 0, threads: 0 });

  constructor(options: ServiceMetricsOptions) {
    this.#tenantLabels = options.tenantLabels;
    const tenant = options.tenantLabels ? ['tenant'] : [];
    const tenantContext = options.tenantLabels ? ['tenant', 'context'] : [];
    const registers = [this.registry];
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- prom-client calls collect() with `this` bound to the metric; `self` is the service metrics
    const self = this;

    this.#requestDuration = new LatencyHistogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route pattern and status code, from arrival to response.',
      buckets: LATENCY_BUCKETS,
      registry: this.registry,
    });
    this.#validations = new Counter({
      name: 'rules_validations_total',
      help: 'Payloads validated (a batch item or a transaction context is one), by operation and result.',
      labelNames: ['operation', 'result', ...tenantContext],
      registers,
      collect() {
        if (!self.#tenantLabels) self.#copyValidations(this);
      },
    });
    this.#failures = new Counter({
      name: 'rules_validation_failures_total',
      help: 'Failure records reported by validations, by operation.',
      labelNames: ['operation', ...tenantContext],
      registers,
      collect() {
        if (!self.#tenantLabels) self.#copyFailures(this);
      },
    });
    this.#cacheHits = new Counter({
      name: 'rules_validator_cache_hits_total',
      help: 'Validator lookups answered from memory.',
      labelNames: tenantContext,
      registers,
      collect() {
        if (self.#tenantLabels) return;
        this.reset();
        this.inc(self.#hits);
      },
    });
    this.#cacheMisses = new Counter({
      name: 'rules_validator_cache_misses_total',
      help: 'Validator loads from the database on a cache miss (concurrent misses share one load); an empty context label: no published ruleset.',
      labelNames: tenantContext,
      registers,
    });
    this.#compiles = new Counter({
      name: 'rules_validator_compiles_total',
      help: 'Ruleset compiles for the validator cache (warm starts, cache misses, publishes, recompiles), by result.',
      labelNames: ['result', ...tenantContext],
      registers,
    });
    this.#compileDuration = new Histogram({
      name: 'rules_validator_compile_duration_seconds',
      help: 'Time to compile a ruleset into a validator.',
      labelNames: tenantContext,
      buckets: COMPILE_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'rules_validator_cache_entries',
      help: 'Compiled validators held in memory.',
      registers,
      collect() {
        this.set(self.#cacheSize());
      },
    });
    new Gauge({
      name: 'rules_validator_cache_bytes',
      help: 'Estimated heap of the compiled validators held in memory (bounded by VALIDATOR_CACHE_MB).',
      registers,
      collect() {
        this.set(self.#cacheBytes());
      },
    });
    // Sampled traffic: counts only, never a tenant, context or payload (samples are the tenants' data).
    new Counter({
      name: 'rules_samples_written_total',
      help: 'Sampled validations stored for impact reports.',
      registers,
      collect() {
        this.reset();
        this.inc(self.#samplerStats().written);
      },
    });
    new Counter({
      name: 'rules_samples_dropped_total',
      help: 'Sampled validations dropped, by reason: queue_full (the in-memory queue was full), write_failed (the database could not take their batch: an outage), rejected (the database refused that very sample, e.g. its tenant was removed; the others were stored), too_large (its payload was longer than SAMPLE_MAX_PAYLOAD_BYTES).',
      labelNames: ['reason'],
      registers,
      collect() {
        const stats = self.#samplerStats();
        this.reset();
        this.inc({ reason: 'queue_full' }, stats.droppedQueueFull);
        this.inc({ reason: 'write_failed' }, stats.droppedWriteFailed);
        this.inc({ reason: 'rejected' }, stats.droppedRejected);
        this.inc({ reason: 'too_large' }, stats.droppedTooLarge);
      },
    });
    new Gauge({
      name: 'rules_samples_queued',
      help: 'Sampled validations waiting in memory to be written.',
      registers,
      collect() {
        this.set(self.#samplerStats().queued);
      },
    });
    // Overload (src/overload/overload-monitor.ts). With WORKERS > 1 the delays and ratios are the
    // worst worker's, and shedding counts the workers shedding.
    new Gauge({
      name: 'rules_event_loop_delay_p99_seconds',
      help: 'Event-loop delay over the last half second, 99th percentile, less the measuring timer\'s period: what MAX_EVENT_LOOP_DELAY_MS is compared with.',
      registers,
      aggregator: 'max',
      collect() {
        this.set(self.#overloadStats().delayP99Ms / 1000);
      },
    });
    new Gauge({
      name: 'rules_event_loop_delay_max_seconds',
      help: 'Event-loop delay over the last half second, longest, less the measuring timer\'s period.',
      registers,
      aggregator: 'max',
      collect() {
        this.set(self.#overloadStats().delayMaxMs / 1000);
      },
    });
    new Gauge({
      name: 'rules_overload_pressure_ratio',
      help: 'Each overload source\'s last reading over its limit (event_loop_delay: the p99 over MAX_EVENT_LOOP_DELAY_MS); above 1 the process sheds. Sources without a limit are left out.',
      labelNames: ['source'],
      registers,
      aggregator: 'max',
      collect() {
        this.reset();
        for (const { source, reading, limit } of self.#overloadStats().pressures) if (limit > 0) this.set({ source }, reading / limit);
      },
    });
    new Gauge({
      name: 'rules_overload_shedding',
      help: '1 while the process is overloaded: it refuses management requests with 503 and /health/ready is 503 (with WORKERS > 1: the workers shedding).',
      registers,
      collect() {
        this.set(self.#overloadStats().shedding ? 1 : 0);
      },
    });
    new Counter({
      name: 'rules_overload_shed_total',
      help: 'Management requests refused with 503 because the process was overloaded.',
      registers,
      collect() {
        this.reset();
        this.inc(self.#overloadStats().shed);
      },
    });
    this.#rateLimited = new Counter({
      name: 'rules_rate_limited_total',
      help: 'Requests refused with 429, by budget: tenant, or client address for unauthenticated requests.',
      labelNames: ['scope', ...tenant],
      registers,
    });
    for (const scope of ['tenant', 'address']) {
      if (!options.tenantLabels) this.#rateLimited.inc({ scope }, 0);
    }
    new Gauge({
      name: 'rules_rate_limit_store_mode',
      help: 'Where rate-limit budgets are counted now: 1 for the mode in force, shared (Redis, every instance) or local (this process: no REDIS_URL, or Redis slow or down).',
      labelNames: ['mode'],
      registers,
      collect() {
        const mode = self.#rateLimitStore?.mode ?? 'local';
        this.set({ mode: 'shared' }, mode === 'shared' ? 1 : 0);
        this.set({ mode: 'local' }, mode === 'local' ? 1 : 0);
      },
    });
    new Counter({
      name: 'rules_rate_limit_store_fallbacks_total',
      help: 'Times rate-limit counting fell back from Redis to this process because Redis was slow or unreachable.',
      registers,
      collect() {
        this.reset();
        this.inc(self.#rateLimitStore?.fallbacks ?? 0);
      },
    });

    this.pool = this.#poolMetrics(registers);
    this.installs = installMetrics(registers);

    this.validatorCache = options.tenantLabels
      ? {
        hit: (tenantId, context) => this.#cacheHits.inc({ tenant: tenantId, context }),
        // An empty context label: the load found no published ruleset (see ValidatorCacheObserver.miss).
        miss: (tenantId, context) => this.#cacheMisses.inc({ tenant: tenantId, context: context ?? '' }),
        compiled: (tenantId, context, durationMs, succeeded) => {
          this.#compiles.inc({ result: succeeded ? 'ok' : 'error', tenant: tenantId, context });
          this.#compileDuration.observe({ tenant: tenantId, context }, durationMs / 1000);
        },
      }
      : {
        hit: () => {
          this.#hits++;
        },
        miss: () => this.#cacheMisses.inc(),
        compiled: (_tenantId, _context, durationMs, succeeded) => {
          this.#compiles.inc({ result: succeeded ? 'ok' : 'error' });
          this.#compileDuration.observe(durationMs / 1000);
        },
      };
    this.rateLimit = {
      rejected: (scope: RateLimitScope, tenantId: string | undefined) => {
        if (options.tenantLabels) this.#rateLimited.inc({ scope, tenant: tenantId ?? '' });
        else this.#rateLimited.inc({ scope });
      },
      watchStore: (store) => {
        this.#rateLimitStore = store;
      },
    };
  }

  /** The Content-Type of `render()`'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Reports the cache's size at each scrape. */
  watchValidatorCache(size: () => number, bytes: () => number = () => 0): void {
    this.#cacheSize = size;
    this.#cacheBytes = bytes;
  }

  /** Reports the management pool's queue and threads at each scrape. */
  watchPool(state: () => PoolState): void {
    this.#poolState = state;
  }

  /** The management pool's metrics (src/pool/): never per tenant, whatever METRICS_TENANT_LABELS says. */
  #poolMetrics(registers: Registry[]): ManagementPoolObserver {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- prom-client calls collect() with `this` bound to the metric
    const self = this;
    new Gauge({
      name: 'rules_pool_tasks_queued',
      help: 'Heavy management tasks waiting for a management thread, all tenants together.',
      registers,
      collect() {
        this.set(self.#poolState().queued);
      },
    });
    new Gauge({
      name: 'rules_pool_tasks_running',
      help: 'Heavy management tasks running on a management thread.',
      registers,
      collect() {
        this.set(self.#poolState().running);
      },
    });
    new Gauge({
      name: 'rules_pool_threads',
      help: 'Management threads started (busy or idle; idle ones end after a while).',
      registers,
      collect() {
        this.set(self.#poolState().threads);
      },
    });
    const tasks = new Counter({
      name: 'rules_pool_tasks_total',
      help: 'Tasks run on a management thread, by kind and outcome: done, refused (a problem of the request, e.g. a ruleset that does not compile), over_time or over_memory (stopped at the operation\'s budget), failed (an internal error).',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    const duration = new Histogram({
      name: 'rules_pool_task_duration_seconds',
      help: 'Time a task spent on a management thread, by kind.',
      labelNames: ['kind'],
      buckets: COMPILE_BUCKETS,
      registers,
    });
    const refused = new Counter({
      name: 'rules_pool_operations_refused_total',
      help: 'Heavy management operations refused before they ran, by reason: tenant_bound (429, the tenant had OPERATIONS_PER_TENANT in flight), tenant_queue (429, it waited its time budget for a thread behind the tenant\'s own operations), threads_busy (503, behind other tenants\' operations only).',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['tenant_bound', 'tenant_queue', 'threads_busy']) refused.inc({ reason }, 0);
    return {
      taskEnded: (kind, outcome, seconds) => {
        tasks.inc({ kind, outcome });
        duration.observe({ kind }, seconds);
      },
      operationRefused: (reason) => refused.inc({ reason }),
    };
  }

  /** Reports the sample queue's counts at each scrape. */
  watchSampler(stats: () => SamplerStats): void {
    this.#samplerStats = stats;
  }

  /** Reports the overload monitor's figures at each scrape. */
  watchOverload(stats: () => OverloadStats): void {
    this.#overloadStats = stats;
  }

  /**
   * A recorder for one route. It keeps one series per status code (and
   * tenant), so recording allocates nothing once a combination was seen.
   */
  requestRecorder(method: string, route: string): RequestRecorder {
    // One recorder per route, however many callers ask (the route's hook and
    // the validation fast lane): two would write the same series twice.
    const key = `${method} ${route}`;
    let recorder = this.#recorders.get(key);
    if (recorder === undefined) {
      recorder = this.#newRequestRecorder(method, route);
      this.#recorders.set(key, recorder);
    }
    return recorder;
  }

  #newRequestRecorder(method: string, route: string): RequestRecorder {
    const histogram = this.#requestDuration;
    if (this.#tenantLabels) {
      const byTenant = new Map<string, Map<number, HistogramSeries>>();
      return (statusCode, seconds, tenantId = '') => {
        let byStatus = byTenant.get(tenantId);
        if (byStatus === undefined) {
          byStatus = new Map();
          byTenant.set(tenantId, byStatus);
        }
        let series = byStatus.get(statusCode);
        if (series === undefined) {
          series = histogram.series({ method, route, status_code: String(statusCode), tenant: tenantId });
          byStatus.set(statusCode, series);
        }
        series.observe(seconds);
      };
    }
    const byStatus = new Map<number, HistogramSeries>();
    return (statusCode, seconds) => {
      let series = byStatus.get(statusCode);
      if (series === undefined) {
        series = histogram.series({ method, route, status_code: String(statusCode) });
        byStatus.set(statusCode, series);
      }
      series.observe(seconds);
    };
  }

  /** Records payloads validated by one request (or one context of a transaction). */
  recordValidations(
    operation: ValidationOperation,
    valid: number,
    invalid: number,
    failures: number,
    tenantId: string,
    context: string,
  ): void {
    if (!this.#tenantLabels) {
      const index = OPERATION_INDEX[operation];
      this.#validCounts[index] += valid;
      this.#invalidCounts[index] += invalid;
      this.#failureCounts[index] += failures;
      return;
    }
    if (valid > 0) this.#validations.inc({ operation, result: 'valid', tenant: tenantId, context }, valid);
    if (invalid > 0) this.#validations.inc({ operation, result: 'invalid', tenant: tenantId, context }, invalid);
    if (failures > 0) this.#failures.inc({ operation, tenant: tenantId, context }, failures);
  }

  /** The exposition text: process metrics, then this app's. */
  async render(): Promise<string> {
    const [processText, appText] = await Promise.all(this.registries.map((registry) => registry.metrics()));
    return `${processText}\n${appText}`;
  }

  /** What `render()` renders: the process's metrics, then this app's. */
  get registries(): Registry[] {
    return [processMetrics(), this.registry];
  }

  #copyValidations(counter: Counter): void {
    counter.reset();
    for (let i = 0; i < OPERATIONS.length; i++) {
      counter.inc({ operation: OPERATIONS[i], result: 'valid' }, this.#validCounts[i]);
      counter.inc({ operation: OPERATIONS[i], result: 'invalid' }, this.#invalidCounts[i]);
    }
  }

  #copyFailures(counter: Counter): void {
    counter.reset();
    for (let i = 0; i < OPERATIONS.length; i++) counter.inc({ operation: OPERATIONS[i] }, this.#failureCounts[i]);
  }
}

/**
 * How installs of compiled validators share the event loop: the parts
 * installed and the turns they took (a large build takes at least a turn
 * per part), the longest slice of each install, and how many parts came
 * from the compile lane's code cache.
 */
function installMetrics(registers: Registry[]): InstallObserver {
  const parts = new Counter({
    name: 'rules_validator_install_parts_total',
    help: 'Parts of generated code instantiated by validator installs (a ruleset in one piece is one part; a large one has a part per 128 rules or so).',
    registers,
  });
  const slices = new Counter({
    name: 'rules_validator_install_slices_total',
    help: 'Turns of the event loop validator installs ran in: at least one per part, so that validations are answered between them.',
    registers,
  });
  const longest = new Histogram({
    name: 'rules_validator_install_longest_slice_seconds',
    help: 'The longest run of work of each validator install between two turns of the event loop.',
    buckets: COMPILE_BUCKETS,
    registers,
  });
  const cachedParts = new Counter({
    name: 'rules_validator_install_code_cache_parts_total',
    help: "Parts installed from the compile lane's V8 code cache (`used`), or compiled anew because V8 rejected it (`rejected`).",
    labelNames: ['outcome'],
    registers,
  });
  // Both series from the start, so that a rate over them reads 0 rather than nothing.
  cachedParts.inc({ outcome: 'used' }, 0);
  cachedParts.inc({ outcome: 'rejected' }, 0);
  return (figures) => {
    parts.inc(figures.parts);
    slices.inc(figures.slices);
    longest.observe(figures.longestSliceMs / 1000);
    cachedParts.inc({ outcome: 'used' }, figures.codeCache.used);
    cachedParts.inc({ outcome: 'rejected' }, figures.codeCache.rejected);
  };
}
