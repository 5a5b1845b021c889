/**
 * A TCP proxy that tests can cut and restore, to take a database away from
 * one app without touching the PostgreSQL server every other test file
 * shares. Point the app's DATABASE_URL at `proxy.url(realUrl)`.
 *
 * Two ways to fail, as real outages do:
 * - `cut('reset')`: every open connection is reset and new ones are reset
 *   as soon as they arrive, as when the server process dies or refuses.
 * - `cut('blackhole')`: connections stay open but nothing passes in either
 *   direction and new ones are never answered, as in a network partition.
 * `restore()` lets new connections through again; after a blackhole, the
 * connections it held resume where they stopped, as when a partition heals.
 *
 * `onClientData` sees every chunk a client sends, right after it was
 * passed on (a test can stall its own event loop there, at the moment a
 * command is on its way, to see what a stall does to the caller).
 *
 * @example
 * const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
 * const url = proxy.url('postgres://postgres@127.0.0.1:5432/test');
 * proxy.cut();
 * proxy.restore();
 * await proxy.close();
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export type CutMode = 'reset' | 'blackhole';

export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** Connections currently open through the proxy. */
  readonly openConnections: number;
  /** The same connection URL, with host and port replaced by the proxy's. */
  url(targetUrl: string): string;
  /** Takes the target away (see the module comment). */
  cut(mode?: CutMode): void;
  /** Lets new connections through again. */
  restore(): void;
  /** Closes the listener and every connection. */
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

export interface TcpProxyOptions {
  /** Called with each chunk a client sent, once it was written to the target. */
  onClientData?: (chunk: Buffer) => void;
}

/** Starts a proxy on 127.0.0.1 (free port) in front of `target`. */
export async function startTcpProxy(target: { host: string; port: number }, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const stalled = new Set<Socket>();
  let mode: CutMode | undefined;

  const drop = (pair: Pair): void => {
    pairs.delete(pair);
    destroyHard(pair.client);
    destroyHard(pair.upstream);
  };

  const server: Server = createServer((client) => {
    client.on('error', () => {});
    if (mode === 'reset') {
      destroyHard(client);
      return;
    }
    if (mode === 'blackhole') {
      // Accepted, never answered: the client waits until its own timeout.
      stalled.add(client);
      client.on('close', () => stalled.delete(client));
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair: Pair = { client, upstream };
    pairs.add(pair);
    upstream.on('error', () => drop(pair));
    client.on('close', () => drop(pair));
    upstream.on('close', () => drop(pair));
    client.pipe(upstream);
    upstream.pipe(client);
    // Added after pipe's own listener, so it runs once the chunk was written on.
    const onClientData = options.onClientData;
    if (onClientData !== undefined) client.on('data', (chunk: Buffer) => onClientData(chunk));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };

  return {
    host: '127.0.0.1',
    port,
    get openConnections() {
      return pairs.size;
    },
    url(targetUrl) {
      const url = new URL(targetUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    cut(cutMode = 'reset') {
      mode = cutMode;
      for (const pair of [...pairs]) {
        if (cutMode === 'reset') {
          drop(pair);
        } else {
          // Stop both directions without closing anything.
          pair.client.unpipe(pair.upstream);
          pair.upstream.unpipe(pair.client);
          pair.client.pause();
          pair.upstream.pause();
        }
      }
    },
    restore() {
      if (mode === 'blackhole') {
        for (const pair of pairs) {
          pair.client.pipe(pair.upstream);
          pair.upstream.pipe(pair.client);
        }
      }
      mode = undefined;
      // Whoever connected during the partition has given up by now.
      for (const socket of [...stalled]) destroyHard(socket);
    },
    async close() {
      for (const pair of [...pairs]) drop(pair);
      for (const socket of [...stalled]) destroyHard(socket);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Closes with a TCP reset where the platform allows, like a dead peer. */
function destroyHard(socket: Socket): void {
  if (socket.destroyed) return;
  if (typeof socket.resetAndDestroy === 'function' && socket.readyState !== 'opening') socket.resetAndDestroy();
  else socket.destroy();
}
