/**
 * GET /metrics of an instance with WORKERS > 1: the figures of every
 * worker, added up.
 *
 * node:cluster hands each scrape to one worker, whose registry counts only
 * its own requests: scrapes alternated between workers, and Prometheus read
 * every switch to a worker with lower counts as a counter reset. So the
 * worker that takes a scrape asks the primary, which collects every
 * worker's metrics with prom-client's AggregatorRegistry and answers with
 * the instance's text. Counters and histograms are summed (so are the
 * cache-size gauge, CPU seconds and memory); prom-client's process metrics
 * carry their own aggregators (the start time is left out, the Node
 * version taken once, event-loop lag averaged).
 *
 *   worker → primary: collect {id}
 *   primary → every worker: prom-client's own request for its registries
 *   primary → worker: collected {id, text} or {id, error}
 *
 * A worker that does not answer (one still starting) makes the collection
 * fail after prom-client's 5 s bound, and that scrape is a 503 rather than
 * figures that leave the worker out.
 */
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { PrimaryLogger } from './primary-logger.ts';
import { TUNING } from '../tuning.ts';

export const METRICS_MESSAGE_TYPE = 'rules-metrics';

export type MetricsMessage =
  | { type: typeof METRICS_MESSAGE_TYPE; op: 'collect'; id: number }
  | { type: typeof METRICS_MESSAGE_TYPE; op: 'collected'; id: number; text: string }
  | { type: typeof METRICS_MESSAGE_TYPE; op: 'collected'; id: number; error: string };

function isMetricsMessage(message: unknown): message is MetricsMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === METRICS_MESSAGE_TYPE;
}

/** The instance's metrics text, as GET /metrics serves it. */
export interface InstanceMetrics {
  render(): Promise<string>;
  close(): void;
}

/** The parts of `process` a worker uses (a cluster worker's IPC). */
export interface MetricsIpc {
  send?(message: MetricsMessage, callback: (error: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

interface Waiting {
  resolve(text: string): void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * A worker's side: gives the primary its registries when asked, and asks
 * the primary for the instance's text.
 *
 * @example
 * const instance = new WorkerMetrics([processMetrics(), metrics.registry]);
 * const text = await instance.render();
 */
export class WorkerMetrics implements InstanceMetrics {
  readonly #ipc: MetricsIpc;
  readonly #waiting = new Map<number, Waiting>();
  #nextId = 0;

  constructor(registries: Registry[], ipc: MetricsIpc = process) {
    // Constructing one installs prom-client's answer to the primary's
    // requests in this worker; setRegistries says what it answers with.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries(registries);
    this.#ipc = ipc;
    this.#ipc.on('message', this.#onMessage);
  }

  render(): Promise<string> {
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      const fail = (reason: string): void => {
        const waiting = this.#waiting.get(id);
        if (waiting === undefined) return;
        clearTimeout(waiting.timer);
        this.#waiting.delete(id);
        reject(new Error(`could not collect the workers' metrics: ${reason}`));
      };
      const waitMs = TUNING.metricsCollectWaitMs.value;
      const timer = setTimeout(() => fail(`no answer within ${waitMs} ms`), waitMs);
      this.#waiting.set(id, { resolve, reject, timer });
      if (this.#ipc.send === undefined) {
        fail('not a cluster worker');
        return;
      }
      try {
        this.#ipc.send({ type: METRICS_MESSAGE_TYPE, op: 'collect', id }, (error) => {
          if (error !== null) fail(error.message);
        });
      } catch (error) {
        fail((error as Error).message);
      }
    });
  }

  close(): void {
    this.#ipc.off('message', this.#onMessage);
    for (const { reject, timer } of this.#waiting.values()) {
      clearTimeout(timer);
      reject(new Error('closing'));
    }
    this.#waiting.clear();
  }

  readonly #onMessage = (message: unknown): void => {
    if (!isMetricsMessage(message) || message.op !== 'collected') return;
    const waiting = this.#waiting.get(message.id);
    if (waiting === undefined) return;
    clearTimeout(waiting.timer);
    this.#waiting.delete(message.id);
    if ('text' in message) waiting.resolve(message.text);
    else waiting.reject(new Error(`could not collect the workers' metrics: ${message.error}`));
  };
}

/** A worker as the primary answers it (node:cluster's Worker fits). */
export interface MetricsPeer {
  send(message: MetricsMessage): boolean;
  isConnected(): boolean;
}

/**
 * The primary's side: answers a worker's `collect` with every worker's
 * metrics, aggregated.
 *
 * @example
 * const collector = new MetricsCollector({ log });
 * cluster.on('message', (worker, message) => collector.handle(worker, message));
 */
export class MetricsCollector {
  readonly #aggregator = new AggregatorRegistry();
  readonly #log: PrimaryLogger;

  constructor(options: { log: PrimaryLogger }) {
    this.#log = options.log;
  }

  /** Handles an IPC message from a worker; ignores anything else. */
  handle(peer: MetricsPeer, message: unknown): void {
    if (!isMetricsMessage(message) || message.op !== 'collect') return;
    const { id } = message;
    this.#aggregator.clusterMetrics().then(
      (text) => this.#answer(peer, { type: METRICS_MESSAGE_TYPE, op: 'collected', id, text }),
      (error: Error) => {
        this.#log.warn({ err: error }, "could not collect the workers' metrics");
        this.#answer(peer, { type: METRICS_MESSAGE_TYPE, op: 'collected', id, error: error.message });
      },
    );
  }

  #answer(peer: MetricsPeer, message: MetricsMessage): void {
    // A worker that went away meanwhile has no scrape to answer.
    if (peer.isConnected()) peer.send(message);
  }
}
