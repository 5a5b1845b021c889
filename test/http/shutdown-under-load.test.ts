/**
 * SIGTERM under load (docs/operations.md): the real server process validates a
 * steady stream of requests from several keep-alive connections; SIGTERM
 * arrives in the middle. No request is lost: every request gets a 200
 * (those that reach an open connection are answered, with
 * `Connection: close` once draining), and a request that needs a new
 * connection after the listener closed is refused at connect
 * (ECONNREFUSED), never reset or answered with an error. Then the process
 * exits 0.
 *
 * And SIGTERM while the event loop is busy, as an orchestrator sends it:
 * forty 1,000-item batches on forty new connections, SIGTERM 200 ms later.
 * Connections the kernel accepted but the busy process had not taken yet
 * must not be reset when the listener closes: every batch is answered 200
 * (with one worker and, on PostgreSQL, with two), and the process exits 0.
 *
 * And with a drain period: readiness is 503 from SIGTERM on, a new
 * connection is still served (with Connection: close) during the period,
 * and refused after.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.ts';
import { serviceArgs } from '../support/service-bundle.ts';
import { TEST_SERVICE_ENV } from '../support/test-service-env.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const KEY = 'shutdown_test_key_0123456789abcdef';
const CONTEXT = 'checkout';
const CONNECTIONS = 8;
/** More than the clients can send before the listener closes, 50 ms or more after SIGTERM: each client ends refused. */
const TOTAL_REQUESTS = 5000;
/** SIGTERM goes out once this many responses came back. */
const SIGTERM_AFTER = 100;

interface Outcome {
  client: number;
  afterSigterm: boolean;
  status?: number;
  connection?: string;
  error?: string;
}

/** The server of the steady-stream test. */
let steady: OwnServer;
let child: ChildProcess;
let exited: Promise<number | null>;
let port: number;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port: free } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return free;
}

/** One validation on the client's own keep-alive agent. */
function validate(agent: http.Agent, payload: unknown): Promise<{ status: number; connection: string }> {
  return validateWith(agent, port, payload);
}

/** One validation through `agent` to the server on `serverPort`. */
function validateWith(agent: http.Agent, serverPort: number, payload: unknown): Promise<{ status: number; connection: string }> {
  const body = JSON.stringify({ context: CONTEXT, payload });
  return new Promise((done, fail) => {
    const request = http.request({
      host: '127.0.0.1',
      port: serverPort,
      method: 'POST',
      path: '/api/v1/validation/validate',
      agent,
      headers: {
        'x-api-key': KEY,
        'x-tenant-id': 'acme',
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    }, (response) => {
      response.resume();
      response.on('end', () => done({ status: response.statusCode ?? 0, connection: String(response.headers.connection) }));
      response.on('error', fail);
    });
    request.on('error', fail);
    request.end(body);
  });
}

beforeAll(async () => {
  steady = await startLoadedServer({});
  ({ child, exited, port } = steady);
}, 60_000);

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
  await steady?.drop();
});

interface OwnServer {
  port: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
  drop: () => Promise<void>;
}

/** A server process of its own on a fresh database, with `checkout` published. */
async function startLoadedServer(env: Record<string, string>): Promise<OwnServer> {
  const own = await freshDatabase();
  const ownPort = await freePort();
  const inherited = { ...process.env };
  for (const name of ['DATABASE_URL', 'RULES_DATA_DIR', 'RULES_BOOTSTRAP_TENANTS', 'LOG_LEVEL', 'WORKERS', 'RATE_LIMIT_MAX']) delete inherited[name];
  const server = spawn(process.execPath, serviceArgs(), {
    cwd: ROOT,
    env: {
      ...inherited,
      PORT: String(ownPort),
      HOST: '127.0.0.1',
      RULES_DATA_DIR: own.dataDir,
      DATABASE_URL: own.databaseUrl ?? '',
      RULES_BOOTSTRAP_TENANTS: `acme:${KEY}`,
      LOG_LEVEL: 'warn',
      ...TEST_SERVICE_ENV,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  server.stdout.on('data', (chunk) => (log += chunk));
  server.stderr.on('data', (chunk) => (log += chunk));
  const serverExited = new Promise<number | null>((done) => server.on('exit', (code) => done(code)));
  const call = (method: string, path: string, body?: unknown) => fetch(`http://127.0.0.1:${ownPort}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': KEY, 'x-tenant-id': 'acme', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  for (;;) {
    if (server.exitCode !== null) throw new Error(`server exited early:\n${log}`);
    try {
      if ((await fetch(`http://127.0.0.1:${ownPort}/health/live`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  expect((await call('POST', '/rules', { context: CONTEXT, code: 'TOTAL', name: 'Total', fieldPath: 'total', required: true, expression: '$value <= 1000' })).status).toBe(201);
  expect((await call('POST', '/rules', { context: CONTEXT, code: 'ITEMS', name: 'Items', forEach: 'items', fieldPath: 'items[].qty', expression: '$value > 0' })).status).toBe(201);
  expect((await call('POST', `/contexts/${CONTEXT}/publish`)).status).toBe(200);
  return { port: ownPort, child: server, exited: serverExited, output: () => log, drop: () => own.drop() };
}

/** One batch on a connection of its own: its status, or the error code the client got. */
function batchOnNewConnection(batchPort: number, body: string): Promise<{ status?: number; error?: string }> {
  return new Promise((done) => {
    const request = http.request({
      host: '127.0.0.1',
      port: batchPort,
      method: 'POST',
      path: '/api/v1/validation/validate-batch',
      agent: false,
      headers: { 'x-api-key': KEY, 'x-tenant-id': 'acme', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      response.resume();
      response.on('end', () => done({ status: response.statusCode }));
      response.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    request.end(body);
  });
}

const BATCHES = 40;
const BATCH_ITEMS = 1000;
const onPostgres = !!process.env.DATABASE_URL;

describe.each([
  ['one process', '1'],
  // WORKERS > 1 needs PostgreSQL.
  ...(onPostgres ? [['two workers', '2']] : []),
])('SIGTERM 200 ms after forty 1,000-item batches, with %s', (_name, workers) => {
  it('answers every batch with 200, resets no connection, and exits 0', async () => {
    const server = await startLoadedServer({ WORKERS: workers });
    try {
      const body = JSON.stringify({
        context: CONTEXT,
        items: Array.from({ length: BATCH_ITEMS }, (_, i) => ({ id: `item-${i}`, payload: { total: i, items: [{ qty: i % 3 }, { qty: 1 }] } })),
      });
      const batches = Array.from({ length: BATCHES }, () => batchOnNewConnection(server.port, body));
      await new Promise((done) => setTimeout(done, 200));
      server.child.kill('SIGTERM');
      const outcomes = await Promise.all(batches);
      const errors = outcomes.filter((outcome) => outcome.error !== undefined).map((outcome) => outcome.error);
      expect(errors).toEqual([]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(Array.from({ length: BATCHES }, () => 200));
      expect(await server.exited).toBe(0);
      expect(server.output()).not.toMatch(/"level":(50|60)/);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      await server.drop();
    }
  }, 120_000);
});

describe('SIGTERM while keep-alive clients send a steady stream of validations', () => {
  it('answers every request that reaches the server with 200, refuses new connections, and exits 0', async () => {
    const outcomes: Outcome[] = [];
    let answered = 0;
    let sent = 0;
    let sigtermAt: number | undefined;

    const client = async (id: number): Promise<void> => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        while (sent < TOTAL_REQUESTS) {
          sent++;
          const afterSigterm = sigtermAt !== undefined;
          try {
            const { status, connection } = await validate(agent, { total: sent % 1500, items: [{ qty: sent % 3 }] });
            outcomes.push({ client: id, afterSigterm, status, connection });
            if (++answered === SIGTERM_AFTER) {
              sigtermAt = Date.now();
              child.kill('SIGTERM');
            }
          } catch (error) {
            outcomes.push({ client: id, afterSigterm, error: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
            // Refused: the server stopped accepting; this client is done.
            return;
          }
        }
      } finally {
        agent.destroy();
      }
    };

    await Promise.all(Array.from({ length: CONNECTIONS }, (_, id) => client(id)));
    expect(await exited).toBe(0);

    const errors = outcomes.filter((o) => o.error !== undefined);
    const statuses = outcomes.filter((o) => o.status !== undefined);
    // Nothing but answers and refusals at connect.
    expect(new Set(errors.map((o) => o.error))).toEqual(new Set(errors.length === 0 ? [] : ['ECONNREFUSED']));
    expect(statuses.filter((o) => o.status !== 200)).toEqual([]);
    // Refusals only once the server was told to stop.
    expect(errors.filter((o) => !o.afterSigterm)).toEqual([]);
    // The load really straddled the signal.
    expect(statuses.filter((o) => !o.afterSigterm).length).toBeGreaterThanOrEqual(SIGTERM_AFTER - CONNECTIONS);
    expect(outcomes.filter((o) => o.afterSigterm).length).toBeGreaterThan(0);
    // Every client was finally refused at connect (its old connection closed)...
    for (let id = 0; id < CONNECTIONS; id++) expect(outcomes.filter((o) => o.client === id).at(-1)?.error).toBe('ECONNREFUSED');
    // ...after answers that told it to go: draining answers carry Connection: close.
    expect(statuses.filter((o) => o.afterSigterm && o.connection === 'close').length).toBeGreaterThan(0);
    expect(steady.output()).not.toMatch(/"level":(50|60)/);
  }, 60_000);
});

describe('SIGTERM with a drain period (SHUTDOWN_DRAIN_MS)', () => {
  it('is unready at once, keeps accepting and answering with Connection: close for the period, then refuses, and exits 0', async () => {
    const server = await startLoadedServer({ SHUTDOWN_DRAIN_MS: '1500' });
    try {
      const ready = await fetch(`http://127.0.0.1:${server.port}/health/ready`);
      expect(ready.status).toBe(200);
      server.child.kill('SIGTERM');
      await new Promise((done) => setTimeout(done, 300));
      const unready = await fetch(`http://127.0.0.1:${server.port}/health/ready`);
      expect(unready.status).toBe(503);
      expect(unready.headers.get('connection')).toBe('close');
      expect(await unready.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', detail: 'The service is shutting down.' });
      // A new connection during the period is served, and told to go.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const during = await validateWith(agent, server.port, { total: 5, items: [{ qty: 1 }] });
      expect(during).toEqual({ status: 200, connection: 'close' });
      agent.destroy();
      expect(await server.exited).toBe(0);
      const after = await validateWith(new http.Agent(), server.port, { total: 5, items: [{ qty: 1 }] }).catch((error: NodeJS.ErrnoException) => error.code);
      expect(after).toBe('ECONNREFUSED');
      expect(server.output()).not.toMatch(/"level":(50|60)/);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      await server.drop();
    }
  }, 120_000);
});
