/**
 * Services for the fault suites: the app from buildApp on a fresh
 * database, optionally reaching PostgreSQL through a TCP proxy that the
 * test can cut, and further instances on the same database (as several
 * processes behind a load balancer would be).
 *
 * @example
 * const service = await startService({ proxied: true });
 * service.proxy!.cut();
 * await service.close();
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import { loadConfig, type Config } from '../../../src/config.ts';
import { createStorage } from '../../../src/storage/create-storage.ts';
import type { Storage } from '../../../src/storage/types.ts';
import { bootstrapTenants } from '../../../src/startup/bootstrap.ts';
import { freshDatabase, type FreshDatabase } from '../../support/database.ts';
import { startTcpProxy, type TcpProxy } from '../../support/proxy.ts';
import { TEST_SERVICE_ENV } from '../../support/test-service-env.ts';
import { UNLIMITED } from './measure.ts';

export interface ServiceResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Default: the first tenant's admin key. */
  key?: string;
  /** Default: the first tenant. */
  tenant?: string;
}

/** One running instance. */
export interface Instance {
  readonly app: FastifyInstance;
  readonly storage: Storage;
  readonly baseUrl: string;
  request(method: string, path: string, options?: RequestOptions): Promise<ServiceResponse>;
  close(): Promise<void>;
}

export interface Service extends Instance {
  readonly config: Config;
  readonly database: FreshDatabase;
  /** Set when started with `proxied: true`: the only way this service reaches PostgreSQL. */
  readonly proxy: TcpProxy | undefined;
  readonly tenantId: string;
  readonly adminKey: string;
  readonly otherTenantId: string;
  readonly otherAdminKey: string;
  /** Another instance on the same database (and proxy, if any). */
  startInstance(): Promise<Instance>;
}

export interface StartServiceOptions {
  env?: Record<string, string>;
  /** Reach PostgreSQL through a TCP proxy (needs DATABASE_URL). */
  proxied?: boolean;
}

/** Starts the service with tenants `acme` and `globex`. */
export async function startService(options: StartServiceOptions = {}): Promise<Service> {
  const database = await freshDatabase();
  let proxy: TcpProxy | undefined;
  let databaseUrl = database.databaseUrl ?? '';
  if (options.proxied === true) {
    if (database.databaseUrl === undefined) throw new Error('a proxied service needs DATABASE_URL');
    const target = new URL(database.databaseUrl);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    databaseUrl = proxy.url(database.databaseUrl);
  }
  const tenantId = 'acme';
  const otherTenantId = 'globex';
  const adminKey = `test_${randomBytes(24).toString('base64url')}`;
  const otherAdminKey = `test_${randomBytes(24).toString('base64url')}`;
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    RULES_DATA_DIR: database.dataDir,
    RULES_BOOTSTRAP_TENANTS: `${tenantId}:${adminKey},${otherTenantId}:${otherAdminKey}`,
    LOG_LEVEL: 'silent',
    PORT: '0',
    ...TEST_SERVICE_ENV,
    ...UNLIMITED,
    ...options.env,
  });

  const instances: Instance[] = [];
  const startInstance = async (): Promise<Instance> => {
    const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    let app: FastifyInstance;
    let baseUrl: string;
    try {
      await bootstrapTenants(storage, config.bootstrapTenants ?? []);
      app = await buildApp({ config, storage });
      baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    } catch (error) {
      await storage.close();
      throw error;
    }
    let closed = false;
    const instance: Instance = {
      app,
      storage,
      baseUrl,
      request: (method, path, requestOptions = {}) => send(baseUrl, method, path, {
        key: adminKey,
        tenant: tenantId,
        ...requestOptions,
      }),
      async close() {
        if (closed) return;
        closed = true;
        await app.close();
        await storage.close();
      },
    };
    instances.push(instance);
    return instance;
  };

  const first = await startInstance();
  return {
    ...first,
    config,
    database,
    proxy,
    tenantId,
    adminKey,
    otherTenantId,
    otherAdminKey,
    startInstance,
    async close() {
      try {
        // Let the instances reach the database again so they close cleanly.
        proxy?.restore();
        for (const instance of instances) await instance.close().catch(() => {});
        await proxy?.close();
      } finally {
        await database.drop();
      }
    },
  };
}

async function send(baseUrl: string, method: string, path: string, options: RequestOptions): Promise<ServiceResponse> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.tenant !== undefined) headers['x-tenant-id'] = options.tenant;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return { status: response.status, headers: response.headers, body: /json/.test(type) && text.length > 0 ? JSON.parse(text) : text, text };
}
