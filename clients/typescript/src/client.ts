/**
 * The typed client: every operation of the service's OpenAPI document
 * through openapi-fetch (`client.api`), the three validations as methods,
 * problems thrown as RulesApiError, retries and deadlines on every call
 * (retry.ts), and local validators (local/local-validator.ts).
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { problemError } from './errors.ts';
import type { operations, paths } from './generated/api-types.ts';
import { LocalValidator, type LocalValidatorOptions } from './local/local-validator.ts';
import { retryAfterMs, retryingSender, type FetchFunction, type RetryOptions, type Sender, type SendOptions } from './retry.ts';

type Json<T extends { content: { 'application/json': unknown } }> = T['content']['application/json'];

/** The body of a single validation, and its answer. */
export type ValidationRequest = Json<operations['validateSingle']['requestBody']>;
export type ValidationResult = Json<operations['validateSingle']['responses'][200]>;
/** The body of a batch validation, and its answer. */
export type BatchValidationRequest = Json<operations['validateBatch']['requestBody']>;
export type BatchValidationResult = Json<operations['validateBatch']['responses'][200]>;
/** The body of a transaction validation, and its answer. */
export type TransactionValidationRequest = Json<operations['validateTransaction']['requestBody']>;
export type TransactionValidationResult = Json<operations['validateTransaction']['responses'][200]>;

export interface RulesClientOptions {
  /** Where the service is, e.g. `https://rules.example.com` (without `/api/v1`). */
  baseUrl: string;
  /** Sent as X-Tenant-Id. */
  tenantId: string;
  /** Sent as X-Api-Key. */
  apiKey: string;
  /** Retries of 429 and 503 answers (and of network failures of requests safe to repeat). */
  retry?: RetryOptions;
  /** Every call's deadline, retries included, in milliseconds; default 30,000; 0: none. A call's own `timeoutMs` replaces it. */
  timeoutMs?: number;
  /**
   * Node only: the undici Dispatcher requests go through, e.g. an `Agent`
   * with your own keep-alive and connection limits. Without it Node's
   * global dispatcher is used, which keeps connections alive already.
   */
  dispatcher?: unknown;
  /** The fetch to use; default globalThis.fetch. */
  fetch?: FetchFunction;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/** Options of one call. */
export interface CallOptions {
  /** Cancels the call (retries and waits included). */
  signal?: AbortSignal;
  /** This call's deadline in milliseconds, replacing the client's `timeoutMs`. */
  timeoutMs?: number;
}

/** The request property that carries a call's own deadline from a method to the fetch (openapi-fetch copies unknown init keys onto the Request). */
const TIMEOUT_PROPERTY = 'rulesTimeoutMs';
const DEFAULT_TIMEOUT_MS = 30_000;

/** Throws every failed answer as a RulesApiError, so typed calls resolve to their data. */
const problemsAsErrors: Middleware = {
  async onResponse({ response }) {
    if (response.ok) return undefined;
    throw await problemError(response, retryAfterMs(response.headers.get('retry-after')));
  },
};

export class RulesClient {
  /**
   * Every operation of the OpenAPI document, typed from it (openapi-fetch).
   * Calls resolve to `{ data, response }`; failed answers are thrown as
   * RulesApiError. Pass `signal` for cancellation.
   *
   * @example
   * const { data: rules } = await client.api.GET('/api/v1/rules', { params: { query: { context: 'orders' } } });
   */
  readonly api: Client<paths>;
  readonly baseUrl: string;
  /** The tenant every request is sent for (X-Tenant-Id). */
  readonly tenantId: string;
  readonly #options: RulesClientOptions;
  readonly #send: Sender;
  readonly #headers: Record<string, string>;

  constructor(options: RulesClientOptions) {
    this.#options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.tenantId = options.tenantId;
    this.#headers = { ...options.headers, 'x-api-key': options.apiKey, 'x-tenant-id': options.tenantId };
    this.#send = retryingSender(options.fetch ?? ((input, init) => globalThis.fetch(input, init)), options.retry);
    const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      headers: this.#headers,
      fetch: (request) => {
        const own = (request as unknown as Record<string, unknown>)[TIMEOUT_PROPERTY];
        return this.#send(request, { timeoutMs: typeof own === 'number' ? own : defaultTimeoutMs, dispatcher: options.dispatcher });
      },
    });
    this.api.use(problemsAsErrors);
  }

  /** Validates one payload against its context's published rules. */
  async validate(request: ValidationRequest, options: CallOptions = {}): Promise<ValidationResult> {
    const { data } = await this.api.POST('/api/v1/validation/validate', { body: request, ...callInit(options) });
    return present(data);
  }

  /** Validates many payloads of one context, each on its own. */
  async validateBatch(request: BatchValidationRequest, options: CallOptions = {}): Promise<BatchValidationResult> {
    const { data } = await this.api.POST('/api/v1/validation/validate-batch', { body: request, ...callInit(options) });
    return present(data);
  }

  /** Validates the payloads of a transaction, across contexts, as one. */
  async validateTransaction(request: TransactionValidationRequest, options: CallOptions = {}): Promise<TransactionValidationResult> {
    const { data } = await this.api.POST('/api/v1/validation/validate-transaction', { body: request, ...callInit(options) });
    return present(data);
  }

  /**
   * A validator of `context` that runs the published rules in this process
   * (see LocalValidator). Close it when done.
   *
   * @example
   * const local = client.localValidator('orders', { publicKey: process.env.RULES_PUBLIC_KEY });
   * await local.ready;
   * const answer = await local.validate({ total: 12500 });
   */
  localValidator(context: string, options: LocalValidatorOptions): LocalValidator {
    return new LocalValidator(this, context, options);
  }

  /**
   * Sends a request to a path of the service with the client's key,
   * retries and deadline, and returns the raw response (any status). For
   * answers that are not JSON (modules, event streams).
   */
  raw(path: string, init: RequestInit = {}, options: CallOptions = {}): Promise<Response> {
    const headers = new Headers(this.#headers);
    new Headers(init.headers).forEach((value, name) => headers.set(name, value));
    const request = new Request(this.baseUrl + path, { ...init, headers });
    const send: SendOptions = {
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      dispatcher: this.#options.dispatcher,
    };
    return this.#send(request, send);
  }
}

/** Creates a client. */
export function createRulesClient(options: RulesClientOptions): RulesClient {
  return new RulesClient(options);
}

/** A call's signal and deadline as openapi-fetch init (the deadline rides on the Request to the fetch). */
function callInit(options: CallOptions): { signal?: AbortSignal } {
  const init: { signal?: AbortSignal } = {};
  if (options.signal !== undefined) init.signal = options.signal;
  if (options.timeoutMs !== undefined) Object.assign(init, { [TIMEOUT_PROPERTY]: options.timeoutMs });
  return init;
}

/** Successful JSON answers always have a body; openapi-fetch types it as optional. */
function present<T>(data: T | undefined): T {
  if (data === undefined) throw new TypeError('the service answered without a body');
  return data;
}
