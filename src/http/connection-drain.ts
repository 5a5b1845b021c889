/**
 * Graceful drain (docs/operations.md, "Shutdown"): from SIGTERM readiness
 * answers 503, so that load balancers stop sending new connections; while
 * the drain period lasts, and once the app starts closing, responses carry
 * `Connection: close`, so clients on keep-alive connections go elsewhere
 * after their current request instead of getting a 503.
 *
 * `spareIdleConnections` closes a second gap, at SIGTERM: Node's
 * `server.close()` destroys every idle keep-alive connection at once, and a
 * client that has just sent its next request on one (the usual case under
 * steady load) gets a reset: the request is lost. Idle connections are
 * therefore kept for a short grace: a request that arrives is answered
 * (with `Connection: close`), and only the connections still idle after
 * the grace are closed.
 *
 * `closeUnusedConnectionsToo` closes a third: a connection on which no
 * request has begun is not idle to Node (its parser counts it busy from
 * the accept on, so that the headers timeout applies), so neither
 * `closeIdleConnections` nor the close ends it, and it holds the close
 * until Fastify's keep-alive timeout (72 s) or SHUTDOWN_TIMEOUT_MS. Clients
 * make such connections all the time: browsers open them speculatively,
 * and a client's pool opens one for a request that then goes out on
 * another (undici does, right after held streams such as change feeds are
 * aborted). Nothing was sent on one, so closing it loses nothing.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import { accountedForByFastLane } from './route-hooks.ts';

/** What other parts of the app need to know of the drain, and what the shutdown tells it (src/startup/shutdown.ts). */
export interface ConnectionDrain {
  /** True while answers carry Connection: close: the drain period, then from the app's close on. */
  isDraining(): boolean;
  /** True from SIGTERM on: readiness answers 503. */
  isStopping(): boolean;
  /** SIGTERM came. */
  stop(): void;
  /** Whether answers carry Connection: close while the listener still accepts. */
  closeConnections(on: boolean): void;
}

/** Registers the preClose flag and the onSend header, and counts unused connections as idle. */
export function registerConnectionDrain(app: FastifyInstance): ConnectionDrain {
  closeUnusedConnectionsToo(app.server);
  let draining = false;
  let stopping = false;
  app.addHook('preClose', (done) => {
    stopping = true;
    draining = true;
    done();
  });
  // The fast lane takes no request while draining, and hands back one it answered once draining started.
  app.addHook('onSend', accountedForByFastLane<onSendHookHandler>((_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  }));
  return {
    isDraining: () => draining,
    isStopping: () => stopping,
    stop: () => {
      stopping = true;
    },
    closeConnections: (on) => {
      draining = on;
    },
  };
}

/**
 * Makes `server.closeIdleConnections()`, which the close and
 * spareIdleConnections call, also close the connections on which nothing
 * has arrived yet (no request begun).
 */
function closeUnusedConnectionsToo(server: Server): void {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
  };
}

/**
 * Call right before `app.close()`: the server still stops accepting at
 * once, but its idle keep-alive connections are closed only after
 * `graceMs` (those busy then close after their response).
 *
 * @example
 * spareIdleConnections(app.server, TUNING.idleGraceMs.value);
 * await app.close();
 */
export function spareIdleConnections(server: Server, graceMs: number): void {
  const closeIdle = server.closeIdleConnections.bind(server);
  // server.close() calls this before it stops listening; it must not run now.
  server.closeIdleConnections = () => {};
  setTimeout(closeIdle, graceMs).unref();
}
