/**
 * Every status a route answers is documented, with the body and headers it
 * really has. Real requests drive each operation through its answers (at
 * least: 401 without a key on every /api/v1 operation, 403 with a
 * validator key on admin operations, 400, 413 and 415 on operations with a
 * body, 404 for an unknown id or context, and the success status), and each
 * answer is checked against the document: its status is listed for the
 * operation, its body validates against the documented schema for its
 * content type, and the documented headers are there.
 */
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestRequestOptions } from '../support/app.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const DOCUMENT_ID = 'openapi.json';

interface DocumentedOperation {
  id: string;
  method: string;
  /** OpenAPI path template, e.g. /api/v1/rules/{id}. */
  path: string;
  operation: any;
}

let t: TestApp;
let document: any;
let operations: Map<string, DocumentedOperation>;
let ajv: Ajv2020;
let validatorKey: string;
/** Statuses observed per operationId. */
const observed = new Map<string, Set<number>>();

beforeAll(async () => {
  t = await startTestApp({ env: { MAX_BODY_BYTES: '4096' } });
  document = await (await fetch(`${t.baseUrl}/docs/json`)).json();
  operations = new Map();
  for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (METHODS.includes(method)) operations.set(operation.operationId, { id: operation.operationId, method: method.toUpperCase(), path, operation });
    }
  }
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components: document.components });
});
afterAll(async () => {
  await t?.close();
});

/** A documented schema as a standalone one: its component references point into the document. */
function standalone(schema: unknown): object {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`));
}

function matchesTemplate(template: string, path: string): boolean {
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${pattern}$`).test(path.split('?')[0]);
}

/**
 * Sends a request to an operation and checks its answer against the
 * document; returns the answer for further checks.
 */
async function call(id: string, path: string, expected: number, options: TestRequestOptions & { method?: string } = {}) {
  const documented = operations.get(id);
  expect(documented, id).toBeDefined();
  const { method, path: template, operation } = documented!;
  expect(matchesTemplate(template, path), `${path} is ${template}`).toBe(true);
  const response = await t.request(options.method ?? method, path, options);
  const where = `${id} ${method} ${path} -> ${response.status}`;
  expect(response.status, `${where}: ${response.text.slice(0, 300)}`).toBe(expected);
  const answer = operation.responses[String(response.status)];
  expect(answer, `${where} is not documented`).toBeDefined();
  if (answer.content === undefined) {
    expect(response.text, where).toBe('');
  } else {
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0].trim();
    expect(Object.keys(answer.content), where).toContain(mediaType);
    const validate = ajv.compile(standalone(answer.content[mediaType].schema));
    const valid = validate(response.body);
    expect(validate.errors ?? [], `${where}: ${JSON.stringify(response.body).slice(0, 300)}`).toEqual([]);
    expect(valid, where).toBe(true);
  }
  for (const header of Object.keys(answer.headers ?? {})) {
    expect(response.headers.get(header), `${where} header ${header}`).toMatch(/^\d+$/);
  }
  if (!observed.has(id)) observed.set(id, new Set());
  observed.get(id)!.add(response.status);
  return response;
}

/** A body larger than the test app's MAX_BODY_BYTES. */
const OVERSIZED = { payload: { text: 'x'.repeat(8192) } };
const unknownId = (): string => randomUUID();

describe('every answer is documented for its operation', () => {
  let ruleId: string;
  let tableRuleId: string;
  let validatorKeyId: string;

  it('API keys: create, list', async () => {
    const created = await call('createApiKey', '/api/v1/api-keys', 201, { body: { name: 'docs validator', role: 'validator' } });
    validatorKey = created.body.key;
    validatorKeyId = created.body.id;
    await call('listApiKeys', '/api/v1/api-keys', 200);
  });

  it('rules: create, list, read, edit, versions, test, publish', async () => {
    const rule = { context: 'docs', code: 'LIMIT', name: 'Amount limit', fieldPath: 'amount', expression: 'amount <= 10' };
    ruleId = (await call('createRule', '/api/v1/rules', 201, { body: rule })).body.id;
    await call('createRule', '/api/v1/rules', 409, { body: rule });
    await call('createRule', '/api/v1/rules', 400, { body: { ...rule, code: 'BROKEN', expression: 'new Date()' } });
    await call('listRules', '/api/v1/rules?context=docs', 200);
    await call('listRules', '/api/v1/rules?limit=0', 400);
    await call('getRule', `/api/v1/rules/${ruleId}`, 200);
    await call('getRule', `/api/v1/rules/${unknownId()}`, 404);
    await call('updateRule', `/api/v1/rules/${ruleId}`, 200, { body: { name: 'Amount limit', expression: 'amount <= 20', version: 1 } });
    await call('updateRule', `/api/v1/rules/${ruleId}`, 409, { body: { name: 'Amount limit', expression: 'amount <= 30', version: 1 } });
    await call('updateRule', `/api/v1/rules/${unknownId()}`, 404, { body: { name: 'Amount limit', required: true, version: 1 } });
    await call('listRuleVersions', `/api/v1/rules/${ruleId}/versions`, 200);
    await call('listRuleVersions', `/api/v1/rules/${unknownId()}/versions`, 404);
    await call('testRule', '/api/v1/rules/test', 200, { body: { rule: { code: 'T', name: 'T', expression: 'amount > 1' }, payload: { amount: 0 } } });
    await call('testRule', '/api/v1/rules/test', 404, { body: { context: 'no-such-context', payload: {} } });
    await call('publishRule', `/api/v1/rules/${ruleId}/publish`, 200);
    await call('publishRule', `/api/v1/rules/${ruleId}/publish`, 409);
    await call('publishRule', `/api/v1/rules/${unknownId()}/publish`, 404);
  });

  it('rules: a decision table as CSV', async () => {
    const table = { hitPolicy: 'first', inputs: [{ name: 'country', path: 'country' }], outputs: ['max'], rows: [{ when: ['"US"'], then: [5] }] };
    const rule = { context: 'docs-tables', code: 'TABLE', name: 'Table', fieldPath: 'amount', table, expression: '$value <= $row.max' };
    tableRuleId = (await call('createRule', '/api/v1/rules', 201, { body: rule })).body.id;
    const csv = (await call('getRuleTableCsv', `/api/v1/rules/${tableRuleId}/table.csv`, 200)).text;
    await call('getRuleTableCsv', `/api/v1/rules/${unknownId()}/table.csv`, 404);
    await call('putRuleTableCsv', `/api/v1/rules/${tableRuleId}/table.csv`, 200, { rawBody: `${csv}"""CA""",7\r\n`, contentType: 'text/csv' });
    await call('putRuleTableCsv', `/api/v1/rules/${tableRuleId}/table.csv?version=1`, 409, { rawBody: csv, contentType: 'text/csv' });
    await call('putRuleTableCsv', `/api/v1/rules/${unknownId()}/table.csv`, 404, { rawBody: csv, contentType: 'text/csv' });
  });

  it('rules: patch, restore', async () => {
    const rule = { context: 'docs-edits', code: 'EDITED', name: 'Edited', expression: 'amount <= 10' };
    const id = (await call('createRule', '/api/v1/rules', 201, { body: rule })).body.id;
    const patch = { contentType: 'application/merge-patch+json' };
    await call('patchRule', `/api/v1/rules/${id}`, 200, { ...patch, body: { priority: 5, version: 1 } });
    await call('patchRule', `/api/v1/rules/${id}`, 409, { ...patch, body: { priority: 6, version: 1 } });
    await call('patchRule', `/api/v1/rules/${id}`, 400, { ...patch, body: { expression: 'new Date()', version: 2 } });
    await call('patchRule', `/api/v1/rules/${unknownId()}`, 404, { ...patch, body: { priority: 6, version: 1 } });
    await call('restoreRule', `/api/v1/rules/${id}/restore`, 409);
    await call('archiveRule', `/api/v1/rules/${id}`, 204);
    await call('restoreRule', `/api/v1/rules/${id}/restore`, 200);
    await call('restoreRule', `/api/v1/rules/${unknownId()}/restore`, 404);
  });

  it('rule checks and payload schemas', async () => {
    await call('checkRule', '/api/v1/rules/check', 200, { body: { rule: { context: 'docs', code: 'C', name: 'C', expression: 'new Date()' } } });
    await call('setPayloadSchema', '/api/v1/contexts/docs/payload-schema', 200, { body: { type: 'object', properties: { amount: { type: 'number' } } } });
    await call('setPayloadSchema', '/api/v1/contexts/docs/payload-schema', 400, { body: { type: 'objet' } });
    await call('setPayloadSchema', '/api/v1/contexts/-impossible/payload-schema', 404, { body: { type: 'object' } });
    await call('getPayloadSchema', '/api/v1/contexts/docs/payload-schema', 200);
    await call('getPayloadSchema', '/api/v1/contexts/no-such-context/payload-schema', 404);
    await call('getRule', `/api/v1/rules/${ruleId}`, 200);
    await call('deletePayloadSchema', '/api/v1/contexts/docs/payload-schema', 204);
    await call('deletePayloadSchema', '/api/v1/contexts/docs/payload-schema', 404);
  });

  it('rules files: export, import', async () => {
    const file = { format: 'rules/v1', rules: [{ code: 'FILED', name: 'Filed', fieldPath: 'amount', expression: 'amount <= 10' }] };
    await call('importContext', '/api/v1/contexts/docs-file/import?publish=true', 200, { body: file });
    await call('importContext', '/api/v1/contexts/docs-file/import', 400, { body: { ...file, rules: [{ code: 'X', name: 'X', expression: 'new Date()' }] } });
    await call('importContext', '/api/v1/contexts/-impossible/import', 404, { body: file });
    const failing = { ...file, tests: [{ name: 'big', payload: { amount: 50 }, expect: { isValid: true } }] };
    await call('importContext', '/api/v1/contexts/docs-file/import?publish=true', 409, { body: { ...failing, rules: [{ ...file.rules[0], expression: 'amount <= 9' }] } });
    await call('exportContext', '/api/v1/contexts/docs-file/export', 200);
    await call('exportContext', '/api/v1/contexts/docs-file/export?from=yesterday', 400);
    await call('exportContext', '/api/v1/contexts/no-such-context/export', 404);
  });

  it('contexts: publish, roll back, list, recompile, generated validator', async () => {
    await call('publishContext', '/api/v1/contexts/docs/publish', 200);
    await call('publishContext', '/api/v1/contexts/no-such-context/publish', 404);
    await call('updateRule', `/api/v1/rules/${ruleId}`, 200, { body: { name: 'Amount limit', expression: 'amount <= 40', version: 2 } });
    const published = await call('publishContext', '/api/v1/contexts/docs/publish', 200);
    expect(published.body.rulesetVersion).toBe(2);
    await call('rollbackContext', '/api/v1/contexts/docs/rollback', 200, { body: { rulesetVersion: 1 } });
    await call('rollbackContext', '/api/v1/contexts/docs/rollback', 409, { body: { rulesetVersion: 3 } });
    await call('rollbackContext', '/api/v1/contexts/no-such-context/rollback', 404, { body: { rulesetVersion: 1 } });
    await call('listRulesetVersions', '/api/v1/contexts/docs/versions', 200);
    await call('listRulesetVersions', '/api/v1/contexts/docs/versions?limit=0', 400);
    await call('listRulesetVersions', '/api/v1/contexts/no-such-context/versions', 404);
    await call('getRulesetVersion', '/api/v1/contexts/docs/versions/1', 200);
    await call('getRulesetVersion', '/api/v1/contexts/docs/versions/99', 404);
    await call('diffRulesets', '/api/v1/contexts/docs/diff?from=1&to=live', 200);
    await call('diffRulesets', '/api/v1/contexts/docs/diff?from=draft', 400);
    await call('diffRulesets', '/api/v1/contexts/no-such-context/diff', 404);
    await call('listContexts', '/api/v1/contexts', 200);
    await call('recompileContext', '/api/v1/contexts/docs/recompile', 200);
    await call('recompileContext', '/api/v1/contexts/no-such-context/recompile', 404);
    const source = await call('getContextValidator', '/api/v1/contexts/docs/validator', 200);
    expect(source.headers.get('content-type')).toMatch(/^text\/javascript/);
    await call('getContextValidator', '/api/v1/contexts/docs/validator?format=module', 200);
    await call('getContextValidator', '/api/v1/contexts/docs/validator?format=wasm', 400);
    await call('getContextValidator', '/api/v1/contexts/no-such-context/validator', 404);
  });

  it('local evaluation: settings, module, change feed, samples, signing key, CORS origins', async () => {
    await call('getContextSettings', '/api/v1/contexts/docs/settings', 200);
    await call('getContextSettings', '/api/v1/contexts/no-such-context/settings', 404);
    await call('sendContextSamples', '/api/v1/contexts/docs/samples', 403, { body: bodyOf('sendContextSamples') });
    await call('followContextValidator', '/api/v1/contexts/docs/validator/events', 403);
    await call('setContextSettings', '/api/v1/contexts/docs/settings', 200, { body: { localValidation: true } });
    await call('setContextSettings', '/api/v1/contexts/docs/settings', 400, { body: { localValidation: 'yes' } });
    await call('setContextSettings', '/api/v1/contexts/no-such-context/settings', 404, { body: { localValidation: true } });
    await call('sendContextSamples', '/api/v1/contexts/docs/samples', 202, { body: bodyOf('sendContextSamples') });
    await call('sendContextSamples', '/api/v1/contexts/no-such-context/samples', 404, { body: bodyOf('sendContextSamples') });
    await call('followContextValidator', '/api/v1/contexts/no-such-context/validator/events', 404);
    // The feed is held open: its answer is checked from its head, then the stream is dropped.
    const feed = new AbortController();
    const held = await fetch(`${t.baseUrl}/api/v1/contexts/docs/validator/events`, {
      headers: { 'x-api-key': t.adminKey, 'x-tenant-id': t.tenantId }, signal: feed.signal,
    });
    expect(held.status).toBe(200);
    const documented = operations.get('followContextValidator')!.operation.responses['200'];
    expect(Object.keys(documented.content)).toContain((held.headers.get('content-type') ?? '').split(';')[0].trim());
    feed.abort();
    observed.get('followContextValidator')!.add(200);
    const module = await call('getContextValidator', '/api/v1/contexts/docs/validator?format=module', 200);
    await call('getContextValidator', '/api/v1/contexts/docs/validator?format=module', 304, { headers: { 'if-none-match': module.headers.get('etag')! } });
    await call('getSigningKey', '/api/v1/signing-key', 200);
    await call('setTenantCorsOrigins', '/api/v1/tenant/cors', 200, { body: { origins: ['https://shop.example'] } });
    await call('setTenantCorsOrigins', '/api/v1/tenant/cors', 400, { body: { origins: ['not an origin'] } });
    await call('setTenantCorsOrigins', '/api/v1/tenant/cors', 200, { body: { origins: [] } });
    await call('setContextSettings', '/api/v1/contexts/docs/settings', 200, { body: { localValidation: false } });
  });

  it('stored tests: replace, read, run; a publish they fail', async () => {
    const test = { name: 'big', payload: { amount: 500 }, expect: { isValid: true } };
    await call('replaceContextTests', '/api/v1/contexts/docs/tests', 200, { body: { tests: [test] } });
    await call('replaceContextTests', '/api/v1/contexts/-no-/tests', 404, { body: { tests: [] } });
    await call('getContextTests', '/api/v1/contexts/docs/tests', 200);
    await call('getContextTests', '/api/v1/contexts/-no-/tests', 404);
    await call('runContextTests', '/api/v1/contexts/docs/tests/run', 200, { body: { target: 'live' } });
    await call('runContextTests', '/api/v1/contexts/no-such-context/tests/run', 404, { body: {} });
    const { version } = (await t.request('GET', `/api/v1/rules/${ruleId}`)).body;
    await call('updateRule', `/api/v1/rules/${ruleId}`, 200, { body: { name: 'Amount limit', expression: 'amount <= 45', version } });
    await call('publishContext', '/api/v1/contexts/docs/publish', 409);
    await call('publishRule', `/api/v1/rules/${ruleId}/publish`, 409);
    await call('rollbackContext', '/api/v1/contexts/docs/rollback', 409, { body: { rulesetVersion: 1 } });
    await call('replaceContextTests', '/api/v1/contexts/docs/tests', 200, { body: { tests: [] } });
    await call('publishContext', '/api/v1/contexts/docs/publish?force=true', 200);
  });

  it('impact report and samples: report, read a sample', async () => {
    await t.storage.samples.insertMany([{
      tenantId: t.tenantId, context: 'docs', recordedAt: new Date(), rulesetVersion: 1, isValid: true, failures: [], payload: { amount: 5000 },
    }]);
    await call('reportImpact', '/api/v1/contexts/docs/impact', 200, { body: { target: 1 } });
    const [sample] = await t.storage.samples.newest(t.tenantId, 'docs', 1);
    await call('reportImpact', '/api/v1/contexts/docs/impact', 404, { body: { target: 99 } });
    await call('reportImpact', '/api/v1/contexts/no-such-context/impact', 404, { body: {} });
    await call('getSample', `/api/v1/contexts/docs/samples/${sample.id}`, 200);
    await call('getSample', `/api/v1/contexts/docs/samples/${randomUUID()}`, 404);
  });

  it('validation: single, batch, transaction', async () => {
    const key = validatorKey;
    await call('validateSingle', '/api/v1/validation/validate', 200, { key, body: { context: 'docs', payload: { amount: 50 } } });
    await call('validateSingle', '/api/v1/validation/validate', 404, { key, body: { context: 'no-such-context', payload: {} } });
    await call('validateBatch', '/api/v1/validation/validate-batch', 200, {
      key, body: { context: 'docs', items: [{ id: 'a', payload: { amount: 1 } }, { id: 'b', payload: { amount: 50 } }] },
    });
    await call('validateBatch', '/api/v1/validation/validate-batch', 404, { key, body: { context: 'no-such-context', items: [{ id: 'a', payload: {} }] } });
    await call('validateTransaction', '/api/v1/validation/validate-transaction', 200, {
      key, body: { transactionId: 'tx-1', contexts: ['docs'], payload: { amount: 50 } },
    });
    await call('validateTransaction', '/api/v1/validation/validate-transaction', 404, {
      key, body: { transactionId: 'tx-1', contexts: ['docs', 'no-such-context'], payload: {} },
    });
  });

  it('tenant settings: read, set the rate-limit budget and put it back, set sampling, delete samples', async () => {
    await call('getTenant', '/api/v1/tenant', 200);
    await call('setTenantRateLimit', '/api/v1/tenant/rate-limit', 200, { body: { max: 1000, windowMs: 60000 } });
    await call('setTenantRateLimit', '/api/v1/tenant/rate-limit', 200, { body: { default: true } });
    await call('setTenantSampling', '/api/v1/tenant/sampling', 200, { body: { rate: 0 } });
    await call('setTenantSampling', '/api/v1/tenant/sampling', 400, { body: { rate: 2 } });
    await call('deleteTenantSamples', '/api/v1/tenant/samples', 200);
  });

  it('audit trail: read', async () => {
    await call('listAudit', '/api/v1/audit?limit=5', 200);
    await call('listAudit', '/api/v1/audit?limit=0', 400);
  });

  it('every /api/v1 operation: 401 without a key; admin operations: 403 with a validator key', async () => {
    const paths = pathsByOperation(ruleId, validatorKeyId, tableRuleId);
    for (const [id, path] of Object.entries(paths)) {
      const sent = { body: bodyOf(id), contentType: mediaTypeOf(id) };
      await call(id, path, 401, { key: null, ...sent });
      // The signing key is public to every key of the tenant (docs/api.md); every other operation is refused to a validator key.
      if (!id.startsWith('validate') && id !== 'getSigningKey') await call(id, path, 403, { key: validatorKey, ...sent });
    }
  });

  it('operations with a body: 400 for a body of the wrong shape, 413 over the size limit, 415 for another content type', async () => {
    const paths = pathsByOperation(ruleId, validatorKeyId, tableRuleId);
    for (const [id, path] of Object.entries(paths)) {
      if (operations.get(id)!.operation.requestBody === undefined) continue;
      const key = id.startsWith('validate') ? validatorKey : undefined;
      const contentType = mediaTypeOf(id);
      await call(id, path, 400, { key, body: [], contentType });
      await call(id, path, 413, { key, body: OVERSIZED, contentType });
      await call(id, path, 415, { key, rawBody: JSON.stringify(bodyOf(id)), contentType: 'text/plain' });
    }
  });

  it('429 with Retry-After and RateLimit-* over the tenant\'s budget', async () => {
    await t.storage.tenants.setRateLimit(t.otherTenantId, { max: 1, windowMs: 60_000 });
    const options = { key: t.otherAdminKey, tenant: t.otherTenantId };
    await call('listRules', '/api/v1/rules', 200, options);
    const refused = await call('listRules', '/api/v1/rules', 429, options);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('archive and revoke, last of all', async () => {
    await call('archiveRule', `/api/v1/rules/${ruleId}`, 204);
    await call('archiveRule', `/api/v1/rules/${unknownId()}`, 404);
    await call('revokeApiKey', `/api/v1/api-keys/${validatorKeyId}`, 204);
    await call('revokeApiKey', `/api/v1/api-keys/${unknownId()}`, 404);
    const admin = (await call('listApiKeys', '/api/v1/api-keys', 200)).body.items.find((key: { role: string }) => key.role === 'admin');
    await call('revokeApiKey', `/api/v1/api-keys/${admin.id}`, 409);
  });

  it('health and metrics', async () => {
    await call('getLiveness', '/health/live', 200, { key: null, tenant: null });
    await call('getReadiness', '/health/ready', 200, { key: null, tenant: null });
    await call('getMetrics', '/metrics', 200, { key: null, tenant: null });
  });

  it('observed every operation\'s success, and the answers every operation of its kind gives', () => {
    const seen = (id: string): number[] => [...(observed.get(id) ?? [])];
    for (const [id, { path, operation }] of operations) {
      const success = Object.keys(operation.responses).map(Number).filter((status) => status < 300);
      expect(seen(id), `${id} success`).toEqual(expect.arrayContaining(success));
      if (!path.startsWith('/api/v1/')) continue;
      expect(seen(id), id).toContain(401);
      if (!id.startsWith('validate') && id !== 'getSigningKey') expect(seen(id), id).toContain(403);
      if (operation.requestBody !== undefined) expect(seen(id), id).toEqual(expect.arrayContaining([400, 413, 415]));
      if (path.includes('{') || id.startsWith('validate') || id === 'testRule') expect(seen(id), id).toContain(404);
    }
  });
});

/** A request path for each /api/v1 operation. */
function pathsByOperation(ruleId: string, keyId: string, tableRuleId: string): Record<string, string> {
  const paths: Record<string, string> = {};
  for (const [id, { path }] of operations) {
    if (!path.startsWith('/api/v1/')) continue;
    paths[id] = path.replace('{id}', id.endsWith('ApiKey') ? keyId : id.includes('TableCsv') ? tableRuleId : ruleId).replace('{context}', 'docs').replace('{n}', '1');
  }
  return paths;
}

/** The media type an operation takes its body as (application/json, or a merge patch); undefined without a body. */
function mediaTypeOf(id: string): string | undefined {
  const content = operations.get(id)!.operation.requestBody?.content as Record<string, unknown> | undefined;
  return content === undefined ? undefined : Object.keys(content)[0];
}

/** A body an operation would accept, for those that take one. */
function bodyOf(id: string): unknown {
  const mediaType = mediaTypeOf(id);
  return mediaType === undefined ? undefined : operations.get(id)!.operation.requestBody.content[mediaType].example;
}
