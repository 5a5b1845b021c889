/**
 * Per-request loggers that cost nothing until a request logs.
 *
 * Fastify gives every request a pino child logger bound to its request id.
 * Making one (`logger.child`) serializes the bindings and builds a new
 * logger object, several microseconds per request: on the validation hot
 * path that was the largest single cost Fastify added, for a logger that a
 * request which succeeds never uses (request logging is off unless
 * LOG_LEVEL is debug or trace). The deferred logger keeps the parent and
 * the bindings, and makes the real child on the first call, so a line that
 * is logged still carries the request id and the level the child would
 * have had.
 */
import type { FastifyBaseLogger } from 'fastify';

type Bindings = Record<string, unknown>;
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type LogArgs = Parameters<FastifyBaseLogger['info']>;

/** A FastifyBaseLogger that makes its pino child on first use. */
export class DeferredRequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildOptions;
  #child: FastifyBaseLogger | undefined = undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  /** The real child logger, made once. */
  get resolved(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.#options?.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.resolved.level = level;
  }

  fatal(...args: LogArgs): void {
    this.resolved.fatal(...args);
  }

  error(...args: LogArgs): void {
    this.resolved.error(...args);
  }

  warn(...args: LogArgs): void {
    this.resolved.warn(...args);
  }

  info(...args: LogArgs): void {
    this.resolved.info(...args);
  }

  debug(...args: LogArgs): void {
    this.resolved.debug(...args);
  }

  trace(...args: LogArgs): void {
    this.resolved.trace(...args);
  }

  silent(..._args: LogArgs): void {}

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.resolved.child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a deferred logger per request.
 *
 * @example
 * Fastify({ logger: { level: 'info' }, childLoggerFactory: deferredChildLogger });
 */
export function deferredChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new DeferredRequestLogger(logger, bindings, options);
}
