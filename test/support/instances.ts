/**
 * Real server processes for tests of several instances on one database:
 * the bundle `npm start` runs (`node --enable-source-maps dist/server.js`),
 * on a free port, with its output collected and a small fetch-based client.
 *
 * @example
 * const a = await startInstance({ databaseUrl, env: { RULES_BOOTSTRAP_TENANTS: `acme:${key}` } });
 * const res = await a.request('POST', '/api/v1/validation/validate', { body, key, tenant: 'acme' });
 * await a.stop();
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serviceArgs } from './service-bundle.ts';
import { TEST_SERVICE_ENV } from './test-service-env.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Variables of the test runner's environment that must not leak into the service. */
const SERVICE_VARIABLES = ['RULES_BOOTSTRAP_TENANTS', 'DATABASE_URL', 'RULES_DATA_DIR', 'LOG_LEVEL', 'WORKERS', 'PORT', 'HOST', 'REDIS_URL'];

export interface InstanceOptions {
  databaseUrl: string;
  /** Scratch folder for RULES_DATA_DIR (unused on PostgreSQL, but must exist in config). */
  dataDir: string;
  /** More environment for the service (RULES_BOOTSTRAP_TENANTS, WORKERS…). */
  env?: Record<string, string>;
  /** Output that says the instance is ready; default: /health/ready answers 200. */
  readyWhen?: RegExp;
  startTimeoutMs?: number;
}

export interface InstanceRequestOptions {
  body?: unknown;
  key?: string;
  tenant?: string;
}

export interface InstanceResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface Instance {
  readonly pid: number;
  readonly port: number;
  readonly baseUrl: string;
  /** stdout and stderr so far. */
  output(): string;
  request(method: string, path: string, options?: InstanceRequestOptions): Promise<InstanceResponse>;
  /** SIGTERM, then the exit; SIGKILL if it is still there after `timeoutMs`. Safe to call twice. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** Starts one instance and resolves once it is ready; rejects (with its output) if it exits or times out first. */
export async function startInstance(options: InstanceOptions): Promise<Instance> {
  const port = await freePort();
  const inherited = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete inherited[name];
  const child = spawn(process.execPath, serviceArgs(), {
    cwd: ROOT,
    env: {
      ...inherited,
      DATABASE_URL: options.databaseUrl,
      RULES_DATA_DIR: options.dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...TEST_SERVICE_ENV,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const baseUrl = `http://127.0.0.1:${port}`;
  const instance: Instance = {
    pid: child.pid!,
    port,
    baseUrl,
    output: () => output,
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = {};
      if (requestOptions.key !== undefined) headers['x-api-key'] = requestOptions.key;
      if (requestOptions.tenant !== undefined) headers['x-tenant-id'] = requestOptions.tenant;
      let body: string | undefined;
      if (requestOptions.body !== undefined) {
        body = JSON.stringify(requestOptions.body);
        headers['content-type'] = 'application/json';
      }
      const response = await fetch(baseUrl + path, { method, headers, body });
      const text = await response.text();
      const json = /json/i.test(response.headers.get('content-type') ?? '') && text.length > 0;
      return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text };
    },
    async stop(timeoutMs = 15_000) {
      if (!hasExited) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 45_000);
  for (;;) {
    if (hasExited) throw new Error(`the instance exited before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      await instance.stop(1000);
      throw new Error(`the instance was not ready in time:\n${output}`);
    }
    if (options.readyWhen !== undefined) {
      if (options.readyWhen.test(output)) return instance;
    } else {
      try {
        const response = await fetch(`${baseUrl}/health/ready`);
        if (response.ok) return instance;
      } catch {
        // not listening yet
      }
    }
    await new Promise((done) => setTimeout(done, 50));
  }
}

/**
 * Two instances on one database, started together with the same
 * environment: what every test of several instances begins with.
 *
 * @example
 * const [a, b] = await startTwoInstances(database, { RULES_BOOTSTRAP_TENANTS: `acme:${key}` });
 */
export function startTwoInstances(
  database: { databaseUrl?: string; dataDir: string }, env: Record<string, string>,
): Promise<[Instance, Instance]> {
  const options = { databaseUrl: database.databaseUrl!, dataDir: database.dataDir, env };
  return Promise.all([startInstance(options), startInstance(options)]);
}
