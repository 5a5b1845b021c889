/**
 * Schema rules (docs/rule-language.md): the failures a user reads for each kind of
 * violation, the save-time schema policy, own-property semantics, and the
 * one shared Ajv instance staying small however many schemas it compiles.
 */
import standaloneModule from 'ajv/dist/standalone/index.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../compiler/limits.ts';
import {
  compileSchema,
  createStandaloneAjv,
  MAX_SCHEMA_APPLICATIONS,
  MAX_SCHEMA_FAILURES,
  schemaApplications,
  schemaFailures,
  type SchemaFailure,
  type SchemaValidator,
} from '../../compiler/schema/index.ts';
import { sharedAjvCacheSizes } from '../../compiler/schema/shared-ajv.ts';
import { fanOutSchema } from '../support/fan-out-schema.ts';

// CommonJS module: under NodeNext its default import is `module.exports`, the function.
const standaloneCode = standaloneModule as unknown as typeof standaloneModule.default;

function compile(schema: unknown): SchemaValidator {
  const result = compileSchema(schema, DEFAULT_LIMITS);
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  return result.validate;
}

/** Failures of `value` at `basePath`, as a rule would report them. */
function failuresOf(schema: unknown, basePath: string, value: unknown): SchemaFailure[] {
  const validate = compile(schema);
  if (validate(value)) return [];
  return schemaFailures(validate.errors ?? [], basePath, value);
}

const fail = (fieldPath: string, actualValue: unknown, expectedValue: unknown, message: string): SchemaFailure => ({
  fieldPath,
  actualValue,
  expectedValue,
  message,
});

describe('failures', () => {
  const person = {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 2 },
      email: { type: 'string', format: 'email' },
      age: { type: 'integer', minimum: 18, maximum: 130 },
    },
    required: ['name', 'email'],
  };

  it.each<[string, unknown, string, unknown, SchemaFailure[]]>([
    ['type', { type: 'integer' }, 'age', 'x', [fail('age', 'x', 'integer', 'must be integer')]],
    ['union type', { type: ['string', 'null'] }, 'nick', 3, [fail('nick', 3, ['string', 'null'], 'must be string,null')]],
    ['required', person, 'applicant', { name: 'Al' }, [
      fail('applicant.email', null, null, "must have required property 'email'"),
    ]],
    ['required at the root', person, '', { email: 'a@b.co' }, [fail('name', null, null, "must have required property 'name'")]],
    ['minimum', { type: 'number', minimum: 18 }, 'age', 15, [fail('age', 15, 18, 'must be >= 18')]],
    ['maximum', { type: 'number', maximum: 10000 }, 'loan.amount', 10001, [
      fail('loan.amount', 10001, 10000, 'must be <= 10000'),
    ]],
    ['exclusiveMinimum', { type: 'number', exclusiveMinimum: 0 }, 'price', 0, [fail('price', 0, 0, 'must be > 0')]],
    ['exclusiveMaximum', { type: 'number', exclusiveMaximum: 1 }, 'ratio', 1, [fail('ratio', 1, 1, 'must be < 1')]],
    ['multipleOf', { type: 'number', multipleOf: 5 }, 'qty', 7, [fail('qty', 7, 5, 'must be multiple of 5')]],
    ['minLength counts code points', { type: 'string', minLength: 3 }, 'code', '😀😀', [
      fail('code', '😀😀', 3, 'must NOT have fewer than 3 characters'),
    ]],
    ['maxLength counts code points', { type: 'string', maxLength: 2 }, 'code', '😀😀', []],
    ['enum', { enum: ['EUR', 'USD'] }, 'currency', 'GBP', [
      fail('currency', 'GBP', ['EUR', 'USD'], 'must be equal to one of the allowed values'),
    ]],
    ['const', { const: 'v1' }, 'version', 'v2', [fail('version', 'v2', 'v1', 'must be equal to constant')]],
    ['pattern', { type: 'string', pattern: '^[A-Z]{2}\\d{6}$' }, 'passport', 'X123', [
      fail('passport', 'X123', '^[A-Z]{2}\\d{6}$', 'must match pattern "^[A-Z]{2}\\d{6}$"'),
    ]],
    ['pattern on RE2', { type: 'string', pattern: '^(a|a)*$' }, 's', 'aab', [
      fail('s', 'aab', '^(a|a)*$', 'must match pattern "^(a|a)*$"'),
    ]],
    ['format email', { type: 'string', format: 'email' }, 'email', 'nope', [
      fail('email', 'nope', 'email', 'must match format "email"'),
    ]],
    ['format date', { type: 'string', format: 'date' }, 'dob', '2023-02-30', [
      fail('dob', '2023-02-30', 'date', 'must match format "date"'),
    ]],
    ['format date-time', { type: 'string', format: 'date-time' }, 'at', '2024-01-01 10:00', [
      fail('at', '2024-01-01 10:00', 'date-time', 'must match format "date-time"'),
    ]],
    ['format uuid', { type: 'string', format: 'uuid' }, 'id', '123', [fail('id', '123', 'uuid', 'must match format "uuid"')]],
    ['format uri', { type: 'string', format: 'uri' }, 'site', 'example.com', [
      fail('site', 'example.com', 'uri', 'must match format "uri"'),
    ]],
    ['nested objects and arrays', {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', properties: { qty: { type: 'integer', minimum: 1 } }, required: ['sku'] },
        },
      },
    }, '', { items: [{ sku: 'a', qty: 1 }, { qty: 0 }] }, [
      fail('items[1].sku', null, null, "must have required property 'sku'"),
      fail('items[1].qty', 0, 1, 'must be >= 1'),
    ]],
    ['array at the rule path', { type: 'array', items: { type: 'number' } }, 'scores', [1, 'x'], [
      fail('scores[1]', 'x', 'number', 'must be number'),
    ]],
    ['element-resolved base path', { type: 'number', minimum: 1 }, 'items[3].qty', 0, [fail('items[3].qty', 0, 1, 'must be >= 1')]],
    ['additionalProperties', {
      type: 'object', properties: { a: { type: 'number' } }, additionalProperties: false,
    }, 'opts', { a: 1, b: 2 }, [fail('opts', { a: 1, b: 2 }, null, 'must NOT have additional properties')]],
    ['keys that need quotes', {
      type: 'object',
      properties: {
        'first-name': { type: 'string' },
        'a/b~c': { type: 'string' },
        '0': { type: 'string' },
        'with "quote"': { type: 'string' },
      },
    }, '', { 'first-name': 1, 'a/b~c': 2, '0': 3, 'with "quote"': 4 }, [
      // Integer-like keys come first in JavaScript's property order.
      fail('$["0"]', 3, 'string', 'must be string'),
      fail('$["first-name"]', 1, 'string', 'must be string'),
      fail('$["a/b~c"]', 2, 'string', 'must be string'),
      fail('$["with \\"quote\\""]', 4, 'string', 'must be string'),
    ]],
    ['keys that need quotes below a path', {
      type: 'object', properties: { 'first-name': { type: 'string', minLength: 1 } }, required: ['last-name'],
    }, 'customer', { 'first-name': '' }, [
      fail('customer["last-name"]', null, null, "must have required property 'last-name'"),
      fail('customer["first-name"]', '', 1, 'must NOT have fewer than 1 characters'),
    ]],
    ['every violation, in Ajv order', person, 'p', { name: 'A', email: 'x', age: 12.5 }, [
      fail('p.name', 'A', 2, 'must NOT have fewer than 2 characters'),
      fail('p.email', 'x', 'email', 'must match format "email"'),
      fail('p.age', 12.5, 'integer', 'must be integer'),
      fail('p.age', 12.5, 18, 'must be >= 18'),
    ]],
    ['dependentRequired', {
      type: 'object', dependentRequired: { card: ['cvv'] },
    }, 'pay', { card: '4111' }, [fail('pay.cvv', null, null, 'must have property cvv when property card is present')]],
    ['false schema', false, 'x', 1, [fail('x', 1, null, 'boolean schema is false')]],
    ['true schema', true, 'x', 1, []],
  ])('%s', (_name, schema, basePath, value, expected) => {
    expect(failuresOf(schema, basePath, value)).toEqual(expected);
  });

  it('passes valid values, formats included', () => {
    const validate = compile({
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        dob: { type: 'string', format: 'date' },
        at: { type: 'string', format: 'date-time' },
        id: { type: 'string', format: 'uuid' },
        site: { type: 'string', format: 'uri' },
      },
    });
    expect(validate({
      email: 'ann@example.org',
      dob: '1990-02-28',
      at: '2024-01-01T10:00:00Z',
      id: '123e4567-e89b-12d3-a456-426614174000',
      site: 'https://example.com/a?b=c',
    })).toBe(true);
  });

  it('reads whatever errors it is given without throwing', () => {
    expect(schemaFailures([null, { instancePath: 5 }, { instancePath: '/a/b', params: null }], 'x', { a: 1 })).toEqual([
      fail('x', { a: 1 }, null, 'is invalid'),
      fail('x', { a: 1 }, null, 'is invalid'),
      fail('x.a.b', null, null, 'is invalid'),
    ]);
  });
});

describe('own properties only', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['required toString fails on {}', { type: 'object', required: ['toString'] }, {}, false],
    ['required toString passes when present', { type: 'object', required: ['toString'] }, { toString: 1 }, true],
    ['required hasOwnProperty fails on {}', { type: 'object', required: ['hasOwnProperty', 'valueOf'] }, {}, false],
    ['properties constructor does not apply to {}', {
      type: 'object', properties: { constructor: { type: 'number' } },
    }, {}, true],
    ['properties constructor applies to an own key', {
      type: 'object', properties: { constructor: { type: 'number' } },
    }, { constructor: 'x' }, false],
    ['dependentRequired on an inherited name does not trigger', {
      type: 'object', dependentRequired: { toString: ['a'] },
    }, {}, true],
    ['dependentRequired needs an own dependency', {
      type: 'object', dependentRequired: { a: ['valueOf'] },
    }, { a: 1 }, false],
    ['long required lists (Ajv loops over them) stay own-property', {
      type: 'object',
      required: ['toString', ...Array.from({ length: 250 }, (_, i) => `p${i}`)],
    }, Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`p${i}`, i])), false],
  ])('%s', (_name, schema, value, valid) => {
    expect(compile(schema)(value)).toBe(valid);
  });

  it('reports the inherited name as missing', () => {
    expect(failuresOf({ type: 'object', required: ['toString'] }, 'o', {})).toEqual([
      fail('o.toString', null, null, "must have required property 'toString'"),
    ]);
  });
});

describe('schema policy', () => {
  const deep = (levels: number): unknown => {
    let schema: unknown = { type: 'string' };
    for (let i = 1; i < levels; i++) schema = { type: 'array', items: schema };
    return schema;
  };
  const veryDeep = (): unknown => {
    let value: unknown = [];
    for (let i = 0; i < 100_000; i++) value = [value];
    return { const: value };
  };

  it.each<[string, unknown, string, string]>([
    ['$id', { $id: 'https://evil.example/s', type: 'string' }, 'INVALID_SCHEMA', '"$id" is not allowed (at #)'],
    ['nested $id', { type: 'object', properties: { a: { $id: 'x' } } }, 'INVALID_SCHEMA', '"$id" is not allowed (at #/properties/a)'],
    ['$data keyword', { $data: '1/a' }, 'INVALID_SCHEMA', '"$data" is not allowed'],
    ['$data reference', { type: 'number', maximum: { $data: '1/limit' } }, 'INVALID_SCHEMA',
      '"$data" references are not allowed (at #/maximum)'],
    ['remote $ref', { $ref: 'https://evil.example/s.json' }, 'INVALID_SCHEMA',
      'only local references starting with "#" are allowed: $ref "https://evil.example/s.json" (at #)'],
    ['relative $ref', { type: 'object', properties: { a: { $ref: 'other.json#/a' } } }, 'INVALID_SCHEMA',
      'only local references starting with "#" are allowed'],
    ['remote $dynamicRef', { $dynamicRef: 'https://evil.example/s#node' }, 'INVALID_SCHEMA',
      'only local references starting with "#" are allowed: $dynamicRef'],
    ['unresolvable local $ref', { $ref: '#/$defs/missing' }, 'INVALID_SCHEMA', "can't resolve reference #/$defs/missing"],
    ['$schema of another draft', { $schema: 'http://json-schema.org/draft-07/schema#' }, 'INVALID_SCHEMA',
      '"$schema" must be "https://json-schema.org/draft/2020-12/schema" or absent'],
    ['nested $schema', { type: 'object', properties: { a: { $schema: 'https://json-schema.org/draft/2020-12/schema' } } },
      'INVALID_SCHEMA', '"$schema" is only allowed at the root of the schema (at #/properties/a)'],
    ['uniqueItems without maxItems', { type: 'array', uniqueItems: true }, 'INVALID_SCHEMA',
      '"uniqueItems" needs "maxItems" of at most 1000 beside it (at #)'],
    ['uniqueItems with a large maxItems', { type: 'array', uniqueItems: true, maxItems: 1001 }, 'INVALID_SCHEMA',
      '"uniqueItems" needs "maxItems" of at most 1000'],
    ['unsafe pattern', { type: 'string', pattern: '(a)\\1' }, 'UNSAFE_PATTERN',
      'pattern "(a)\\\\1" (at #/pattern): backreferences and lookaround are not supported'],
    ['unsafe patternProperties', { type: 'object', patternProperties: { '^(?=x)': { type: 'number' } } }, 'UNSAFE_PATTERN',
      'pattern "^(?=x)" (at #/patternProperties): backreferences and lookaround are not supported'],
    ['nested unsafe pattern', { type: 'array', items: { type: 'string', pattern: 'a(?<=b)' } }, 'UNSAFE_PATTERN',
      '(at #/items/pattern)'],
    ['invalid pattern', { type: 'string', pattern: '(' }, 'INVALID_SCHEMA',
      'pattern "(" (at #/pattern): invalid regular expression at offset 1: Unterminated group'],
    ['pattern too long', { type: 'string', pattern: 'a'.repeat(513) }, 'TOO_LONG',
      'the pattern is 513 characters long; the limit is 512'],
    ['__proto__ key', JSON.parse('{"type":"object","properties":{"__proto__":{"type":"number"}}}'), 'INVALID_SCHEMA',
      '"__proto__" is not allowed as a key (at #/properties)'],
    ['__proto__ required', { type: 'object', required: ['__proto__'] }, 'INVALID_SCHEMA',
      '"__proto__" is not allowed as a property name (at #)'],
    ['too large', { type: 'object', properties: Object.fromEntries(
      Array.from({ length: 3000 }, (_, i) => [`property${i}`, { type: 'string' }]),
    ) }, 'TOO_LONG', 'bytes of JSON; the limit is 65536'],
    ['33 levels', deep(33), 'TOO_DEEP', 'the schema is nested deeper than 32 levels'],
    ['100,000 levels, no stack overflow', veryDeep(), 'TOO_DEEP', 'the schema is nested deeper than 32 levels'],
    ['not a schema', 'string', 'INVALID_SCHEMA', 'a schema must be a JSON object or a boolean'],
    ['an array is not a schema', [{ type: 'string' }], 'INVALID_SCHEMA', 'a schema must be a JSON object or a boolean'],
    ['unknown keyword (strict)', { type: 'string', maxlength: 3 }, 'INVALID_SCHEMA', 'strict mode: unknown keyword: "maxlength"'],
    ['keyword of the wrong type (strict)', { type: 'string', minimum: 3 }, 'INVALID_SCHEMA',
      'strict mode: missing type "number" for keyword "minimum" at "#" (strictTypes)'],
    ['unknown format (strict)', { type: 'string', format: 'zip-code' }, 'INVALID_SCHEMA', 'unknown format "zip-code"'],
    ['bad keyword value', { type: 'number', minimum: 'x' }, 'INVALID_SCHEMA', 'schema is invalid: #/minimum must be number'],
  ])('%s', (_name, schema, code, message) => {
    const result = compileSchema(schema, DEFAULT_LIMITS);
    expect(result).toMatchObject({ ok: false, code });
    if (!result.ok) expect(result.message).toContain(message);
  });

  it.each<[string, unknown]>([
    ['$id as data', { const: { $id: 'x', $data: 'y', $ref: 'https://x' } }],
    ['$id as a property name', { type: 'object', properties: { $id: { type: 'string' } }, required: ['$id'] }],
    ['local $ref and $defs', { $defs: { qty: { type: 'integer', minimum: 0 } }, type: 'array', items: { $ref: '#/$defs/qty' } }],
    ['the 2020-12 $schema', { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string' }],
    ['uniqueItems with maxItems 1000', { type: 'array', uniqueItems: true, maxItems: 1000 }],
    ['a pattern that runs on RE2', { type: 'string', pattern: '(x+x+)+y' }],
    ['32 levels', deep(32)],
    ['required without properties', { type: 'object', required: ['a'] }],
  ])('accepts %s', (_name, schema) => {
    expect(compileSchema(schema, DEFAULT_LIMITS)).toMatchObject({ ok: true });
  });

  it('honours the limits it is given', () => {
    const limits = { ...DEFAULT_LIMITS, maxSchemaBytes: 20, maxSchemaDepth: 2, maxPatternLength: 3 };
    expect(compileSchema({ type: 'string', minLength: 10 }, limits)).toMatchObject({ ok: false, code: 'TOO_LONG' });
    expect(compileSchema({ not: { not: {} } }, limits)).toMatchObject({ ok: false, code: 'TOO_DEEP' });
    expect(compileSchema({ pattern: 'abcd' }, limits)).toMatchObject({ ok: false, code: 'TOO_LONG' });
  });

  it('compiles a copy: changing the tenant object later changes nothing', () => {
    const schema = { type: 'object', properties: { a: { type: 'number', maximum: 5 } } };
    const validate = compile(schema);
    schema.properties.a.maximum = 100;
    expect(validate({ a: 50 })).toBe(false);
  });
});

describe('schemas whose cost has no bound', () => {
  const node = (body: Record<string, unknown>): unknown => ({ $defs: { n: { type: 'object', ...body } }, $ref: '#/$defs/n' });

  it.each<[string, unknown, string]>([
    ['references that fan out 31 levels (2 KB, 2^31 applications to one value)', fanOutSchema(31), `more than ${MAX_SCHEMA_APPLICATIONS} subschemas to one value`],
    ['references that fan out 300 levels', fanOutSchema(300), `more than ${MAX_SCHEMA_APPLICATIONS} subschemas`],
    ['recursion that sends a child back twice (properties and a matching patternProperties)',
      node({ properties: { a: { $ref: '#/$defs/n' } }, patternProperties: { '^a$': { $ref: '#/$defs/n' } } }), `more than ${MAX_SCHEMA_APPLICATIONS}`],
    ['a cycle through allOf on the same value', { $defs: { a: { allOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' },
      'refers to itself without going into the value'],
    ['the root applied to itself', { anyOf: [{ type: 'string' }, { $ref: '#' }] }, 'refers to itself without going into the value'],
    ['a cycle through if/then', { $defs: { a: { if: { $ref: '#/$defs/b' } }, b: { then: { $ref: '#/$defs/a' } } }, $ref: '#/$defs/a' },
      'refers to itself'],
  ])('refuses %s', (_name, schema, message) => {
    const result = compileSchema(schema, DEFAULT_LIMITS);
    expect(result).toMatchObject({ ok: false, code: 'INVALID_SCHEMA' });
    if (!result.ok) expect(result.message).toContain(message);
  });

  it.each<[string, unknown, number]>([
    ['a flat object', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['a'] }, 1],
    ['references that fan out 10 levels', fanOutSchema(10), 4094],
    ['a tree: children are items of the same node', node({ properties: { children: { type: 'array', items: { $ref: '#/$defs/n' } } } }), 2],
    ['a tree whose children refer to the root ("$ref": "#")', { type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } } } }, 2],
    ['a binary tree: left and right are different children', node({ properties: { l: { $ref: '#/$defs/n' }, r: { $ref: '#/$defs/n' } } }), 2],
    ['shared $defs used in many places', {
      $defs: { money: { type: 'number', minimum: 0 } },
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${i}`, { $ref: '#/$defs/money' }])),
    }, 2],
  ])('accepts %s, bounded at %i applications per value', (_name, schema, count) => {
    expect(schemaApplications(schema)).toEqual({ ok: true, count });
    expect(compileSchema(schema, DEFAULT_LIMITS)).toMatchObject({ ok: true });
  });

  it('draws the line at the limit: 11 levels of fan-out pass, 12 do not', () => {
    // Every level doubles the nodes and the references to them: 2^(levels + 2) - 2.
    expect(schemaApplications(fanOutSchema(11))).toEqual({ ok: true, count: 8190 });
    // Counting stops just past the limit, whatever the schema.
    expect(schemaApplications(fanOutSchema(12))).toEqual({ ok: true, count: MAX_SCHEMA_APPLICATIONS + 1 });
    expect(compileSchema(fanOutSchema(11), DEFAULT_LIMITS)).toMatchObject({ ok: true });
    expect(compileSchema(fanOutSchema(12), DEFAULT_LIMITS)).toMatchObject({ ok: false, code: 'INVALID_SCHEMA' });
  });

  it(`reports at most ${MAX_SCHEMA_FAILURES} failures per check, however many subschemas fail`, () => {
    // 2^11 applications of `type: string` to an object that is not one: 2048 errors from Ajv.
    const validate = compile(fanOutSchema(11, { type: 'string' }));
    const value = { a: 'x'.repeat(1000) };
    expect(validate(value)).toBe(false);
    expect(validate.errors!.length).toBe(2048);
    const failures = schemaFailures(validate.errors ?? [], 'doc', value);
    expect(failures).toHaveLength(MAX_SCHEMA_FAILURES);
    expect(failures[0]).toEqual(fail('doc', value, 'string', 'must be string'));
  });
});

describe('the shared Ajv instance', () => {
  it('stays small over 5000 compiles, and earlier validators keep working', () => {
    const first = compile({ type: 'object', properties: { code: { type: 'string', pattern: '^p0$' } } });
    const before = sharedAjvCacheSizes();
    const validators: SchemaValidator[] = [];
    for (let i = 1; i <= 5000; i++) {
      validators.push(compile({
        type: 'object',
        properties: {
          code: { type: 'string', pattern: `^p${i}$` },
          tag: { type: 'string', pattern: `(x|x)*${i}` },
          n: { type: 'integer', maximum: i },
        },
        required: [`r${i}`],
      }));
    }
    expect(sharedAjvCacheSizes()).toEqual(before);
    expect(before.scopeValues).toBe(0);
    expect(first({ code: 'p0' })).toBe(true);
    expect(first({ code: 'p1' })).toBe(false);
    expect(validators[41]({ r42: 1, code: 'p42', tag: 'xx42', n: 42 })).toBe(true);
    expect(validators[41]({ r42: 1, code: 'p43', tag: 'xx42', n: 42 })).toBe(false);
    expect(validators[41]({ r42: 1, code: 'p42', tag: 'xx43', n: 42 })).toBe(false);
    expect(validators[41]({ r42: 1, code: 'p42', tag: 'xx42', n: 43 })).toBe(false);
    expect(validators[4999]({ r5000: 1, code: 'p5000' })).toBe(true);
  }, 120_000);

  it('does not keep refused schemas either', () => {
    const before = sharedAjvCacheSizes();
    for (let i = 0; i < 100; i++) compileSchema({ type: 'string', maxlength: i }, DEFAULT_LIMITS);
    expect(sharedAjvCacheSizes()).toEqual(before);
  });
});

describe('createStandaloneAjv', () => {
  it('emits standalone code that imports the pattern engine', () => {
    const ajv = createStandaloneAjv();
    expect(ajv.opts.code).toMatchObject({ source: true, esm: true });
    expect(ajv.opts).toMatchObject({ allErrors: true, ownProperties: true, addUsedSchema: false, strictRequired: false });
    const validate = ajv.compile({ type: 'object', properties: { a: { type: 'string', pattern: '(a|a)*b' } } });
    expect(validate({ a: 'b' })).toBe(true);
    expect(validate({ a: 'c' })).toBe(false);
    const source = standaloneCode(ajv, validate);
    expect(source).toMatch(/^"use strict";export const validate = /);
    expect(source).toContain('compile-pattern.ts").patternEngine');
  });
});

describe('where in the schema a refusal is', () => {
  const refusal = (schema: unknown): { pointer: string; message: string } => {
    const result = compileSchema(schema, DEFAULT_LIMITS);
    if (result.ok) throw new Error('the schema was accepted');
    return { pointer: result.pointer, message: result.message };
  };

  it('an unknown keyword at the keyword, with the keyword Ajv knows it is a near miss of', () => {
    expect(refusal({ type: 'object', properties: { street: { type: 'string', minLenght: 3 } } })).toEqual({
      pointer: '/properties/street/minLenght',
      message: 'strict mode: unknown keyword: "minLenght" at "#/properties/street"; did you mean "minLength"?',
    });
    // Case alone is a near miss; a key with "/" is escaped as JSON Pointer says.
    expect(refusal({ type: 'object', properties: { 'a/b': { type: 'string', maxlength: 1 } } })).toMatchObject({ pointer: '/properties/a~1b/maxlength', message: expect.stringMatching(/did you mean "maxLength"\?$/) });
    expect(refusal({ $defs: { a: { zzz: 1 } }, $ref: '#/$defs/a' })).toEqual({ pointer: '/$defs/a/zzz', message: 'strict mode: unknown keyword: "zzz" at "#/$defs/a"' });
  });

  it('other refusals at the place their message names', () => {
    expect(refusal({ type: 'string', minimum: 1 }).pointer).toBe('/minimum');
    expect(refusal({ type: 'string', format: 'emial' }).pointer).toBe('/format');
    expect(refusal({ type: 'array', items: { type: 'number', maximum: 'x' } }).pointer).toBe('/items/maximum');
    expect(refusal({ type: 'object', properties: { a: { $ref: '#/$defs/none' } } }).pointer).toBe('/properties/a/$ref');
    expect(refusal({ type: 'object', properties: { a: { type: 'string', pattern: '(?=x)' } } }).pointer).toBe('/properties/a/pattern');
  });
});
