/**
 * Outcome sampling of a local validator: a share of its answers, sent back
 * to the service in batches (POST /api/v1/contexts/{context}/samples) so
 * the tenant's impact report sees local traffic too. Bounded: at most
 * `maxQueued` outcomes wait; more are dropped and counted.
 */

export interface SampleOutcomesOptions {
  /** The share of validations sampled, 0 to 1. */
  rate: number;
  /** Outcomes per request; default 50. */
  batchSize?: number;
  /** The longest an outcome waits before it is sent, in milliseconds; default 5,000. */
  flushMs?: number;
  /** Outcomes kept waiting at most (the rest dropped); default 20 batches. */
  maxQueued?: number;
}

/** One sampled outcome, as the samples route takes it. */
export interface SampledOutcome {
  payload: unknown;
  rulesetVersion: number;
  isValid: boolean;
  errorCodes: string[];
  at: string;
}

export class OutcomeSampler {
  readonly #rate: number;
  readonly #batchSize: number;
  readonly #flushMs: number;
  readonly #maxQueued: number;
  /** Sends a batch; resolves with how many of it the service did not keep (its answer's `dropped`). */
  readonly #post: (samples: SampledOutcome[]) => Promise<number>;
  #queue: SampledOutcome[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #sending: Promise<void> = Promise.resolve();
  /** Outcomes not recorded: the queue was full, their request failed, or the service dropped them (it samples nothing, say). */
  dropped = 0;

  readonly #onFailure: (error: unknown) => void;

  constructor(options: SampleOutcomesOptions, post: (samples: SampledOutcome[]) => Promise<number>, onFailure: (error: unknown) => void = () => undefined) {
    if (!(options.rate >= 0 && options.rate <= 1)) throw new RangeError('sampleOutcomes.rate must be between 0 and 1');
    this.#rate = options.rate;
    this.#batchSize = Math.max(1, options.batchSize ?? 50);
    this.#flushMs = Math.max(0, options.flushMs ?? 5_000);
    this.#maxQueued = Math.max(this.#batchSize, options.maxQueued ?? this.#batchSize * 20);
    this.#post = post;
    this.#onFailure = onFailure;
  }

  /** Whether to keep the next outcome: true with probability `rate` (the caller builds the outcome only then). */
  draw(): boolean {
    return this.#rate !== 0 && Math.random() < this.#rate;
  }

  /** Queues an outcome `draw()` chose; dropped (and counted) when the queue is full. */
  keep(outcome: SampledOutcome): void {
    if (this.#queue.length >= this.#maxQueued) {
      this.dropped++;
      return;
    }
    this.#queue.push(outcome);
    if (this.#queue.length >= this.#batchSize) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.#flushMs);
  }

  /** Sends what waits, one batch at a time; resolves when sent (or dropped after a failure). */
  flush(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#sending = this.#sending.then(async () => {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#batchSize);
        try {
          this.dropped += await this.#post(batch);
        } catch (error) {
          // Samples are best effort: a failed batch is counted and reported, never retried forever.
          this.dropped += batch.length;
          this.#onFailure(error);
        }
      }
    });
    return this.#sending;
  }
}
