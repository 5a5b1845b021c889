/**
 * Logs are structured pino lines that carry request ids and never a secret
 * or a payload: at the default level and at trace (where every request is
 * logged), the captured lines are searched for a recognizable API key,
 * payload value, refused key and newly created key; the request id of a
 * problem body is found in the log, so an operator can go from a client's
 * error report to the log line.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig, type LogLevel } from '../../src/config.ts';
import { bootstrapTenants } from '../../src/startup/bootstrap.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { freshDatabase } from '../support/database.ts';

interface Scenario {
  /** Every log line, parsed. */
  entries: Array<Record<string, unknown>>;
  /** The raw log text. */
  text: string;
  secrets: { adminKey: string; refusedKey: string; createdKey: string; payloadValue: string };
  notFoundRequestId: string;
  unavailableRequestId: string;
}

/** Runs the same traffic against a service logging at `level`, capturing its lines. */
async function runScenario(level: LogLevel): Promise<Scenario> {
  const marker = randomBytes(6).toString('hex');
  const adminKey = `test_ADMINKEY_${marker}_0123456789`;
  const refusedKey = `rk_REFUSEDKEY_${marker}_0123456789`;
  const payloadValue = `PAYLOAD-VALUE-${marker}`;
  const database = await freshDatabase();
  const config = loadConfig({
    DATABASE_URL: database.databaseUrl ?? '',
    RULES_DATA_DIR: database.dataDir,
    RULES_BOOTSTRAP_TENANTS: `acme:${adminKey}`,
    LOG_LEVEL: level,
  });
  const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await bootstrapTenants(storage, config.bootstrapTenants ?? []);
  const lines: string[] = [];
  const app = await buildApp({ config, storage, logStream: { write: (line) => lines.push(line) } });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const call = async (method: string, path: string, body?: unknown, key = adminKey): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': key, 'x-tenant-id': 'acme', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  try {
    const rule = { context: 'kyc', code: 'SSN', name: 'SSN', fieldPath: 'ssn', expression: 'len($value) == 9', message: 'bad {{ $value }}' };
    expect((await call('POST', '/api/v1/rules', rule)).status).toBe(201);
    expect((await call('POST', '/api/v1/contexts/kyc/publish')).status).toBe(200);
    const created = await call('POST', '/api/v1/api-keys', { name: 'checkout', role: 'validator' });
    expect(created.status).toBe(201);
    const failed = await call('POST', '/api/v1/validation/validate', { context: 'kyc', payload: { ssn: payloadValue } }, created.body.key);
    expect(failed.body.failures[0].message).toContain(payloadValue);
    expect((await call('POST', '/api/v1/validation/validate', { context: 'kyc', payload: payloadValue })).status).toBe(400);
    expect((await call('POST', '/api/v1/validation/validate', { context: 'kyc', payload: {} }, refusedKey)).status).toBe(401);
    const notFound = await call('POST', '/api/v1/validation/validate', { context: 'elsewhere', payload: { ssn: payloadValue } });
    expect(notFound.status).toBe(404);
    // With the database gone, an uncached context is a 503, logged as a warning.
    await storage.close();
    const unavailable = await call('POST', '/api/v1/validation/validate', { context: 'uncached', payload: { ssn: payloadValue } });
    expect(unavailable.status).toBe(503);
    return {
      entries: lines.map((line) => JSON.parse(line) as Record<string, unknown>),
      text: lines.join(''),
      secrets: { adminKey, refusedKey, createdKey: created.body.key, payloadValue },
      notFoundRequestId: notFound.body.requestId,
      unavailableRequestId: unavailable.body.requestId,
    };
  } finally {
    await app.close();
    await storage.close().catch(() => {});
    await database.drop();
  }
}

describe.each<LogLevel>(['info', 'trace'])('logs at LOG_LEVEL=%s', (level) => {
  let scenario: Scenario;
  beforeAll(async () => {
    scenario = await runScenario(level);
  });

  it('are one JSON object per line with a level and a time', () => {
    expect(scenario.entries.length).toBeGreaterThan(0);
    for (const entry of scenario.entries) {
      expect(entry).toMatchObject({ level: expect.any(Number), time: expect.any(Number) });
    }
  });

  it.each(['adminKey', 'refusedKey', 'createdKey', 'payloadValue'] as const)('never contain the %s', (secret) => {
    expect(scenario.text).not.toContain(scenario.secrets[secret]);
  });

  it('carry the request id of a failed request, as its problem body gives it', () => {
    const lines = scenario.entries.filter((entry) => entry.requestId === scenario.unavailableRequestId);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'database unavailable' }));
  });

  if (level === 'trace') {
    it('log every request with its id, method and URL, but no headers or body', () => {
      const lines = scenario.entries.filter((entry) => entry.requestId === scenario.notFoundRequestId);
      expect(lines.map((entry) => entry.msg)).toEqual(['incoming request', 'request completed']);
      expect(lines[0].req).toMatchObject({ method: 'POST', url: '/api/v1/validation/validate' });
      expect(Object.keys(lines[0].req as object)).not.toContain('headers');
      expect(lines[1].res).toMatchObject({ statusCode: 404 });
    });
  } else {
    it('do not log each request', () => {
      expect(scenario.entries.some((entry) => entry.msg === 'incoming request')).toBe(false);
      expect(scenario.entries.some((entry) => entry.requestId === scenario.notFoundRequestId)).toBe(false);
    });
  }
});
