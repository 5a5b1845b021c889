/**
 * A published validator run in the caller's own process. It downloads the
 * context's standalone module (with ETag / If-None-Match), verifies its
 * Ed25519 signature with the key it was given and refuses any module that
 * does not verify, imports it, and keeps it current through the change
 * feed (Server-Sent Events), polling by ETag while the feed is down.
 */
import type { RulesClient, ValidationResult } from '../client.ts';
import { LocalValidatorError, problemError, RulesApiError } from '../errors.ts';
import { retryAfterMs, sleep } from '../retry.ts';
import { importModule, type StandaloneValidator } from './module-loader.ts';
import { OutcomeSampler, type SampledOutcome, type SampleOutcomesOptions } from './sampler.ts';
import { importPublicKey, parsePublicKey, verifySignature, type PublicKeyInput, type VerifyKey } from './signature.ts';
import { readEvents } from './sse.ts';

export interface LocalValidatorOptions {
  /**
   * The service's signing key, obtained out of band (from the operator, or
   * `GET /api/v1/signing-key` checked once and kept in your configuration):
   * base64 of the raw 32 bytes, PEM, raw bytes or a CryptoKey.
   */
  publicKey?: PublicKeyInput;
  /**
   * Read the key from the same service (`GET /api/v1/signing-key`) instead
   * of `publicKey`. Signatures then only prove the module was not altered
   * after it was built, not who served it: ask for it knowingly.
   */
  trustServerKey?: boolean;
  /** `'remote'`: validate over HTTP while no verified module is loaded; default `'none'` (validate throws LocalValidatorError). */
  fallback?: 'remote' | 'none';
  /** `'sse'` (default): follow the change feed, polling while it is down; `'poll'`: poll by ETag only. */
  transport?: 'sse' | 'poll';
  /** How often to poll by ETag while the change feed is down (or with transport 'poll'); default 30,000 ms. */
  pollIntervalMs?: number;
  /** Reconnect the change feed when nothing (not even a heartbeat) arrived for this long; default 60,000 ms. */
  feedIdleMs?: number;
  /** The longest wait between reconnections of the change feed; default 30,000 ms. */
  maxReconnectDelayMs?: number;
  /**
   * While the service does not serve the context for local evaluation (its
   * admin turned it off, or the key may not have it: 403), how often to ask
   * again whether it does; default 300,000 ms (5 minutes). One request per
   * interval (no polling besides), and the refusal is reported once, as
   * LocalValidatorError `NOT_SERVED`, not on every request.
   */
  notServedRetryMs?: number;
  /** Send a share of the outcomes back to the service (off by default). */
  sampleOutcomes?: SampleOutcomesOptions;
  /** Receives every failure of loading, verifying or following (the validator keeps running what it has). */
  onError?: (error: Error) => void;
}

/** What an update callback receives. */
export interface LocalValidatorUpdate {
  version: number;
  etag: string | null;
}

export interface LocalValidateOptions {
  /** The time rules see as now() (ms since the epoch, or a Date); default the moment of the call. */
  now?: number | Date;
}

/** A published validator run locally; see RulesClient.localValidator. */
export class LocalValidator {
  /** Resolves when the first verified module is loaded; rejects with the first load's failure (loading goes on in the background). */
  readonly ready: Promise<void>;
  readonly context: string;
  readonly #client: RulesClient;
  readonly #options: LocalValidatorOptions;
  readonly #stop = new AbortController();
  readonly #listeners = new Set<(update: LocalValidatorUpdate) => void>();
  readonly #sampler: OutcomeSampler | undefined;
  /** The verifying key, imported (or read from the service) once; undefined again after a failure, so the next load tries again. */
  #key: Promise<VerifyKey> | undefined;
  #module: StandaloneValidator | undefined;
  #version: number | undefined;
  #etag: string | null = null;
  #lastEventId: string | undefined;
  #loading: Promise<void> = Promise.resolve();
  #pollTimer: ReturnType<typeof setInterval> | undefined;
  /** Whether the change feed is connected (polling runs only while it is not, or while a load it asked for failed). */
  #feedConnected = false;
  /** Whether the service refuses to serve the context (NOT_SERVED): the feed is then asked again every notServedRetryMs, and nothing polls. */
  #notServed = false;

  constructor(client: RulesClient, context: string, options: LocalValidatorOptions) {
    if (options.publicKey === undefined && options.trustServerKey !== true) {
      throw new TypeError('localValidator needs the service\'s publicKey (or trustServerKey: true to read it from the service)');
    }
    this.#client = client;
    this.context = context;
    this.#options = options;
    // A malformed key throws here (TypeError), where it was given; its import, or the service's key, is awaited by the first load.
    if (typeof options.publicKey === 'string' || options.publicKey instanceof Uint8Array) parsePublicKey(options.publicKey);
    void this.#verifyKey();
    this.#sampler = options.sampleOutcomes === undefined ? undefined : new OutcomeSampler(
      options.sampleOutcomes,
      (samples) => this.#postSamples(samples),
      (error) => this.#report(error),
    );
    this.ready = this.refresh();
    // Marked handled: a caller that never awaits `ready` must not see an unhandled rejection (failures also go to onError).
    this.ready.catch(() => undefined);
    if (options.transport === 'poll') this.#startPolling();
    else void this.#followFeed();
  }

  /** The ruleset version of the loaded module; undefined before the first. */
  get version(): number | undefined {
    return this.#version;
  }

  /** Whether a verified module is loaded. */
  get loaded(): boolean {
    return this.#module !== undefined;
  }

  /**
   * False from the moment the service says it does not serve the context
   * for local evaluation (the feed's `closed` event, or a 403 for the module
   * or the feed) until it serves it again; the validator keeps running the
   * version it has meanwhile.
   */
  get served(): boolean {
    return !this.#notServed;
  }

  /** The id of the last change-feed event received, which a reconnection resumes from (Last-Event-ID); undefined before the first. */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  /** Outcomes not recorded, when sampling: the queue was full, their request failed, or the service dropped them (see its `reasons`). */
  get droppedSamples(): number {
    return this.#sampler?.dropped ?? 0;
  }

  /**
   * Validates a payload: the service's single-validation answer for the
   * loaded version, computed here. Without a module: over HTTP with
   * `fallback: 'remote'`, else a LocalValidatorError.
   */
  async validate(payload: Record<string, unknown>, options?: LocalValidateOptions): Promise<ValidationResult> {
    if (this.#module !== undefined) return this.validateSync(payload, options);
    if (this.#options.fallback === 'remote') return this.#client.validate({ context: this.context, payload });
    throw new LocalValidatorError('NOT_LOADED', `no verified module of context ${this.context} is loaded yet`);
  }

  /** Validates with the loaded module, synchronously (for a form as the user types); throws LocalValidatorError without one. */
  validateSync(payload: Record<string, unknown>, options?: LocalValidateOptions): ValidationResult {
    const module = this.#module;
    const version = this.#version;
    if (module === undefined || version === undefined) {
      throw new LocalValidatorError('NOT_LOADED', `no verified module of context ${this.context} is loaded yet`);
    }
    // The hot path of local evaluation: the module reads options.now itself (a number or a Date, else Date.now()),
    // and the answer is one literal, not a spread copy; the sampler's outcome is built only for the share it keeps.
    const started = performance.now();
    const result = module.validate(payload, options);
    const answer: ValidationResult = {
      isValid: result.isValid,
      totalRulesEvaluated: result.totalRulesEvaluated,
      failures: result.failures as ValidationResult['failures'],
      executionTimeMs: Math.round(performance.now() - started),
    };
    if (this.#sampler?.draw() === true) {
      this.#sampler.keep({
        payload,
        rulesetVersion: version,
        isValid: answer.isValid,
        // The service records these as the failing rules' codes (the impact report compares verdicts rule by rule).
        errorCodes: answer.failures.map((failure) => failure.ruleCode),
        at: new Date().toISOString(),
      });
    }
    return answer;
  }

  /** Calls `callback` after every newly loaded version; returns a function that stops it. */
  onUpdate(callback: (update: LocalValidatorUpdate) => void): () => void {
    this.#listeners.add(callback);
    return () => this.#listeners.delete(callback);
  }

  /**
   * Checks for a new version now (If-None-Match: a 304 costs nothing),
   * verifies and loads it. Loads run one at a time.
   */
  refresh(): Promise<void> {
    const load = this.#loading.catch(() => undefined).then(() => this.#load());
    this.#loading = load;
    load.catch((error: unknown) => {
      // A refusal to serve the context is reported once, when it starts (#refused).
      if (!(error instanceof LocalValidatorError && error.code === 'NOT_SERVED')) this.#report(error);
      // The feed will not tell again about a version it announced: poll until a load succeeds.
      this.#startPolling();
    });
    return load;
  }

  /** Stops following and polling, sends the samples that wait. */
  async close(): Promise<void> {
    this.#stop.abort();
    if (this.#pollTimer !== undefined) clearInterval(this.#pollTimer);
    this.#pollTimer = undefined;
    this.#listeners.clear();
    await this.#sampler?.flush();
  }

  async #load(): Promise<void> {
    if (this.#stop.signal.aborted) return;
    const headers: Record<string, string> = {};
    if (this.#etag !== null && this.#module !== undefined) headers['if-none-match'] = this.#etag;
    const response = await this.#client.raw(this.#path('/validator?format=module'), { headers }, { signal: this.#stop.signal });
    if (response.status === 304) {
      this.#servedAgain();
      return;
    }
    if (!response.ok) throw this.#refusedIfForbidden(await problemError(response, retryAfterMs(response.headers.get('retry-after'))));
    this.#servedAgain();
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (!(await verifySignature(await this.#verifyKey(), bytes, response.headers.get('x-rules-signature')))) {
      throw new LocalValidatorError(
        'SIGNATURE_INVALID',
        `the module of context ${this.context} does not verify against the signing key given: refused, the validator keeps what it had`,
      );
    }
    // What the module is, read from its signed text, never from the headers beside it (which nothing signs).
    const version = this.#acceptable(signedAbout(bytes));
    if (version === undefined) return;
    let module: StandaloneValidator;
    try {
      module = await importModule(bytes);
    } catch (error) {
      throw new LocalValidatorError('LOAD_FAILED', `the module of context ${this.context} could not be imported`, { cause: error });
    }
    if (this.#stop.signal.aborted || (this.#version !== undefined && version < this.#version)) return;
    this.#module = module;
    this.#version = version;
    this.#etag = response.headers.get('etag');
    if (this.#feedConnected) this.#stopPolling();
    for (const listener of this.#listeners) listener({ version, etag: this.#etag });
  }

  /**
   * The version of a verified module, if it is this validator's to run:
   * refused when it names another tenant or context, or a version older
   * than the one running (a replay: the service's versions only grow);
   * undefined for the version already running.
   */
  #acceptable(about: ModuleAbout): number | undefined {
    const tenantId = this.#client.tenantId;
    if ((about.tenant !== undefined && about.tenant !== tenantId) || (about.context !== undefined && about.context !== this.context)) {
      throw new LocalValidatorError(
        'MODULE_REFUSED',
        `the module served for context ${this.context} is signed as tenant ${about.tenant ?? '?'}'s context ${about.context ?? '?'}: refused`,
      );
    }
    if (about.version === undefined) throw new LocalValidatorError('MODULE_REFUSED', `the module of context ${this.context} names no ruleset version: refused`);
    if (this.#version !== undefined && about.version < this.#version) {
      throw new LocalValidatorError(
        'MODULE_REFUSED',
        `the module served for context ${this.context} is ruleset version ${about.version}, older than version ${this.#version} running: refused`,
      );
    }
    return about.version === this.#version ? undefined : about.version;
  }

  /** Follows the change feed until closed: reconnects with back-off, resumes with Last-Event-ID, polls while it is down. */
  async #followFeed(): Promise<void> {
    const maxDelay = this.#options.maxReconnectDelayMs ?? 30_000;
    let failures = 0;
    while (!this.#stop.signal.aborted) {
      let retryMs: number | undefined;
      try {
        await this.#readFeed((ms) => {
          retryMs = ms;
        }, () => {
          failures = 0;
        });
      } catch (error) {
        if (this.#stop.signal.aborted) return;
        if (!(error instanceof LocalValidatorError && error.code === 'NOT_SERVED')) this.#report(error);
      }
      if (this.#stop.signal.aborted) return;
      this.#startPolling();
      const backoff = Math.min(maxDelay, 500 * 2 ** Math.min(failures, 16));
      failures++;
      // Not served: the context stays off until an admin acts; asking every few seconds would only collect 403s.
      const wait = this.#notServed ? this.#options.notServedRetryMs ?? DEFAULT_NOT_SERVED_RETRY_MS : retryMs ?? backoff;
      await sleep(wait, this.#stop.signal).catch(() => undefined);
    }
  }

  /** One connection to the change feed, read until it ends or goes quiet. */
  async #readFeed(onRetry: (ms: number) => void, onConnected: () => void): Promise<void> {
    const connection = new AbortController();
    const signal = AbortSignal.any([this.#stop.signal, connection.signal]);
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.#lastEventId !== undefined) headers['last-event-id'] = this.#lastEventId;
    const response = await this.#client.raw(this.#path('/validator/events'), { headers }, { signal, timeoutMs: 0 });
    if (!response.ok) {
      // A Last-Event-ID the service no longer knows: start afresh (the first event carries the current state).
      if (this.#lastEventId !== undefined && (response.status === 409 || response.status === 410 || response.status === 400)) {
        this.#lastEventId = undefined;
      }
      throw this.#refusedIfForbidden(await problemError(response, retryAfterMs(response.headers.get('retry-after'))));
    }
    if (response.body === null || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      await response.body?.cancel();
      throw new LocalValidatorError('LOAD_FAILED', 'the change feed did not answer with an event stream');
    }
    onConnected();
    this.#feedConnected = true;
    this.#servedAgain();
    if (this.#module !== undefined) this.#stopPolling();
    const idleMs = this.#options.feedIdleMs ?? 60_000;
    let idle = setTimeout(() => connection.abort(), idleMs);
    try {
      const events = readEvents(response.body, {
        onRetry,
        onActivity: () => {
          clearTimeout(idle);
          idle = setTimeout(() => connection.abort(), idleMs);
        },
      });
      for await (const event of events) {
        if (event.id !== undefined) this.#lastEventId = event.id;
        if (event.event === 'closed') {
          const { reason, detail } = parseEvent(event.data) ?? {};
          // The key changed: reconnect, and the service says whether it still may (a revoked key gets a 401, reported).
          if (reason === 'KEY_CHANGED') return;
          // The service stopped serving the context: keep what runs, report why, and let the loop ask again slowly.
          throw this.#refused(new LocalValidatorError(
            'NOT_SERVED',
            typeof detail === 'string' ? detail : `context ${this.context} is no longer served for local evaluation`,
          ));
        }
        if (event.event !== 'published') continue;
        const data = parseEvent(event.data);
        if (data === undefined || data.etag !== this.#etag || this.#module === undefined) void this.refresh();
      }
    } catch (error) {
      // The idle watchdog's abort ends the read: reconnect, no need to report it.
      if (!connection.signal.aborted) throw error;
    } finally {
      clearTimeout(idle);
      this.#feedConnected = false;
    }
  }

  #startPolling(): void {
    if (this.#pollTimer !== undefined || this.#stop.signal.aborted) return;
    // While the context is not served, the feed's reconnection is the one request that asks whether it is again;
    // with transport 'poll' the poll is, at that pace.
    if (this.#notServed && this.#options.transport !== 'poll') return;
    const interval = this.#notServed ? this.#options.notServedRetryMs ?? DEFAULT_NOT_SERVED_RETRY_MS : this.#options.pollIntervalMs ?? 30_000;
    this.#pollTimer = setInterval(() => void this.refresh(), interval);
  }

  /** A 403 for the module or the feed: the service does not serve this context to this key (turned off, or the wrong role). */
  #refusedIfForbidden(error: RulesApiError): Error {
    if (error.status !== 403) return error;
    return this.#refused(new LocalValidatorError(
      'NOT_SERVED',
      `context ${this.context} is not served for local evaluation to this key: ${error.detail}`,
      { cause: error },
    ));
  }

  /** Enters the not-served state: reported once (not on every refused request), polling slowed or stopped. */
  #refused(error: LocalValidatorError): LocalValidatorError {
    if (!this.#notServed) {
      this.#notServed = true;
      this.#stopPolling();
      this.#report(error);
    }
    return error;
  }

  /** The service serves the context again: polling, if any, back at its own pace. */
  #servedAgain(): void {
    if (!this.#notServed) return;
    this.#notServed = false;
    const polling = this.#pollTimer !== undefined;
    this.#stopPolling();
    if (polling) this.#startPolling();
  }

  #stopPolling(): void {
    if (this.#pollTimer !== undefined) clearInterval(this.#pollTimer);
    this.#pollTimer = undefined;
  }

  /** The key modules are verified with; a failed import or read of it is tried again at the next load (and never left unhandled). */
  #verifyKey(): Promise<VerifyKey> {
    if (this.#key !== undefined) return this.#key;
    const key = (this.#options.publicKey !== undefined ? importPublicKey(this.#options.publicKey) : this.#serverKey()).catch((error: unknown) => {
      if (this.#key === key) this.#key = undefined;
      if (error instanceof RulesApiError || error instanceof LocalValidatorError || this.#stop.signal.aborted) throw error;
      throw new LocalValidatorError('LOAD_FAILED', `the signing key could not be had or imported as Ed25519: ${String(error)}`, { cause: error });
    });
    // Awaited by loads; until then, a failure must not be an unhandled rejection.
    key.catch(() => undefined);
    this.#key = key;
    return key;
  }

  async #serverKey(): Promise<VerifyKey> {
    const { data } = await this.#client.raw('/api/v1/signing-key', {}, { signal: this.#stop.signal }).then(async (response) => {
      if (!response.ok) throw await problemError(response, undefined);
      return { data: (await response.json()) as { publicKey?: unknown } };
    });
    if (typeof data.publicKey !== 'string') throw new LocalValidatorError('LOAD_FAILED', 'the service\'s signing key has no publicKey');
    return importPublicKey(data.publicKey);
  }

  /** Sends a batch of samples; resolves with how many the service dropped (its `dropped`: sampling off, a version not live, ...). */
  async #postSamples(samples: SampledOutcome[]): Promise<number> {
    const response = await this.#client.raw(this.#path('/samples'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ samples }),
    });
    if (!response.ok) throw await problemError(response, undefined);
    const answer = (await response.json().catch(() => undefined)) as { dropped?: unknown } | undefined;
    return typeof answer?.dropped === 'number' ? answer.dropped : 0;
  }

  #path(rest: string): string {
    return `/api/v1/contexts/${encodeURIComponent(this.context)}${rest}`;
  }

  #report(error: unknown): void {
    if (this.#stop.signal.aborted) return;
    this.#options.onError?.(error instanceof Error ? error : new Error(String(error)));
  }
}

/** How often a validator asks again whether a context that is not served is served again (notServedRetryMs). */
const DEFAULT_NOT_SERVED_RETRY_MS = 300_000;

/** What a module's first line says it is (the service writes tenant and context there when they are plain names). */
interface ModuleAbout {
  tenant?: string;
  context?: string;
  version?: number;
}

/** `// Standalone validator (tenant acme, context orders, ruleset version 3), generated by the rules service.` */
const MODULE_FIRST_LINE = /^\/\/ Standalone validator \(([^)\n]*)\)/;

/** Reads the first line of a module's signed text. */
function signedAbout(bytes: Uint8Array): ModuleAbout {
  const match = MODULE_FIRST_LINE.exec(new TextDecoder().decode(bytes.subarray(0, 400)));
  const about: ModuleAbout = {};
  for (const part of match?.[1].split(', ') ?? []) {
    if (part.startsWith('tenant ')) about.tenant = part.slice('tenant '.length);
    else if (part.startsWith('context ')) about.context = part.slice('context '.length);
    else if (/^ruleset version \d+$/.test(part)) about.version = Number(part.slice('ruleset version '.length));
  }
  return about;
}

function parseEvent(data: string): { etag?: string; version?: number; reason?: unknown; detail?: unknown } | undefined {
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}
