/**
 * SIGTERM/SIGINT handling (docs/operations.md, "Shutdown"), in this order:
 *
 * 1. readiness answers 503;
 * 2. for SHUTDOWN_DRAIN_MS the listener keeps accepting and serving, every
 *    answer with `Connection: close`, while load balancers take the process
 *    out of rotation (0, the default: no such period);
 * 3. the listener takes what the kernel has already queued for it
 *    (src/http/accept-queue.ts), then closes: a client that connected before
 *    is served, never reset. Answers keep their connections open meanwhile:
 *    a client told to reconnect could do so in the instant between the last
 *    accept and the close, and be reset;
 * 4. answers carry `Connection: close` again, requests in flight finish,
 *    idle connections close after a short grace, the database closes, exit 0.
 *
 * A second signal is ignored; SHUTDOWN_TIMEOUT_MS after the drain period
 * the process exits 1 whatever is left.
 */
import type { FastifyInstance } from 'fastify';
import { acceptQueueTaken } from '../http/accept-queue.ts';
import { spareIdleConnections, type ConnectionDrain } from '../http/connection-drain.ts';
import type { Storage } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';

export interface ShutdownOptions {
  app: FastifyInstance;
  storage: Storage;
  drain: ConnectionDrain;
  /** SHUTDOWN_DRAIN_MS. */
  drainMs: number;
  /** SHUTDOWN_TIMEOUT_MS, counted from the end of the drain period. */
  timeoutMs: number;
  exit?: (code: number) => void;
}

/** Installs the signal handlers. */
export function installShutdown(options: ShutdownOptions): void {
  const { app, storage, drain, drainMs, timeoutMs } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      app.log.info({ signal }, 'already shutting down; signal ignored');
      return;
    }
    stopping = true;
    app.log.info({ signal, drainMs }, 'shutting down');
    drain.stop();
    drain.closeConnections(drainMs > 0);
    setTimeout(() => {
      app.log.error({ timeoutMs, drainMs }, 'shutdown timed out; exiting');
      exit(1);
    }, drainMs + timeoutMs);
    const drained = new Promise<void>((done) => setTimeout(done, drainMs));
    drained
      .then(() => {
        drain.closeConnections(false);
        return acceptQueueTaken(app.server, {
          quietMs: TUNING.acceptQueueQuietMs.value,
          quickTurnMs: TUNING.acceptQueueQuickTurnMs.value,
          checkEveryMs: TUNING.acceptQueueCheckMs.value,
          // Most of the time is left to the requests in flight.
          maxWaitMs: timeoutMs / 2,
        });
      })
      .then(() => {
        // Clients may be sending on their idle keep-alive connections right now.
        spareIdleConnections(app.server, Math.min(TUNING.idleGraceMs.value, timeoutMs / 2));
        return app.close();
      })
      .then(() => storage.close())
      .then(
        () => exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'error while shutting down');
          exit(1);
        },
      );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
