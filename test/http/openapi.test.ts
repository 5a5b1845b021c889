/**
 * The OpenAPI document at /docs/json covers every route the app has (each
 * route is collected as Fastify adds it), with its methods; /api/v1
 * operations require the X-Api-Key and X-Tenant-Id schemes and document
 * their problem+json errors; the interactive docs answer at /docs without
 * authentication.
 */
import type { RouteOptions } from 'fastify';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { bootstrapTenants } from '../../src/startup/bootstrap.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import type { Storage } from '../../src/storage/types.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let database: FreshDatabase;
let storage: Storage;
let app: Awaited<ReturnType<typeof buildApp>>;
let baseUrl: string;
const routes: Array<{ method: string; url: string; hidden: boolean }> = [];
let document: any;

beforeAll(async () => {
  database = await freshDatabase();
  const config = loadConfig({
    DATABASE_URL: database.databaseUrl ?? '',
    RULES_DATA_DIR: database.dataDir,
    RULES_BOOTSTRAP_TENANTS: 'acme:openapi_test_key_0123456789abcdef',
    LOG_LEVEL: 'silent',
  });
  storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await bootstrapTenants(storage, config.bootstrapTenants ?? []);
  const collect = (route: RouteOptions): void => {
    const schema = route.schema;
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, hidden: schema?.hide === true });
  };
  app = await buildApp({ config, storage, onRoute: collect });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const response = await fetch(`${baseUrl}/docs/json`);
  expect(response.status).toBe(200);
  document = await response.json();
});
afterAll(async () => {
  await app?.close();
  await storage?.close();
  await database?.drop();
});

/** Fastify's `/rules/:id` is OpenAPI's `/rules/{id}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 with the service version', () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: 'Rules service', version });
  });

  it('has every route the app has, with each of its methods', () => {
    // HEAD routes are Fastify's automatic twins of GET routes; hidden
    // routes are the documentation's own pages and assets.
    const documented = routes.filter((route) => route.method !== 'HEAD' && !route.hidden);
    expect(documented.length).toBeGreaterThanOrEqual(20);
    const missing = documented.filter((route) => document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()] === undefined);
    expect(missing).toEqual([]);
    for (const required of ['/api/v1/validation/validate', '/api/v1/rules/{id}', '/health/ready', '/metrics']) {
      expect(Object.keys(document.paths)).toContain(required);
    }
  });

  it('has nothing the app does not serve', () => {
    const served = new Set(routes.map((route) => `${route.method.toLowerCase()} ${openApiPath(route.url)}`));
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      for (const method of Object.keys(operations).filter((key) => HTTP_METHODS.includes(key))) {
        expect(served.has(`${method} ${path}`), `${method} ${path}`).toBe(true);
      }
    }
  });

  it('requires X-Api-Key and X-Tenant-Id on every /api/v1 operation, and nothing elsewhere', () => {
    expect(document.components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }),
      tenantId: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Tenant-Id' }),
    });
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      for (const operation of Object.values(operations)) {
        if (path.startsWith('/api/v1/')) {
          expect(operation.security, path).toEqual([{ apiKey: [], tenantId: [] }]);
          expect(operation.responses['400'].content['application/problem+json'], path).toBeDefined();
          expect(operation.responses['401'].content['application/problem+json'], path).toBeDefined();
          expect(operation.responses['429'].headers['Retry-After'], path).toBeDefined();
        } else {
          expect(operation.security, path).toBeUndefined();
        }
      }
    }
  });

  it('describes the validation request and response from the route schemas', () => {
    const validate = document.paths['/api/v1/validation/validate'].post;
    expect(validate.tags).toEqual(['Validation']);
    const body = validate.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['context', 'payload']);
    const ok = validate.responses['200'].content['application/json'].schema;
    expect(ok).toEqual({ $ref: '#/components/schemas/SingleResult' });
    expect(document.components.schemas.SingleResult.required).toEqual(['isValid', 'totalRulesEvaluated', 'failures', 'executionTimeMs']);
    expect(document.paths['/api/v1/rules/{id}'].get.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: 'path', name: 'id', required: true })]),
    );
  });
});

describe('the interactive docs', () => {
  it.each(['/docs', '/docs/json', '/docs/yaml'])('answer %s without a key', async (path) => {
    const response = await fetch(`${baseUrl}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-limit')).toBeNull();
  });

  it('serve Swagger UI pointing at the document', async () => {
    const page = await fetch(`${baseUrl}/docs`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    const initializer = await fetch(`${baseUrl}/docs/static/swagger-initializer.js`);
    expect(initializer.status).toBe(200);
  });

  it('keep a content security policy that works over plain HTTP: scripts from the page itself, no upgrade to https', async () => {
    for (const path of ['/docs/static/index.html', '/docs/static/swagger-initializer.js']) {
      const policy = (await fetch(`${baseUrl}${path}`)).headers.get('content-security-policy') ?? '';
      expect(policy, path).toContain("default-src 'self'");
      expect(policy, path).toContain("object-src 'none'");
      expect(policy, path).not.toContain('upgrade-insecure-requests');
    }
  });
});
