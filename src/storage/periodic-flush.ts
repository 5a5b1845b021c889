/**
 * A background write that runs every so often, one at a time, and once
 * more at shutdown: how uses noted in memory on the hot path (API keys,
 * contexts) reach the database without any request waiting for it.
 * Subclasses say what to write.
 */
export abstract class PeriodicFlush {
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /** Writes what is pending. Must not reject: it logs and keeps what it could not write. */
  protected abstract write(): Promise<void>;

  /** Starts the periodic write; the timer never keeps the process alive. */
  start(intervalMs: number = this.#intervalMs): void {
    this.#timer ??= setInterval(() => void this.flush(), intervalMs).unref();
  }

  /** Stops the timer and writes what is pending (shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /** Writes now, after any write still running. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.write());
    return this.#flushing;
  }
}
