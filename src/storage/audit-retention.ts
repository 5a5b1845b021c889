/**
 * The audit trail's retention (docs/operations.md, "Audit retention"):
 * entries older than AUDIT_RETENTION_DAYS are deleted by a sweep that runs
 * when the process starts and then every TUNING.auditRetentionSweepMs,
 * as the sample writer prunes samples. Every instance sweeps; deleting
 * what another instance deleted already is deleting nothing, so they need
 * no coordination. A sweep the database does not answer is tried again at
 * the next one; the log says so once per outage.
 */
import type { AuditStore } from './types.ts';
import { TUNING } from '../tuning.ts';

export interface AuditRetentionLogger {
  info(o: object, msg?: string): void;
  warn(o: object, msg?: string): void;
}

export interface AuditRetentionOptions {
  audit: Pick<AuditStore, 'deleteOlderThan'>;
  retentionDays: number;
  log: AuditRetentionLogger;
  /** Default TUNING.auditRetentionSweepMs (tests make it short). */
  sweepIntervalMs?: number;
  now?: () => number;
}

const DAY_MS = 86_400_000;

/**
 * The periodic sweep; one per process.
 *
 * @example
 * const retention = new AuditRetention({ audit: storage.audit, retentionDays: config.auditRetentionDays, log });
 * retention.start();
 * await retention.stop();
 */
export class AuditRetention {
  readonly #audit: Pick<AuditStore, 'deleteOlderThan'>;
  readonly #retentionMs: number;
  readonly #log: AuditRetentionLogger;
  readonly #intervalMs: number;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> = Promise.resolve();
  #failing = false;

  constructor(options: AuditRetentionOptions) {
    this.#audit = options.audit;
    this.#retentionMs = options.retentionDays * DAY_MS;
    this.#log = options.log;
    this.#intervalMs = options.sweepIntervalMs ?? TUNING.auditRetentionSweepMs.value;
    this.#now = options.now ?? Date.now;
  }

  /** Sweeps now and then on the timer, which never keeps the process alive. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.sweep(), this.#intervalMs).unref();
    void this.sweep();
  }

  /** Stops the timer and waits for a sweep under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#sweeping;
  }

  /** Deletes the entries past retention, after any sweep still running. Never rejects. */
  sweep(): Promise<void> {
    this.#sweeping = this.#sweeping.then(() => this.#sweep());
    return this.#sweeping;
  }

  async #sweep(): Promise<void> {
    try {
      const olderThan = new Date(this.#now() - this.#retentionMs);
      const deleted = await this.#audit.deleteOlderThan(olderThan, TUNING.auditRetentionBatch.value);
      if (deleted > 0) this.#log.info({ deleted, olderThan: olderThan.toISOString() }, 'deleted audit entries past their retention');
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) {
        this.#failing = true;
        this.#log.warn({ err }, 'could not delete audit entries past their retention; will try again');
      }
    }
  }
}
