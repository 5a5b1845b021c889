/**
 * A real service for HTTP tests: a fresh database (PGlite, or PostgreSQL
 * when DATABASE_URL is set), two bootstrapped tenants with admin keys, the
 * app from buildApp listening on 127.0.0.1 on a free port, and a small
 * fetch-based client.
 *
 * @example
 * const t = await startTestApp();
 * const res = await t.request('POST', '/api/v1/validation/validate', { body: { context: 'c', payload: {} } });
 * await t.close();
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildAppOptions } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import type { Storage } from '../../src/storage/types.ts';
import { bootstrapTenants } from '../../src/startup/bootstrap.ts';
import { freshDatabase, type FreshDatabase } from './database.ts';
import { TEST_SERVICE_ENV } from './test-service-env.ts';

export interface TestRequestOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent verbatim instead of `body`. */
  rawBody?: string | Uint8Array;
  /** X-Api-Key; default the first tenant's admin key; null sends none. */
  key?: string | null;
  /** X-Tenant-Id; default the first tenant; null sends none. */
  tenant?: string | null;
  /** Content-Type when a body is sent; default application/json; null sends the body without one. */
  contentType?: string | null;
  /** Extra headers (win over the ones above). */
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, else the text ('' when empty). */
  body: any;
  /** The body as received. */
  text: string;
}

export interface StartTestAppOptions {
  /** Extra environment for loadConfig (e.g. MAX_BATCH_ITEMS). */
  env?: Record<string, string>;
  /** Receives the service's log lines (set LOG_LEVEL in env to see any). */
  logStream?: { write(line: string): void };
  /** Adds to the app before it is ready (hooks of the test's own), on every start. */
  beforeReady?: (app: FastifyInstance) => void | Promise<void>;
  /** The sample queue's size and its writer's intervals (buildApp's `sampling`). */
  sampling?: BuildAppOptions['sampling'];
  /** The audit retention sweep's interval (buildApp's `auditRetention`). */
  auditRetention?: BuildAppOptions['auditRetention'];
}

export interface TestApp {
  readonly app: FastifyInstance;
  readonly config: Config;
  readonly storage: Storage;
  readonly baseUrl: string;
  readonly database: FreshDatabase;
  readonly tenantId: string;
  readonly adminKey: string;
  readonly otherTenantId: string;
  readonly otherAdminKey: string;
  request(method: string, path: string, options?: TestRequestOptions): Promise<TestResponse>;
  /**
   * Closes the app and storage and starts them again on the same database;
   * `whileStopped` runs in between (e.g. SQL on the database through
   * openDatabase, which PGlite allows only while the service is stopped).
   * `env` is laid over the first start's (e.g. a lower limit than the rules were saved under).
   */
  restart(whileStopped?: () => Promise<void>, env?: Record<string, string>): Promise<void>;
  /** Closes everything and drops the database. */
  close(): Promise<void>;
}

/** Starts the service on a fresh database with tenants `acme` and `globex`. */
export async function startTestApp(options: StartTestAppOptions = {}): Promise<TestApp> {
  const database = await freshDatabase();
  const tenantId = 'acme';
  const otherTenantId = 'globex';
  const adminKey = `test_${randomBytes(24).toString('base64url')}`;
  const otherAdminKey = `test_${randomBytes(24).toString('base64url')}`;
  const configFor = (env: Record<string, string> | undefined): Config => loadConfig({
    DATABASE_URL: database.databaseUrl ?? '',
    RULES_DATA_DIR: database.dataDir,
    RULES_BOOTSTRAP_TENANTS: `${tenantId}:${adminKey},${otherTenantId}:${otherAdminKey}`,
    LOG_LEVEL: 'silent',
    PORT: '0',
    ...TEST_SERVICE_ENV,
    ...options.env,
    ...env,
  });
  let config = configFor(undefined);

  const start = async (): Promise<{ app: FastifyInstance; storage: Storage; baseUrl: string }> => {
    const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      await bootstrapTenants(storage, config.bootstrapTenants ?? []);
      const app = await buildApp({
        config, storage, logStream: options.logStream, beforeReady: options.beforeReady, sampling: options.sampling, auditRetention: options.auditRetention,
      });
      const address = await app.listen({ host: '127.0.0.1', port: 0 });
      return { app, storage, baseUrl: address };
    } catch (error) {
      await storage.close();
      throw error;
    }
  };
  const stop = async (running: { app: FastifyInstance; storage: Storage }): Promise<void> => {
    await running.app.close();
    await running.storage.close();
  };

  let running = await start();
  let closed = false;

  return {
    get app() {
      return running.app;
    },
    get storage() {
      return running.storage;
    },
    get baseUrl() {
      return running.baseUrl;
    },
    get config() {
      return config;
    },
    database,
    tenantId,
    adminKey,
    otherTenantId,
    otherAdminKey,
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = {};
      const key = requestOptions.key === undefined ? adminKey : requestOptions.key;
      const tenant = requestOptions.tenant === undefined ? tenantId : requestOptions.tenant;
      if (key !== null) headers['x-api-key'] = key;
      if (tenant !== null) headers['x-tenant-id'] = tenant;
      let body: string | Uint8Array | undefined;
      if (requestOptions.rawBody !== undefined) body = requestOptions.rawBody;
      else if (requestOptions.body !== undefined) body = JSON.stringify(requestOptions.body);
      if (body !== undefined) {
        const contentType = requestOptions.contentType === undefined ? 'application/json' : requestOptions.contentType;
        if (contentType !== null) headers['content-type'] = contentType;
        // fetch labels string bodies text/plain; bytes go out unlabelled.
        else if (typeof body === 'string') body = Buffer.from(body);
      }
      Object.assign(headers, requestOptions.headers);
      const response = await fetch(running.baseUrl + path, { method, headers, body });
      const text = await response.text();
      const type = response.headers.get('content-type') ?? '';
      let parsed: unknown = text;
      if (/json/i.test(type) && text.length > 0) parsed = JSON.parse(text);
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
    async restart(whileStopped, env) {
      await stop(running);
      await whileStopped?.();
      if (env !== undefined) config = configFor(env);
      running = await start();
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await stop(running);
      } finally {
        await database.drop();
      }
    },
  };
}
