/**
 * The primary process of WORKERS > 1 (docs/operations.md). It has already
 * migrated, bootstrapped and seeded the database (server.ts) before this
 * runs; here it only manages workers:
 *
 * - forks N workers running server.ts; they share the port (node:cluster
 *   hands connections out round-robin) and each has its own caches and its
 *   own change listener;
 * - relays change notices between them (SyncRelay), so a publish returns
 *   only once every worker serves the new version;
 * - answers a worker's request for the instance's metrics with every
 *   worker's figures added up (MetricsCollector);
 * - restarts a worker that dies unexpectedly, after a delay that grows
 *   while workers keep dying young (a crash loop must not spin the CPU);
 *   a worker failing before the instance ever listened fails the start;
 * - on SIGTERM or SIGINT forwards the signal to the workers, which drain
 *   their connections, and exits once they are gone: 0 when all of them
 *   exited cleanly, 1 otherwise or after the shutdown timeout.
 */
import cluster, { type Worker } from 'node:cluster';
import type { PrimaryLogger } from './primary-logger.ts';
import { MetricsCollector } from './cluster-metrics.ts';
import { SyncRelay } from './sync-relay.ts';
import { TUNING } from '../tuning.ts';

export interface ClusterPrimaryOptions {
  workers: number;
  /** The workers' own hard stop after a signal (drain period and shutdown timeout); the primary allows a little more. */
  shutdownTimeoutMs: number;
  log: PrimaryLogger;
  exit?: (code: number) => void;
}

/**
 * Starts the workers and manages them until the process exits.
 *
 * @example
 * if (cluster.isPrimary && config.workers > 1) runClusterPrimary({ workers: config.workers, shutdownTimeoutMs: 10_000, log });
 */
export function runClusterPrimary(options: ClusterPrimaryOptions): void {
  const { log, workers } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const relay = new SyncRelay({ log });
  const metrics = new MetricsCollector({ log });
  const alive = new Map<number, { worker: Worker; startedAt: number }>();
  const listened = new Set<number>();
  let everListening = false;
  let stopping = false;
  let failedExit = false;
  let youngDeaths = 0;
  let hardStop: NodeJS.Timeout | undefined;
  const restarts = new Set<NodeJS.Timeout>();

  const fork = (): void => {
    const worker = cluster.fork();
    // A signal or message that cannot be delivered must not crash the primary.
    worker.on('error', (err) => log.warn({ err, worker: worker.process.pid }, 'worker IPC error'));
    alive.set(worker.id, { worker, startedAt: Date.now() });
  };

  cluster.on('message', (worker, message) => {
    relay.handle(worker, message);
    metrics.handle(worker, message);
  });

  cluster.on('listening', (worker, address) => {
    listened.add(worker.id);
    if (!everListening && listened.size >= workers) {
      everListening = true;
      log.info({ workers, port: address.port }, 'all workers are listening');
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const entry = alive.get(worker.id);
    alive.delete(worker.id);
    relay.forget(worker.id);
    if (stopping) {
      if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGINT') failedExit = true;
      if (alive.size === 0) {
        clearTimeout(hardStop);
        log.info({ exitCode: failedExit ? 1 : 0 }, 'all workers stopped');
        exit(failedExit ? 1 : 0);
      }
      return;
    }
    if (!everListening && !listened.has(worker.id)) {
      log.error({ worker: worker.process.pid, code, signal }, 'a worker failed to start; stopping');
      stopAll('SIGTERM', 1);
      return;
    }
    const lived = Date.now() - (entry?.startedAt ?? 0);
    youngDeaths = lived < TUNING.healthyWorkerLifetimeMs.value ? youngDeaths + 1 : 0;
    const delay = youngDeaths <= 1
      ? 0
      : Math.min(TUNING.maxWorkerRestartDelayMs.value, TUNING.workerRestartBaseDelayMs.value * 2 ** (youngDeaths - 2));
    log.error({ worker: worker.process.pid, code, signal, restartInMs: delay }, 'a worker died unexpectedly; restarting it');
    const timer = setTimeout(() => {
      restarts.delete(timer);
      if (!stopping) fork();
    }, delay);
    restarts.add(timer);
  });

  /** Forwards the signal; `code` forces the exit status (a failed start). */
  const stopAll = (signal: NodeJS.Signals, code?: number): void => {
    stopping = true;
    if (code !== undefined && code !== 0) failedExit = true;
    for (const timer of restarts) clearTimeout(timer);
    restarts.clear();
    for (const { worker } of alive.values()) {
      if (!worker.isDead()) worker.process.kill(signal);
    }
    hardStop = setTimeout(() => {
      log.error({ timeoutMs: options.shutdownTimeoutMs }, 'workers did not stop in time; killing them');
      for (const { worker } of alive.values()) {
        if (!worker.isDead()) worker.process.kill('SIGKILL');
      }
      exit(1);
    }, options.shutdownTimeoutMs + TUNING.workerShutdownGraceMs.value);
    if (alive.size === 0) exit(failedExit ? 1 : 0);
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log.info({ signal }, 'already shutting down; signal ignored');
      return;
    }
    log.info({ signal, workers: alive.size }, 'shutting down; forwarding the signal to the workers');
    stopAll(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  log.info({ workers }, 'starting workers');
  for (let i = 0; i < workers; i++) fork();
}
