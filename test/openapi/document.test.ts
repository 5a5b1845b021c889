/**
 * The OpenAPI document is a valid OpenAPI 3.1 document (checked with a
 * validator of the specification's own JSON Schemas) that a client can be
 * generated from: every operation has a stable camelCase operationId, a
 * summary, a description and one of the declared tags; response bodies
 * are named components referred to with $ref; every field says what it
 * is; every request body has an example; headers are plain schemas.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

let t: TestApp;
let document: any;
/** Every operation of the document, with where it is. */
let operations: Array<{ method: string; path: string; operation: any }>;

beforeAll(async () => {
  t = await startTestApp();
  const response = await fetch(`${t.baseUrl}/docs/json`);
  expect(response.status).toBe(200);
  document = await response.json();
  operations = Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => METHODS.includes(method)).map(([method, operation]) => ({ method, path, operation })));
});
afterAll(async () => {
  await t?.close();
});

/** Every schema object inside `schema` (itself included), with where it is. */
function* schemasIn(schema: any, at: string): Generator<{ schema: any; at: string }> {
  if (typeof schema !== 'object' || schema === null) return;
  yield { schema, at };
  for (const [name, property] of Object.entries<any>(schema.properties ?? {})) yield* schemasIn(property, `${at}.${name}`);
  if (schema.items !== undefined) yield* schemasIn(schema.items, `${at}[]`);
}

describe('the OpenAPI document', () => {
  it('validates against the OpenAPI 3.1 schema', async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('gives every operation a unique camelCase operationId, a summary, a description and a declared tag', () => {
    const declaredTags = document.tags.map((tag: { name: string }) => tag.name);
    expect(declaredTags).toEqual(['Validation', 'Rules', 'Contexts', 'Local evaluation', 'API keys', 'Tenant', 'Health', 'Metrics']);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { method, path, operation } of operations) {
      const where = `${method} ${path}`;
      expect(operation.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
      expect(operation.summary, where).toEqual(expect.any(String));
      expect(operation.description?.length, where).toBeGreaterThan(20);
      expect(operation.tags, where).toHaveLength(1);
      expect(declaredTags, where).toContain(operation.tags[0]);
    }
    expect(ids).toEqual(expect.arrayContaining([
      'validateSingle', 'validateBatch', 'validateTransaction', 'createRule', 'listRules', 'getRule', 'updateRule',
      'archiveRule', 'publishRule', 'listRuleVersions', 'testRule', 'publishContext', 'rollbackContext', 'listContexts',
      'recompileContext', 'getContextValidator', 'createApiKey', 'listApiKeys', 'revokeApiKey', 'getLiveness',
      'getReadiness', 'getMetrics',
    ]));
  });

  it('names the shared schemas as components and refers to them', () => {
    const names = Object.keys(document.components.schemas);
    expect(names).toEqual(expect.arrayContaining([
      'Rule', 'Problem', 'FieldError', 'FailureRecord', 'ShortFailureRecord', 'SingleResult', 'BatchResult',
      'BatchItemResult', 'TransactionResult', 'ContextResult', 'ApiKey', 'CreatedApiKey', 'PublishResult',
    ]));
    expect(names.filter((name) => name.startsWith('def-'))).toEqual([]);
    const single = document.paths['/api/v1/validation/validate'].post.responses['200'].content['application/json'].schema;
    expect(single).toEqual({ $ref: '#/components/schemas/SingleResult' });
    expect(document.components.schemas.SingleResult.properties.failures.items).toEqual({ $ref: '#/components/schemas/FailureRecord' });
    expect(document.components.schemas.BatchItemResult.properties.failures.items).toEqual({ $ref: '#/components/schemas/ShortFailureRecord' });
    expect(document.components.schemas.Problem.properties.errors.items).toEqual({ $ref: '#/components/schemas/FieldError' });
    // The keys a rule always has are required, the optional content fields are not.
    expect(document.components.schemas.Rule.required).toEqual(expect.arrayContaining(['id', 'context', 'code', 'name', 'status', 'version']));
    expect(document.components.schemas.Rule.required).not.toContain('expression');
  });

  it('documents every error as a Problem, and every status with its own description', () => {
    for (const { method, path, operation } of operations) {
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        const where = `${method} ${path} ${status}`;
        expect(response.description, where).not.toBe('Default Response');
        if (Number(status) >= 400) {
          expect(response.content, where).toEqual({ 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } });
        }
      }
    }
  });

  it('has headers as plain schemas: Retry-After on 429 and 503, RateLimit-* on 429', () => {
    for (const { method, path, operation } of operations) {
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        for (const [name, header] of Object.entries<any>(response.headers ?? {})) {
          expect(header, `${method} ${path} ${status} ${name}`).toEqual({ schema: { type: 'integer' }, description: expect.any(String) });
        }
      }
      if (operation.responses['429'] !== undefined) {
        expect(Object.keys(operation.responses['429'].headers)).toEqual(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
      }
      if (operation.responses['503'] !== undefined) expect(Object.keys(operation.responses['503'].headers)).toEqual(['Retry-After']);
    }
  });

  it('serves the generated validator as text/javascript', () => {
    const ok = document.paths['/api/v1/contexts/{context}/validator'].get.responses['200'];
    expect(ok.content).toEqual({ 'text/javascript': { schema: { type: 'string', description: expect.any(String) } } });
  });

  it('describes every field of every component, request body and parameter, and gives every request body an example', () => {
    const undescribed: string[] = [];
    const check = (schema: any, at: string): void => {
      for (const found of schemasIn(schema, at)) {
        if (found.schema.$ref === undefined && found.at !== at && found.schema.description === undefined && !found.at.endsWith('[]')) {
          undescribed.push(found.at);
        }
      }
    };
    for (const [name, schema] of Object.entries<any>(document.components.schemas)) {
      expect(schema.description, name).toEqual(expect.any(String));
      check(schema, name);
    }
    for (const { method, path, operation } of operations) {
      const where = `${method} ${path}`;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.description === undefined) undescribed.push(`${where} ${parameter.in} ${parameter.name}`);
      }
      const body = operation.requestBody?.content['application/json'];
      if (body !== undefined) {
        expect(body.example, where).toEqual(expect.any(Object));
        check(body.schema, `${where} body`);
      }
    }
    expect(undescribed).toEqual([]);
  });
});
