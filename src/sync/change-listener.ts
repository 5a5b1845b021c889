/**
 * ChangeListener: one dedicated PostgreSQL connection per process that
 * LISTENs on the changes channel. It is not taken from the pool: a pooled
 * connection goes back to other queries, and LISTEN belongs to a session.
 *
 * When the connection drops (server restart, network, pg_terminate_backend)
 * it reconnects with jittered exponential backoff (250 ms doubling to 5 s),
 * and after every (re)connection calls `onConnected`, because notices sent
 * while nobody listened are gone for good: the caller catches up from the
 * database. `check()` pings the connection, so a silently dead one (no
 * FIN ever arrived) is noticed at the caller's pace, not TCP's.
 */
import pg from 'pg';
import { CHANGES_CHANNEL, parseChangeNotice, type ChangeNotice } from './change-notice.ts';
import { TUNING } from '../tuning.ts';

/** The slice of a pino logger the listener uses. */
export interface ChangeListenerLogger {
  info(o: object, msg?: string): void;
  warn(o: object, msg?: string): void;
}

export interface ChangeListenerOptions {
  connectionString: string;
  onNotice(notice: ChangeNotice): void;
  /** After every successful (re)connection, once LISTEN is in place. */
  onConnected(): void;
  log: ChangeListenerLogger;
  /** Shown in pg_stat_activity; default `rules-listener <pid>`. */
  applicationName?: string;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class ChangeListener {
  readonly #options: ChangeListenerOptions;
  readonly #minBackoffMs: number;
  readonly #maxBackoffMs: number;
  #client: pg.Client | undefined;
  #connecting: Promise<boolean> | undefined;
  #pinging = false;
  #retry: NodeJS.Timeout | undefined;
  #failures = 0;
  #connections = 0;
  #stopped = false;

  constructor(options: ChangeListenerOptions) {
    this.#options = options;
    this.#minBackoffMs = options.minBackoffMs ?? TUNING.listenerMinBackoffMs.value;
    this.#maxBackoffMs = options.maxBackoffMs ?? TUNING.listenerMaxBackoffMs.value;
  }

  /** True while LISTEN is in place on a live connection. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  /** Successful connections so far (1 after start, more after reconnects). */
  get connections(): number {
    return this.#connections;
  }

  /**
   * Connects and listens. Resolves after the first attempt: true when
   * listening; false when it failed, in which case it keeps retrying.
   */
  start(): Promise<boolean> {
    this.#stopped = false;
    return this.#connect();
  }

  /** Pings the connection; a dead one is replaced. Never rejects. */
  async check(): Promise<void> {
    const client = this.#client;
    if (client === undefined) {
      if (this.#connecting === undefined) this.#scheduleReconnect();
      return;
    }
    if (this.#pinging) return;
    this.#pinging = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.query('select 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('listener connection did not answer')), TUNING.listenerPingTimeoutMs.value);
        }),
      ]);
    } catch (error) {
      this.#lost(client, error);
    } finally {
      clearTimeout(timer);
      this.#pinging = false;
    }
  }

  /** Closes the connection and stops reconnecting. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    await this.#connecting;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  #connect(): Promise<boolean> {
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(): Promise<boolean> {
    const client = new pg.Client({
      connectionString: this.#options.connectionString,
      application_name: this.#options.applicationName ?? `rules-listener ${process.pid}`,
      connectionTimeoutMillis: TUNING.listenerConnectTimeoutMs.value,
      keepAlive: true,
    });
    // Without an 'error' listener a dropped connection would crash the process.
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client));
    client.on('notification', (message) => {
      if (message.channel !== CHANGES_CHANNEL || message.payload === undefined) return;
      const notice = parseChangeNotice(message.payload);
      if (notice !== null) this.#options.onNotice(notice);
    });
    try {
      await client.connect();
      // A constant identifier, never input.
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => {});
      if (this.#stopped) return false;
      this.#options.log.warn({ err: error, attempt: this.#failures + 1 }, 'change listener could not connect; retrying');
      this.#failures++;
      this.#scheduleReconnect();
      return false;
    }
    if (this.#stopped) {
      await client.end().catch(() => {});
      return false;
    }
    this.#client = client;
    this.#failures = 0;
    this.#connections++;
    this.#options.log.info({ channel: CHANGES_CHANNEL, connections: this.#connections }, 'change listener is listening');
    this.#options.onConnected();
    return true;
  }

  #lost(client: pg.Client, error?: unknown): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    if (this.#stopped) return;
    this.#options.log.warn({ err: error }, 'change listener connection lost; reconnecting');
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#retry !== undefined) return;
    const ceiling = Math.min(this.#maxBackoffMs, this.#minBackoffMs * 2 ** this.#failures);
    // Jitter, so instances cut off together do not reconnect in lockstep.
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#connect();
    }, delay);
  }
}
