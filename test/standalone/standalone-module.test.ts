/**
 * The standalone module over HTTP (docs/api.md, `?format=module`): for a
 * context with every kind of rule, the module fetched from the service is
 * one ES module without imports, runs in Node (imported from a file) and in
 * a bare `vm` context (no require, no process), and answers every payload
 * byte for byte as the service's single validation does, less
 * executionTimeMs.
 *
 * No rule depends on the current time in a way that can change while the
 * test runs (the age() rule uses dates a century apart).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { parse } from 'acorn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

type Json = Record<string, any>;
type Validate = (payload: unknown) => unknown;

const CONTEXT = 'everything';

/** One rule of each kind the language and the schema layer have. */
const RULES: Json[] = [
  // Inferred expected value and a template with $value and $expected.
  { code: 'AMOUNT_MAX', name: 'Amount limit', fieldPath: 'loan.amount', required: true, expression: '$value <= 10000',
    message: 'Amount {{ $value }} exceeds {{ $expected }}', priority: 1 },
  // Inferred list, Warning severity, own errorCode.
  { code: 'CURRENCY', name: 'Currency', fieldPath: 'loan.currency', expression: '["EUR", "USD", "CHF"].includes($value)',
    severity: 'Warning', errorCode: 'E_CURRENCY' },
  // Callbacks, two levels.
  { code: 'ORDERS', name: 'Orders', expression: 'isArray(orders) && orders.every(o => o.lines.some(l => l.price > 0))',
    when: 'exists(orders)', message: '{{ len(orders) }} orders, {{ orders.filter(o => !o.lines.some(l => l.price > 0)).map(o => o.id) }} empty' },
  // forEach with a required per-element field and $index in the message.
  { code: 'ITEM_QTY', name: 'Item quantity', forEach: 'items', fieldPath: 'items[].qty', required: true,
    expression: 'isInteger($value) && $value > 0', message: 'Item {{ $index }}: qty {{ $value }} (sku {{ $item.sku }})' },
  // forEach with when on the element and a given expected value.
  { code: 'ITEM_SKU', name: 'Item SKU', forEach: 'items', when: 'isString($item.sku)',
    expression: 'matches($item.sku, "^[A-Z]{2}[0-9]{4}$")', expectedValue: 'AA0000' },
  // matches() on the DFA (not provably linear on native RegExp), and one past the DFA's bounds, on re2js.
  { code: 'SLUG', name: 'Slug', fieldPath: 'slug', expression: 'matches($value, "^(?:[a-z0-9]+-?)*[a-z0-9]$")' },
  { code: 'SLUG_AB', name: 'Slug a/b', fieldPath: 'slug', when: 'isString($value)', expression: '!matches($value, "(a|b)*a(a|b){12}")' },
  // Unicode: code points, a quoted key, Unicode property escapes.
  { code: 'FIRST_NAME', name: 'First name', fieldPath: '$["first-name"]',
    expression: 'len($value) >= 2 && len($value) <= 10 && matches($value, "^\\\\p{Lu}")' },
  // Functions: sum, round, lower, distinct, isEmail, dates.
  { code: 'TOTALS', name: 'Totals', expression: 'round(sum(items.map(i => i.qty)), 0) < 1000 && distinct(items.map(i => i.sku))',
    when: 'isArray(items)', priority: -1 },
  { code: 'CONTACT', name: 'Contact email', fieldPath: 'contact', expression: 'isEmail(lower(trim($value)))' },
  { code: 'PERIOD', name: 'Period', expression: 'daysBetween(date(start), date(end)) >= 0', when: 'exists(start) && exists(end)',
    message: '{{ daysBetween(date(start), date(end)) }} days' },
  { code: 'ADULT', name: 'Adult', fieldPath: 'dob', expression: 'age($value) >= 18' },
  // A schema with required, format, pattern (native and RE2), limits and enums.
  { code: 'APPLICANT', name: 'Applicant', fieldPath: 'applicant', priority: 2, schema: {
    type: 'object',
    required: ['email', 'zip'],
    properties: {
      email: { type: 'string', format: 'email', maxLength: 200 },
      zip: { type: 'string', pattern: '^[0-9]{5}$' },
      tag: { type: 'string', pattern: '^(a|a)*b$' },
      age: { type: 'integer', minimum: 18, maximum: 130 },
      kind: { enum: ['person', 'company'] },
      since: { type: 'string', format: 'date' },
    },
  } },
  // A schema rule on the whole payload with its own message.
  { code: 'ROOT_SHAPE', name: 'Root', schema: { type: 'object', properties: { loan: { type: 'object' } } },
    message: 'bad {{ $value }}' },
  // A disabled rule is never evaluated or counted.
  { code: 'OFF', name: 'Off', expression: 'false', enabled: false },
];

/** At least 20 payloads: passing, failing, missing fields, wrong types, Unicode. */
const PAYLOADS: Json[] = [
  {},
  { loan: { amount: 500, currency: 'EUR' } },
  { loan: { amount: 50_000, currency: 'GBP' } },
  { loan: { amount: '500' } },
  { loan: null },
  { loan: { amount: 10_000, currency: 'CHF' }, slug: 'good-slug-1', contact: ' Ann@Example.COM ' },
  { loan: { amount: 1 }, slug: 'bad--slug-', contact: 'not-an-email' },
  { loan: { amount: 1 }, slug: 42, contact: null },
  { loan: { amount: 1 }, items: [] },
  { loan: { amount: 1 }, items: [{ qty: 1, sku: 'AB1234' }, { qty: 2, sku: 'CD5678' }] },
  { loan: { amount: 1 }, items: [{ qty: 0, sku: 'ab1234' }, { sku: 'AB1234' }, { qty: 1.5 }, null, 'x'] },
  { loan: { amount: 1 }, items: 'not-an-array' },
  { loan: { amount: 1 }, items: [{ qty: 999, sku: 'AA0001' }, { qty: 999, sku: 'AA0001' }] },
  { loan: { amount: 1 }, orders: [{ id: 'o1', lines: [{ price: 1 }] }, { id: 'o2', lines: [{ price: 0 }] }] },
  { loan: { amount: 1 }, orders: [{ id: 'o1', lines: 'none' }], start: '2024-01-31', end: '2024-01-01' },
  { loan: { amount: 1 }, start: '2024-01-01T10:00:00Z', end: '2024-03-01', dob: '1950-06-15' },
  { loan: { amount: 1 }, dob: '2100-01-01', start: 'yesterday', end: '2024-01-01' },
  { loan: { amount: 1 }, 'first-name': 'Émile' },
  { loan: { amount: 1 }, 'first-name': '😀😀' },
  { loan: { amount: 1 }, 'first-name': 'élodie-with-a-long-name' },
  { loan: { amount: 1 }, slug: 'babababababababa', applicant: { email: 'a@b.co', zip: '12345', tag: '\u{1F600}aab' } },
  { loan: { amount: 1 }, slug: 'ab\ud800-\u{1F600}', applicant: { email: 'a@b.co', zip: '1234\udc00', tag: 'ab\ud800' } },
  { loan: { amount: 1 }, applicant: { email: 'a@b.co', zip: '12345', tag: 'aab', age: 40, kind: 'person', since: '2020-02-29' } },
  { loan: { amount: 1 }, applicant: { email: 'a@', zip: '1234', tag: 'c', age: 12.5, kind: 'robot', since: '2021-02-29' } },
  { loan: { amount: 1 }, applicant: { zip: 12345 } },
  { loan: { amount: 1 }, applicant: 'nobody' },
  { loan: { amount: 1, currency: 'EUR' }, applicant: { email: 'ü@example.com', zip: '０１２３４' }, 'first-name': 'Ωmega' },
  { loan: [1, 2, 3], items: [{ qty: 1, sku: 'AB1234', extra: { deep: [null, { x: '\u2028' }] } }] },
];

let t: TestApp;
let code: string;
let dir: string;

function api(method: string, path: string, options: Json = {}): ReturnType<TestApp['request']> {
  return t.request(method, `/api/v1${path}`, options);
}

/** The service's single result less executionTimeMs, as JSON text. */
async function serviceResult(payload: unknown): Promise<string> {
  const response = await api('POST', '/validation/validate', { body: { context: CONTEXT, payload } });
  expect(response.status, response.text).toBe(200);
  const { executionTimeMs, ...rest } = response.body as Json;
  expect(typeof executionTimeMs).toBe('number');
  return JSON.stringify(rest);
}

/** The module as a classic script for `vm`: its only export statement becomes the script's value. */
function asScript(moduleText: string): string {
  const program = parse(moduleText, { ecmaVersion: 'latest', sourceType: 'module' });
  const exports = program.body.filter((node) => node.type.startsWith('Export'));
  expect(exports).toHaveLength(1);
  const [statement] = exports;
  return `${moduleText.slice(0, statement.start)}${moduleText.slice(statement.end)}\nvalidate;`;
}

/** Every node of an acorn tree, depth first. */
function* nodes(root: unknown): Generator<{ type: string } & Json> {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) stack.push(...value);
    else if (value !== null && typeof value === 'object' && typeof (value as Json).type === 'string') {
      yield value as { type: string } & Json;
      for (const child of Object.values(value)) if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
}

function nodeTypes(root: unknown): Set<string> {
  return new Set([...nodes(root)].map((node) => node.type));
}

/** Names called as plain identifiers, `require(...)` for instance. */
function freeCalls(root: unknown): Set<string> {
  const names = new Set<string>();
  for (const node of nodes(root)) {
    if (node.type === 'CallExpression' && node.callee.type === 'Identifier') names.add(node.callee.name as string);
  }
  return names;
}

beforeAll(async () => {
  t = await startTestApp();
  for (const rule of RULES) {
    const created = await api('POST', '/rules', { body: { context: CONTEXT, ...rule } });
    expect(created.status, created.text).toBe(201);
  }
  const published = await api('POST', `/contexts/${CONTEXT}/publish`);
  expect(published.status, published.text).toBe(200);
  const response = await api('GET', `/contexts/${CONTEXT}/validator?format=module`);
  expect(response.status, response.text).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
  code = response.text;
  dir = await mkdtemp(join(tmpdir(), 'rules-standalone-'));
});

afterAll(async () => {
  await t?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the module text', () => {
  it('is one ES module with no imports and the single export validate', () => {
    const program = parse(code, { ecmaVersion: 'latest', sourceType: 'module' });
    const kinds = nodeTypes(program);
    expect(kinds).not.toContain('ImportDeclaration');
    expect(kinds).not.toContain('ImportExpression');
    const exports = program.body.filter((node) => node.type.startsWith('Export'));
    expect(exports).toHaveLength(1);
    const [named] = exports;
    expect(named.type).toBe('ExportNamedDeclaration');
    expect(code.slice(named.start, named.end).replace(/\s+/g, ' ')).toBe('export { validate };');
  });

  it('names the tenant, context and ruleset version in its header, and no Node built-in', () => {
    expect(code.split('\n')[0]).toContain(`tenant ${t.tenantId}, context ${CONTEXT}, ruleset version 1`);
    expect(freeCalls(parse(code, { ecmaVersion: 'latest', sourceType: 'module' }))).not.toContain('require');
    expect(code).not.toMatch(/\bprocess\.(env|versions|platform|nextTick)\b|["']node:/);
  });
});

describe('the module gives the service\'s answers', () => {
  it(`in Node, imported from a file, for ${PAYLOADS.length} payloads`, async () => {
    const file = join(dir, 'validator.mjs');
    await writeFile(file, code);
    const { validate } = (await import(pathToFileURL(file).href)) as { validate: Validate };
    let failing = 0;
    for (const payload of PAYLOADS) {
      const fromModule = JSON.stringify(validate(payload));
      expect(fromModule, JSON.stringify(payload)).toBe(await serviceResult(payload));
      if (!(JSON.parse(fromModule) as Json).isValid) failing++;
    }
    // The set exercises both outcomes, not only one.
    expect(failing).toBeGreaterThan(5);
    expect(failing).toBeLessThan(PAYLOADS.length);
  });

  it('in a bare vm context, with no require, process or module loader', async () => {
    const context = vm.createContext({});
    expect(vm.runInContext('typeof require + typeof process + typeof globalThis.process', context)).toBe('undefinedundefinedundefined');
    const validate = vm.runInContext(asScript(code), context) as Validate;
    for (const payload of PAYLOADS) {
      // The payload is copied into the context's realm, as a browser would parse it.
      const inRealm = vm.runInContext(`JSON.parse(${JSON.stringify(JSON.stringify(payload))})`, context) as unknown;
      expect(JSON.stringify(validate(inRealm)), JSON.stringify(payload)).toBe(await serviceResult(payload));
    }
  });
});

describe('GET /contexts/{context}/validator?format=module', () => {
  it('serves the same text again for the same ruleset version, and a new module after a publish', async () => {
    const again = await api('GET', `/contexts/${CONTEXT}/validator?format=module`);
    expect(again.text).toBe(code);

    const created = await api('POST', '/rules', {
      body: { context: CONTEXT, code: 'NEW_RULE', name: 'New', fieldPath: 'extra', expression: '$value == 1' },
    });
    expect(created.status).toBe(201);
    expect((await api('POST', `/contexts/${CONTEXT}/publish`)).status).toBe(200);
    const next = await api('GET', `/contexts/${CONTEXT}/validator?format=module`);
    expect(next.text).not.toBe(code);
    expect(next.text.split('\n')[0]).toContain('ruleset version 2');
    const file = join(dir, 'validator-v2.mjs');
    await writeFile(file, next.text);
    const { validate } = (await import(pathToFileURL(file).href)) as { validate: Validate };
    const payload = { loan: { amount: 1 }, extra: 2 };
    expect(JSON.stringify(validate(payload))).toBe(await serviceResult(payload));
  });

  it('is 404 for an unknown context and for another tenant\'s context, 403 for a validator key', async () => {
    const unknown = await api('GET', '/contexts/nothing-here/validator?format=module');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('CONTEXT_NOT_FOUND');
    const other = await api('GET', `/contexts/${CONTEXT}/validator?format=module`, { key: t.otherAdminKey, tenant: t.otherTenantId });
    expect(other.status).toBe(404);
    const key = await api('POST', '/api-keys', { body: { name: 'validator', role: 'validator' } });
    expect(key.status).toBe(201);
    const forbidden = await api('GET', `/contexts/${CONTEXT}/validator?format=module`, { key: key.body.key });
    expect(forbidden.status).toBe(403);
  });
});
