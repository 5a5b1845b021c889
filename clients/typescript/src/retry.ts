/**
 * The fetch every request of the client goes through: a deadline per call,
 * and retries with bounded exponential back-off of answers that say "not
 * now" (429 rate limited, 503 unavailable), honouring their Retry-After.
 *
 * Why a fetch wrapper rather than a loop around calls: openapi-fetch hands
 * every request to the `fetch` it was given, so one place covers every
 * typed operation, and the local validator's raw requests use it too.
 */

export interface RetryOptions {
  /** Retries after the first attempt; default 3, 0 turns retrying off. */
  maxRetries?: number;
  /** The first back-off, doubled on each retry (with jitter); default 200 ms. */
  baseDelayMs?: number;
  /**
   * The longest wait before a retry; default 10,000 ms. An answer whose
   * Retry-After asks for longer is not retried: it is thrown at once, with
   * `retryAfterMs`, for the caller to decide.
   */
  maxDelayMs?: number;
}

export interface SendOptions {
  /** The whole call's deadline (retries and waits included), in milliseconds; 0 or undefined: none. */
  timeoutMs?: number;
  /** Cancels the call, retries and waits included. */
  signal?: AbortSignal;
  /** Node: the undici dispatcher (Agent) the request goes through; ignored by browsers. */
  dispatcher?: unknown;
}

export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose answer means "try again later" and nothing happened. */
const RETRYABLE_STATUSES = new Set([429, 503]);
/** Methods safe to repeat after a network failure (the request may have been processed). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** Validation changes nothing: safe to repeat after a network failure. */
const VALIDATION_PATH = /\/api\/v1\/validation\//;

const DEFAULTS = { maxRetries: 3, baseDelayMs: 200, maxDelayMs: 10_000 } as const;

/**
 * Reads Retry-After (seconds or an HTTP date) as milliseconds from now;
 * undefined when absent or unreadable.
 *
 * @example
 * retryAfterMs('2'); // 2000
 */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before retry number `attempt` (0-based): exponential, capped, with jitter so callers refused together do not return together. */
export function backoffMs(attempt: number, retry: Required<RetryOptions>): number {
  const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The caller's signal and a deadline as one signal. */
export function callSignal(options: SendOptions): AbortSignal | undefined {
  const signals: AbortSignal[] = [];
  if (options.signal !== undefined) signals.push(options.signal);
  if (options.timeoutMs !== undefined && options.timeoutMs > 0) signals.push(AbortSignal.timeout(options.timeoutMs));
  if (signals.length <= 1) return signals[0];
  return AbortSignal.any(signals);
}

/**
 * A function that sends a request with retries. The body is read once and
 * sent again on each attempt (a Request's body can be read only once).
 */
export function retryingSender(fetchImpl: FetchFunction, options: RetryOptions = {}) {
  const retry: Required<RetryOptions> = {
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    baseDelayMs: options.baseDelayMs ?? DEFAULTS.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? DEFAULTS.maxDelayMs,
  };
  return async function send(request: Request, sendOptions: SendOptions = {}): Promise<Response> {
    const signal = callSignal({ ...sendOptions, signal: sendOptions.signal ?? request.signal });
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const repeatableOnNetworkError = IDEMPOTENT_METHODS.has(request.method) || VALIDATION_PATH.test(request.url);
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const init: RequestInit = { method: request.method, headers: request.headers, body, signal };
      // Node's fetch reads `dispatcher`; browsers ignore it (and are never given one).
      if (sendOptions.dispatcher !== undefined) Object.assign(init, { dispatcher: sendOptions.dispatcher });
      let response: Response;
      try {
        response = await fetchImpl(request.url, init);
      } catch (error) {
        if (signal?.aborted === true) throw signal.reason;
        if (!repeatableOnNetworkError || attempt >= retry.maxRetries) throw error;
        await sleep(backoffMs(attempt, retry), signal);
        continue;
      }
      if (!RETRYABLE_STATUSES.has(response.status) || attempt >= retry.maxRetries) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      if (asked !== undefined && asked > retry.maxDelayMs) return response;
      // Drain the refused answer so its connection goes back to the pool.
      await response.body?.cancel().catch(() => undefined);
      await sleep(asked ?? backoffMs(attempt, retry), signal);
    }
  };
}

export type Sender = ReturnType<typeof retryingSender>;
