/**
 * A client generated from the OpenAPI document works: the committed
 * TypeScript types (src/openapi/generated/api-types.ts) equal a fresh generation from
 * the live document, the client example type-checks against freshly
 * generated types, and the example creates a rule, publishes its context
 * and validates a payload against a live server. A change of the document
 * that the committed types or the example do not follow fails here: run
 * `npm run openapi:types` and adapt the example.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { API_TYPES_FILE, CLIENT_API_TYPES_FILE, generateApiTypes } from './api-types.ts';
import { ApiError, capAmount, RulesClient } from './client-example.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE_FILE = fileURLToPath(new URL('./client-example.ts', import.meta.url));

let t: TestApp;
let freshTypes: string;

beforeAll(async () => {
  t = await startTestApp();
  freshTypes = await generateApiTypes(await (await fetch(`${t.baseUrl}/docs/json`)).json());
});
afterAll(async () => {
  await t?.close();
});

/** The type errors of the client example compiled with `types` as its src/openapi/generated/api-types.ts (the same layout as here). */
function exampleTypeErrors(types: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'rules-client-'));
  try {
    mkdirSync(join(dir, 'src', 'openapi', 'generated'), { recursive: true });
    mkdirSync(join(dir, 'test', 'openapi'), { recursive: true });
    // ES modules, as in the project (module: NodeNext reads this).
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(dir, 'src', 'openapi', 'generated', 'api-types.ts'), types);
    copyFileSync(EXAMPLE_FILE, join(dir, 'test', 'openapi', 'client-example.ts'));
    const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (file) => ts.sys.readFile(file));
    const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
    const program = ts.createProgram([join(dir, 'test', 'openapi', 'client-example.ts')], { ...options, typeRoots: [join(ROOT, 'node_modules', '@types')] });
    return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a client generated from the document', () => {
  it('is built on committed types equal to a fresh generation (run `npm run openapi:types` when this fails)', () => {
    expect(readFileSync(API_TYPES_FILE, 'utf8')).toBe(freshTypes);
  });

  it('gives the typed client package (clients/typescript) the same current types (run `npm run openapi:types` when this fails)', () => {
    expect(readFileSync(CLIENT_API_TYPES_FILE, 'utf8')).toBe(freshTypes);
  });

  it('type-checks the client example against freshly generated types', () => {
    expect(exampleTypeErrors(freshTypes)).toEqual([]);
  });

  it('would not type-check the example against a document without an operation it uses', () => {
    const withoutPublish = freshTypes.replace('publishContext: {', 'publishContextRenamed: {');
    expect(withoutPublish).not.toBe(freshTypes);
    expect(exampleTypeErrors(withoutPublish).join('\n')).toContain('publishContext');
  });

  it('creates a rule, publishes its context and validates a payload against a live server', async () => {
    const client = new RulesClient(t.baseUrl, t.tenantId, t.adminKey);
    const outcome = await capAmount(client, 'client-example', 60000);
    expect(outcome).toEqual({
      ruleId: expect.any(String),
      ruleStatus: 'draft',
      ruleVersion: 1,
      publishedIds: [outcome.ruleId],
      rulesetVersion: 1,
      isValid: false,
      failures: [{ ruleCode: 'AMOUNT_LIMIT', message: 'Amount 60000 exceeds 50000', fieldPath: 'amount', actualValue: 60000, expectedValue: 50000 }],
    });
    const valid = await client.validate({ context: 'client-example', payload: { amount: 100 } });
    expect(valid).toMatchObject({ isValid: true, totalRulesEvaluated: 1, failures: [] });
  });

  it('reports an answer other than the success status with its problem', async () => {
    const client = new RulesClient(t.baseUrl, t.tenantId, 'rk_not_a_key');
    const error = await client.validate({ context: 'client-example', payload: {} }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, problem: { code: 'UNAUTHORIZED', status: 401 } });
  });
});
