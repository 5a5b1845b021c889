/**
 * SIGTERM under load (docs/operations.md): the real server process validates a
 * steady stream of requests from several keep-alive connections; SIGTERM
 * arrives in the middle. No request is lost: every request gets a 200
 * (those that reach an open connection are answered, with
 * `Connection: close` once draining), and a request that needs a new
 * connection after the listener closed is refused at connect
 * (ECONNREFUSED), never reset or answered with an error. Then the process
 * exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { serviceArgs } from '../support/service-bundle.ts';
import { TEST_SERVICE_ENV } from '../support/test-service-env.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const KEY = 'shutdown_test_key_0123456789abcdef';
const CONTEXT = 'checkout';
const CONNECTIONS = 8;
const TOTAL_REQUESTS = 200;
/** SIGTERM goes out once this many responses came back. */
const SIGTERM_AFTER = 100;

interface Outcome {
  client: number;
  afterSigterm: boolean;
  status?: number;
  connection?: string;
  error?: string;
}

let db: FreshDatabase;
let child: ChildProcess;
let exited: Promise<number | null>;
let port: number;
let output = '';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port: free } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return free;
}

async function untilListening(): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health/live`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function admin(method: string, path: string, body?: unknown): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': KEY, 'x-tenant-id': 'acme', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status, await response.text()).toBeLessThan(300);
}

/** One validation on the client's own keep-alive agent. */
function validate(agent: http.Agent, payload: unknown): Promise<{ status: number; connection: string }> {
  const body = JSON.stringify({ context: CONTEXT, payload });
  return new Promise((done, fail) => {
    const request = http.request({
      host: '127.0.0.1',
      port,
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
  db = await freshDatabase();
  port = await freePort();
  const inherited = { ...process.env };
  for (const name of ['DATABASE_URL', 'RULES_DATA_DIR', 'RULES_BOOTSTRAP_TENANTS', 'LOG_LEVEL', 'WORKERS', 'RATE_LIMIT_MAX']) delete inherited[name];
  child = spawn(process.execPath, serviceArgs(), {
    cwd: ROOT,
    env: {
      ...inherited,
      PORT: String(port),
      HOST: '127.0.0.1',
      RULES_DATA_DIR: db.dataDir,
      DATABASE_URL: db.databaseUrl ?? '',
      RULES_BOOTSTRAP_TENANTS: `acme:${KEY}`,
      LOG_LEVEL: 'warn',
      ...TEST_SERVICE_ENV,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  exited = new Promise((done) => child.on('exit', (code) => done(code)));
  await untilListening();
  await admin('POST', '/rules', { context: CONTEXT, code: 'TOTAL', name: 'Total', fieldPath: 'total', required: true, expression: '$value <= 1000' });
  await admin('POST', '/rules', { context: CONTEXT, code: 'ITEMS', name: 'Items', forEach: 'items', fieldPath: 'items[].qty', expression: '$value > 0' });
  await admin('POST', `/contexts/${CONTEXT}/publish`);
}, 60_000);

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
  await db?.drop();
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
    expect(output).not.toMatch(/"level":(50|60)/);
  }, 60_000);
});
