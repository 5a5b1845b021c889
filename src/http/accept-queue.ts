/**
 * The listener's last moments at shutdown (docs/operations.md, "Shutdown").
 *
 * The kernel completes TCP handshakes on its own and queues the connections
 * until the process accepts them, which Node does only in the poll phase of
 * its event loop. Closing the listening socket resets every connection
 * still in that queue: clients that connected before the signal, while the
 * loop was busy with other requests, would get ECONNRESET. So the listener
 * is closed only once the queue is seen empty: after a quick turn of the
 * loop (its poll phase took whatever was queued, and was too short for
 * much to arrive meanwhile) that took no connection, with none taken for a
 * quiet interval. Under WORKERS the primary accepts and hands each worker
 * one connection at a time; the quiet interval covers those hand-overs.
 */
import type { Server } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface AcceptQueueOptions {
  /** No connection taken for this long. */
  quietMs: number;
  /** A turn of the loop this short, poll phase included, sees the queue as it is. */
  quickTurnMs: number;
  /** How often to look. */
  checkEveryMs: number;
  /** Give up waiting after this long: clients that keep connecting cannot hold the process. */
  maxWaitMs: number;
}

/**
 * Resolves once `server` has taken every connection the kernel queued for
 * it, or after `maxWaitMs`; the caller closes the listener right then.
 *
 * @example
 * await acceptQueueTaken(app.server, { quietMs: 50, quickTurnMs: 10, checkEveryMs: 10, maxWaitMs: 5000 });
 * await app.close();
 */
export function acceptQueueTaken(server: Server, options: AcceptQueueOptions): Promise<void> {
  const startedAt = performance.now();
  let lastTakenAt = startedAt;
  const onConnection = (): void => {
    lastTakenAt = performance.now();
  };
  server.on('connection', onConnection);
  return new Promise((done) => {
    const finish = (): void => {
      server.off('connection', onConnection);
      done();
    };
    // Starts in the timers phase of a turn and concludes in its check
    // phase, right after the poll phase in which connections are taken.
    const look = (): void => {
      const turnStartedAt = performance.now();
      setImmediate(() => {
        const now = performance.now();
        const quiet = now - turnStartedAt <= options.quickTurnMs && now - lastTakenAt >= options.quietMs;
        if (quiet || now - startedAt >= options.maxWaitMs) finish();
        else setTimeout(look, options.checkEveryMs);
      });
    };
    setTimeout(look, options.checkEveryMs);
  });
}
