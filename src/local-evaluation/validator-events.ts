/**
 * The change feed of local evaluation (GET /contexts/{c}/validator/events,
 * docs/api.md "Local evaluation"): Server-Sent Events held open per
 * subscriber, one `published` event per change of a context's live ruleset.
 *
 * Changes come from two places, both told to `changed`: this process's own
 * installs (a publish, rollback, import or archive here) and the change
 * notices of other processes and instances (cache sync). The same change
 * often arrives by both ways; each subscriber remembers the version it was
 * last sent and is never sent one that is not newer, so the feed stays in
 * order and free of repeats whichever way arrives first.
 *
 * Kept small per idle subscriber: one object in a set per context, no
 * timer of its own. One shared timer writes the heartbeat comment to every
 * subscriber; a subscriber that does not read (its socket's buffer past
 * TUNING.sseMaxBufferedBytes) is dropped rather than buffered for.
 * Subscriptions are bounded per process and per tenant (429 past them) and
 * all end when the app closes, so a shutdown never waits on them.
 *
 * When a context stops being served (its admin turned local validation
 * off, here or on another instance: `settingsChanged`), or the key a feed
 * was opened with is revoked or changed (`keyChanged`), the feeds end with
 * a `closed` event saying why, rather than staying open announcing
 * versions their clients may no longer fetch.
 */
import type { ServerResponse } from 'node:http';
import { TUNING } from '../tuning.ts';

/** What a `published` event says: the live ruleset version and the ETag of its module. */
export interface PublishedState {
  readonly context: string;
  readonly version: number;
  readonly etag: string;
}

/** Reads the live state of a context (the module built, for its ETag); null when it has nothing live. */
export type CurrentState = (tenantId: string, context: string) => Promise<PublishedState | null>;

/** Whether the context is still served for local evaluation (its `localValidation` setting). */
export type ServedState = (tenantId: string, context: string) => Promise<boolean>;

export interface ValidatorEventsOptions {
  heartbeatMs: number;
  maxConnections: number;
  maxConnectionsPerTenant: number;
  current: CurrentState;
  served: ServedState;
  log: { warn(o: object, msg?: string): void };
}

interface Subscriber {
  readonly tenantId: string;
  /** The API key the feed was opened with. */
  readonly keyId: string;
  readonly response: ServerResponse;
  /** The newest version this subscriber was sent (or told it has, by Last-Event-ID). */
  version: number;
}

/** Why a subscription was refused: a bound (429), or the app is closing (503). */
export type Refusal = { readonly scope: 'process' | 'tenant'; readonly limit: number } | { readonly scope: 'closing' };

/** The text of one `published` event; its id is the ruleset version. */
export function publishedEvent(state: PublishedState): string {
  return `id: ${state.version}\nevent: published\ndata: ${JSON.stringify(state)}\n\n`;
}

const HEARTBEAT = ': heartbeat\n\n';

/** Why a feed was ended before its client went. */
export type ClosedReason = 'LOCAL_VALIDATION_OFF' | 'KEY_CHANGED';

const CLOSED_DETAIL: Record<ClosedReason, (context: string) => string> = {
  LOCAL_VALIDATION_OFF: (context) =>
    `Local validation was turned off for context "${context}": the feed ends, and the module and feed are refused (403) until an admin turns it on again.`,
  KEY_CHANGED: () => 'The API key this feed was opened with was revoked or its role changed: the feed ends; a reconnection is checked with the key again.',
};

/** The last event of a feed ended for `reason`; it has no id, so Last-Event-ID stays the last version. */
export function closedEvent(context: string, reason: ClosedReason): string {
  const data = { context, reason, detail: CLOSED_DETAIL[reason](context) };
  return `event: closed\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * @example
 * const refusal = events.refusal(tenantId);
 * if (refusal === undefined) events.subscribe(tenantId, keyId, context, reply.raw, lastVersion);
 * events.changed(tenantId, context, 8);
 */
export class ValidatorEvents {
  readonly #options: ValidatorEventsOptions;
  /** Subscribers by tenant and context. */
  readonly #byContext = new Map<string, Set<Subscriber>>();
  readonly #perTenant = new Map<string, number>();
  /** The newest change seen per context with subscribers: a change not newer needs no read. */
  readonly #newest = new Map<string, number>();
  #count = 0;
  #heartbeat: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: ValidatorEventsOptions) {
    this.#options = options;
  }

  /** Subscribers held now. */
  get size(): number {
    return this.#count;
  }

  /** Why one more subscription of the tenant would be refused, or undefined. */
  refusal(tenantId: string): Refusal | undefined {
    if (this.#closed) return { scope: 'closing' };
    if (this.#count >= this.#options.maxConnections) return { scope: 'process', limit: this.#options.maxConnections };
    if ((this.#perTenant.get(tenantId) ?? 0) >= this.#options.maxConnectionsPerTenant) {
      return { scope: 'tenant', limit: this.#options.maxConnectionsPerTenant };
    }
    return undefined;
  }

  /**
   * Holds `response` (its headers already sent) until the client goes or
   * the app closes. `version` is what the client has already been sent.
   */
  subscribe(tenantId: string, keyId: string, context: string, response: ServerResponse, version: number): void {
    const key = contextKey(tenantId, context);
    const subscriber: Subscriber = { tenantId, keyId, response, version };
    let set = this.#byContext.get(key);
    if (set === undefined) {
      set = new Set();
      this.#byContext.set(key, set);
    }
    set.add(subscriber);
    this.#count++;
    this.#perTenant.set(tenantId, (this.#perTenant.get(tenantId) ?? 0) + 1);
    this.#heartbeat ??= setInterval(() => this.#beat(), this.#options.heartbeatMs).unref();
    response.once('close', () => this.#remove(key, subscriber));
    // Read once subscribed: a change that commits meanwhile reaches it either by this read or by `changed`.
    this.#options.current(tenantId, context).then(
      (state) => {
        if (state !== null) this.#deliver(subscriber, publishedEvent(state), state.version);
      },
      (err: unknown) => {
        this.#options.log.warn({ err, tenant: tenantId, context }, 'could not read the live state for a new change-feed subscriber');
        response.destroy();
      },
    );
  }

  /**
   * A context's live ruleset moved to `rulesetVersion` (or this process
   * heard so). Never rejects; does nothing for a context nobody follows.
   */
  changed(tenantId: string, context: string, rulesetVersion: number): void {
    const key = contextKey(tenantId, context);
    if (!this.#byContext.has(key) || (this.#newest.get(key) ?? 0) >= rulesetVersion) return;
    this.#newest.set(key, rulesetVersion);
    this.#options.current(tenantId, context).then(
      (state) => {
        if (state !== null) this.#send(key, state);
      },
      (err: unknown) => this.#options.log.warn({ err, tenant: tenantId, context }, 'could not read a changed context for its change feed'),
    );
  }

  /**
   * A context's settings changed (here or on another instance): when it is
   * no longer served, its feeds end with a `closed` event. Never rejects.
   */
  settingsChanged(tenantId: string, context: string): void {
    const key = contextKey(tenantId, context);
    if (!this.#byContext.has(key)) return;
    this.#options.served(tenantId, context).then(
      (served) => {
        const set = this.#byContext.get(key);
        if (served || set === undefined) return;
        const text = closedEvent(context, 'LOCAL_VALIDATION_OFF');
        for (const { response } of set) end(response, text);
      },
      (err: unknown) => this.#options.log.warn({ err, tenant: tenantId, context }, 'could not read changed context settings for its change feed'),
    );
  }

  /**
   * A key was revoked or changed (here or on another instance): the feeds
   * opened with it end with a `closed` event; a reconnection is
   * authenticated again. Rare, so a scan of every feed.
   */
  keyChanged(keyId: string): void {
    for (const [key, set] of this.#byContext) {
      for (const subscriber of set) {
        if (subscriber.keyId === keyId) end(subscriber.response, closedEvent(contextOf(key), 'KEY_CHANGED'));
      }
    }
  }

  /** Ends every subscription (the app is closing): clients reconnect to another instance. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    for (const set of this.#byContext.values()) {
      for (const { response } of set) end(response);
    }
  }

  #send(key: string, state: PublishedState): void {
    const set = this.#byContext.get(key);
    if (set === undefined) return;
    const text = publishedEvent(state);
    for (const subscriber of set) this.#deliver(subscriber, text, state.version);
  }

  /** Sends an event of `version` to a subscriber that has not had it or a newer one. */
  #deliver(subscriber: Subscriber, text: string, version: number): void {
    if (subscriber.version >= version || subscriber.response.writableEnded) return;
    subscriber.version = version;
    this.#write(subscriber, text);
  }

  #beat(): void {
    for (const set of this.#byContext.values()) for (const subscriber of set) this.#write(subscriber, HEARTBEAT);
  }

  #write(subscriber: Subscriber, text: string): void {
    const { response } = subscriber;
    if (response.writableLength > TUNING.sseMaxBufferedBytes.value) {
      // It does not read: holding more for it would grow without bound.
      response.destroy();
      return;
    }
    response.write(text);
  }

  #remove(key: string, subscriber: Subscriber): void {
    const set = this.#byContext.get(key);
    if (set === undefined || !set.delete(subscriber)) return;
    this.#count--;
    const tenantCount = (this.#perTenant.get(subscriber.tenantId) ?? 1) - 1;
    if (tenantCount === 0) this.#perTenant.delete(subscriber.tenantId);
    else this.#perTenant.set(subscriber.tenantId, tenantCount);
    if (set.size === 0) {
      this.#byContext.delete(key);
      this.#newest.delete(key);
    }
    if (this.#count === 0) {
      clearInterval(this.#heartbeat);
      this.#heartbeat = undefined;
    }
  }
}

/** Ends a feed (after `text`, if given): the end reaches the client, then the socket goes; a client that stopped reading cannot hold it. */
function end(response: ServerResponse, text?: string): void {
  if (response.writableEnded) return;
  response.end(text, () => response.destroy());
  setTimeout(() => response.destroy(), TUNING.sseCloseGraceMs.value).unref();
}

function contextKey(tenantId: string, context: string): string {
  return `${tenantId}\u0000${context}`;
}

function contextOf(key: string): string {
  return key.slice(key.indexOf('\u0000') + 1);
}
