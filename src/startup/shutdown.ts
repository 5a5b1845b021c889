/**
 * SIGTERM/SIGINT handling (docs/operations.md): stop accepting connections, let
 * requests in flight finish, close the database, exit 0. A second signal is
 * ignored; if draining takes longer than the timeout, the process exits 1.
 */
import type { FastifyInstance } from 'fastify';
import { spareIdleConnections } from '../http/connection-drain.ts';
import type { Storage } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';

export interface ShutdownOptions {
  app: FastifyInstance;
  storage: Storage;
  timeoutMs: number;
  exit?: (code: number) => void;
}

/** Installs the signal handlers. */
export function installShutdown(options: ShutdownOptions): void {
  const { app, storage, timeoutMs } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      app.log.info({ signal }, 'already shutting down; signal ignored');
      return;
    }
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    setTimeout(() => {
      app.log.error({ timeoutMs }, 'shutdown timed out; exiting');
      exit(1);
    }, timeoutMs);
    // Clients may be sending on their idle keep-alive connections right now.
    spareIdleConnections(app.server, Math.min(TUNING.idleGraceMs.value, timeoutMs / 2));
    app
      .close()
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
