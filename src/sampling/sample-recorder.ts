/**
 * Sampled traffic, from the request to the samples table (docs/operations.md,
 * "Sampling"). A validation whose tenant samples and whose draw came up
 * hands its outcome to `record`, which only appends it to a bounded queue in
 * memory: no I/O, no copy of the payload, nothing to await. A timer writes
 * the queue in batches with SampleStore.insertMany, and another one prunes
 * every sampled context to its tenant's maxSamples and retention.
 *
 * Bytes are bounded as well as counts: the writer, which writes each
 * payload's JSON text anyway, leaves out a payload longer than
 * SAMPLE_MAX_PAYLOAD_BYTES (counted `too_large`; measured there, off the
 * validation's path), and every insert keeps its tenant's stored sample
 * bytes within SAMPLES_MAX_BYTES_PER_TENANT by deleting the tenant's oldest
 * samples in the same transaction, whatever the number of its contexts.
 *
 * Losing samples is always preferred to slowing or failing validations: a
 * full queue drops the new sample, and a batch the database does not take
 * (an outage) is dropped rather than retried, so memory stays bounded
 * whatever the database does. But one row the database refuses while it
 * answers (a sample of a tenant removed since, which the foreign key
 * refuses) must not take the rest of the batch, other tenants' samples
 * included, with it: the writer then splits the statement that failed in
 * halves, down to single rows, stores every row it can and drops only the
 * refused ones. All three are counted for /metrics; the log says only how
 * many, never whose or what, since samples are the tenants' data.
 *
 * Odd but valid JSON in a payload (a NUL character, a lone surrogate, a
 * very long key) is no reason to refuse a row: the payload column is
 * `json`, which keeps the text as sent (JSON.stringify writes those as
 * `\u0000`, `\ud800` escapes) and gives back exactly that, so the replay
 * is exact. A `jsonb` column would refuse the first two; keep it `json`.
 */
import type { FailureRecord } from '../../compiler/types.ts';
import { refusedRowState } from '../storage/database-errors.ts';
import { PeriodicFlush } from '../storage/periodic-flush.ts';
import { SAMPLES_PER_STATEMENT } from '../storage/sample-store.ts';
import type { SampleRecord, SampleStore, TenantStore } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';

/** What the request path calls when its draw says record. */
export interface SampleSink {
  /**
   * Queues one validated payload. `failures` and `payload` are kept by
   * reference until written: callers must not change them afterwards (the
   * validation paths never do). `size` is the payload's cost-model size
   * (payload-guard.ts), which bounds what the queue holds in memory.
   * False when the queue is full and the sample was dropped.
   */
  record(
    tenantId: string, context: string, rulesetVersion: number, recordedAt: number, isValid: boolean,
    failures: readonly FailureRecord[], payload: unknown, size: number,
  ): boolean;
  /**
   * Drops what is queued for the tenant recorded at or before `purgedAt`
   * (ms) and resolves once a write under way has ended: its samples were
   * just deleted. (The store itself never keeps a sample recorded before a
   * purge, whenever it is written; this frees the memory.)
   */
  purged(tenantId: string, purgedAt: number): Promise<void>;
}

/** Counts for /metrics (no tenant, context or payload in them). */
export interface SamplerStats {
  /** Samples stored. */
  readonly written: number;
  /** Samples dropped because the queue was full (in count or in payload size). */
  readonly droppedQueueFull: number;
  /** Samples dropped because the database could not take their batch (an outage, or a failure that is not about a row). */
  readonly droppedWriteFailed: number;
  /** Samples dropped because the database refused that very row while it took the others. */
  readonly droppedRejected: number;
  /** Samples dropped because their payload's JSON text was longer than SAMPLE_MAX_PAYLOAD_BYTES. */
  readonly droppedTooLarge: number;
  /** Samples waiting to be written. */
  readonly queued: number;
}

export interface SamplerLogger {
  warn(o: object, msg?: string): void;
}

export interface SampleRecorderOptions {
  samples: Pick<SampleStore, 'insertMany' | 'sampled' | 'prune' | 'trimToBytes'>;
  tenants: Pick<TenantStore, 'getSampling'>;
  log: SamplerLogger;
  /** SAMPLES_MAX_BYTES_PER_TENANT. */
  maxBytesPerTenant: number;
  /** SAMPLE_MAX_PAYLOAD_BYTES. */
  maxPayloadBytes: number;
  /** Samples the queue holds; default TUNING.samplingQueueMax (tests make it tiny). */
  maxQueued?: number;
  /** Total payload size the queue holds; default TUNING.samplingQueueMaxSize. */
  maxQueuedSize?: number;
  /** Default TUNING.samplingFlushMs. */
  flushIntervalMs?: number;
  /** Default TUNING.samplingPruneMs. */
  pruneIntervalMs?: number;
  now?: () => number;
}

interface Pending {
  readonly tenantId: string;
  readonly context: string;
  readonly rulesetVersion: number;
  readonly recordedAt: number;
  readonly isValid: boolean;
  readonly failures: readonly FailureRecord[];
  readonly payload: unknown;
  readonly size: number;
}

const HOUR_MS = 3_600_000;

/**
 * The queue and its background writer; one per process.
 *
 * @example
 * const sampler = new SampleRecorder({ samples: storage.samples, tenants: storage.tenants, log });
 * sampler.start();
 * sampler.record('acme', 'orders', 3, Date.now(), false, result.failures, payload);
 * await sampler.stop(); // writes what is queued
 */
export class SampleRecorder extends PeriodicFlush implements SampleSink {
  readonly #samples: Pick<SampleStore, 'insertMany' | 'sampled' | 'prune' | 'trimToBytes'>;
  readonly #tenants: Pick<TenantStore, 'getSampling'>;
  readonly #log: SamplerLogger;
  readonly #maxBytesPerTenant: number;
  readonly #maxPayloadBytes: number;
  readonly #maxQueued: number;
  readonly #maxQueuedSize: number;
  readonly #pruneIntervalMs: number;
  readonly #now: () => number;
  #queue: Pending[] = [];
  #queuedSize = 0;
  #pruneTimer: NodeJS.Timeout | undefined;
  #pruning: Promise<void> = Promise.resolve();
  #written = 0;
  #droppedQueueFull = 0;
  #droppedWriteFailed = 0;
  #droppedRejected = 0;
  #droppedTooLarge = 0;
  // One warning per outage, not one per batch.
  #writeFailing = false;
  #pruneFailing = false;

  constructor(options: SampleRecorderOptions) {
    super(options.flushIntervalMs ?? TUNING.samplingFlushMs.value);
    this.#samples = options.samples;
    this.#tenants = options.tenants;
    this.#log = options.log;
    this.#maxBytesPerTenant = options.maxBytesPerTenant;
    this.#maxPayloadBytes = options.maxPayloadBytes;
    this.#maxQueued = options.maxQueued ?? TUNING.samplingQueueMax.value;
    this.#maxQueuedSize = options.maxQueuedSize ?? TUNING.samplingQueueMaxSize.value;
    this.#pruneIntervalMs = options.pruneIntervalMs ?? TUNING.samplingPruneMs.value;
    this.#now = options.now ?? Date.now;
  }

  record(
    tenantId: string, context: string, rulesetVersion: number, recordedAt: number, isValid: boolean,
    failures: readonly FailureRecord[], payload: unknown, size: number,
  ): boolean {
    if (this.#queue.length >= this.#maxQueued || this.#queuedSize + size > this.#maxQueuedSize) {
      this.#droppedQueueFull++;
      return false;
    }
    this.#queuedSize += size;
    this.#queue.push({ tenantId, context, rulesetVersion, recordedAt, isValid, failures, payload, size });
    return true;
  }

  get stats(): SamplerStats {
    return {
      written: this.#written,
      droppedQueueFull: this.#droppedQueueFull,
      droppedWriteFailed: this.#droppedWriteFailed,
      droppedRejected: this.#droppedRejected,
      droppedTooLarge: this.#droppedTooLarge,
      queued: this.#queue.length,
    };
  }

  purged(tenantId: string, purgedAt: number): Promise<void> {
    this.#queue = this.#queue.filter((sample) => sample.tenantId !== tenantId || sample.recordedAt > purgedAt);
    this.#queuedSize = this.#queue.reduce((total, sample) => total + sample.size, 0);
    return this.flush();
  }

  override start(): void {
    super.start();
    this.#pruneTimer ??= setInterval(() => void this.prune(), this.#pruneIntervalMs).unref();
  }

  override async stop(): Promise<void> {
    clearInterval(this.#pruneTimer);
    this.#pruneTimer = undefined;
    await super.stop();
  }

  /**
   * Writes the queue one statement (SAMPLES_PER_STATEMENT rows, all or
   * nothing) at a time. A statement the database refuses for its data
   * (refusedRowState) is split in halves and each written again, down to single
   * rows: the good rows are stored, a single row still refused is dropped
   * and counted `rejected`. Any other failure (an outage, or an error not
   * about a row) drops that statement's rows and the rest of the batch as
   * `write_failed`, without retrying: a database that is away is not
   * hammered. Splitting costs at most about two statements per refused
   * row's share of the batch, and only when rows are refused.
   */
  protected async write(): Promise<void> {
    if (this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    this.#queuedSize = 0;
    const records: SampleRecord[] = [];
    for (const sample of batch) {
      const record = toRecord(sample);
      if (Buffer.byteLength(record.payloadText!, 'utf8') > this.#maxPayloadBytes) this.#droppedTooLarge++;
      else records.push(record);
    }
    const pieces: SampleRecord[][] = [];
    for (let start = 0; start < records.length; start += SAMPLES_PER_STATEMENT) {
      pieces.push(records.slice(start, start + SAMPLES_PER_STATEMENT));
    }
    let rejected = 0;
    let rejectedCode: string | undefined;
    for (let piece = pieces.shift(); piece !== undefined; piece = pieces.shift()) {
      try {
        // Samples of before their tenant's purge are left out, not stored and not dropped for a fault.
        this.#written += await this.#samples.insertMany(piece, this.#maxBytesPerTenant);
        this.#writeFailing = false;
      } catch (err) {
        const code = refusedRowState(err);
        if (code === undefined) {
          const dropped = pieces.reduce((total, rest) => total + rest.length, piece.length);
          this.#droppedWriteFailed += dropped;
          if (!this.#writeFailing) {
            this.#writeFailing = true;
            this.#log.warn({ err, dropped }, 'could not store sampled validations; they are dropped until the database answers');
          }
          break;
        }
        if (piece.length === 1) {
          rejected++;
          rejectedCode ??= code;
          continue;
        }
        const half = Math.ceil(piece.length / 2);
        pieces.unshift(piece.slice(0, half), piece.slice(half));
      }
    }
    if (rejected > 0) {
      this.#droppedRejected += rejected;
      // The SQLSTATE only: the driver's message and detail may quote the row (its tenant, its payload).
      this.#log.warn({ rejected, sqlState: rejectedCode }, 'the database refused some sampled validations; they are dropped, the others stored');
    }
  }

  /**
   * Drops, in every sampled context, the samples past its tenant's
   * maxSamples and those older than its retention, then each tenant's
   * oldest past SAMPLES_MAX_BYTES_PER_TENANT (writes keep that already; a
   * budget lowered since is met here). Runs on its timer; one sweep at a
   * time. Never rejects.
   */
  prune(): Promise<void> {
    this.#pruning = this.#pruning.then(() => this.#sweep());
    return this.#pruning;
  }

  async #sweep(): Promise<void> {
    try {
      const sampled = await this.#samples.sampled();
      const settings = new Map<string, { maxSamples: number; olderThan: Date }>();
      for (const { tenantId, context } of sampled) {
        let bounds = settings.get(tenantId);
        if (bounds === undefined) {
          const own = await this.#tenants.getSampling(tenantId);
          bounds = { maxSamples: own.maxSamples, olderThan: new Date(this.#now() - own.retentionHours * HOUR_MS) };
          settings.set(tenantId, bounds);
        }
        await this.#samples.prune(tenantId, context, bounds.maxSamples, bounds.olderThan);
      }
      for (const tenantId of settings.keys()) await this.#samples.trimToBytes(tenantId, this.#maxBytesPerTenant);
      this.#pruneFailing = false;
    } catch (err) {
      if (!this.#pruneFailing) {
        this.#pruneFailing = true;
        this.#log.warn({ err }, 'could not prune sampled validations; will try again');
      }
    }
  }
}

/** The stored form: the failing rule codes once each, in the order they first failed. */
function toRecord(sample: Pending): SampleRecord {
  const codes: string[] = [];
  for (const failure of sample.failures) {
    if (!codes.includes(failure.ruleCode)) codes.push(failure.ruleCode);
  }
  return {
    tenantId: sample.tenantId,
    context: sample.context,
    recordedAt: new Date(sample.recordedAt),
    rulesetVersion: sample.rulesetVersion,
    isValid: sample.isValid,
    failures: codes,
    payload: sample.payload,
    payloadText: JSON.stringify(sample.payload),
  };
}
