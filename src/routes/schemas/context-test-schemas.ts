/**
 * JSON Schemas of the stored test routes: the test cases of a context, and
 * the answer of a test run.
 */
import { CODE_PATTERN } from '../../../compiler/rule-schema.ts';
import { TUNING } from '../../tuning.ts';
import { traceSchema } from './trace-schemas.ts';

const testName = { type: 'string', minLength: 1, maxLength: 200, description: 'The test\'s name, unique in the context.', examples: ['small loan passes'] } as const;
const ruleCodes = {
  type: 'array',
  description: 'Codes of failing rules, each once.',
  items: { type: 'string', pattern: CODE_PATTERN, description: 'A rule code.' },
  examples: [['MAX_AMOUNT']],
} as const;

/** One stored test case. */
export const storedTestSchema = {
  $id: 'StoredTest',
  type: 'object',
  description: 'A payload and the answer it must get from the context\'s rules.',
  required: ['name', 'payload', 'expect'],
  additionalProperties: false,
  properties: {
    name: testName,
    payload: { type: 'object', additionalProperties: true, description: 'The payload to validate.', examples: [{ amount: 500 }] },
    expect: {
      type: 'object',
      description: 'The answer expected: `isValid`, and when `failures` is given, exactly that set of failing rule codes.',
      required: ['isValid'],
      additionalProperties: false,
      properties: {
        isValid: { type: 'boolean', description: 'Whether the payload must pass.', examples: [true] },
        failures: { ...ruleCodes, maxItems: 5000, uniqueItems: true },
      },
    },
  },
} as const;

/** PUT /contexts/{context}/tests, and the answer of GET and PUT. */
export const storedTestsSchema = {
  $id: 'StoredTests',
  type: 'object',
  description: 'The stored test cases of a context, in the order they run.',
  required: ['tests'],
  additionalProperties: false,
  properties: {
    tests: {
      type: 'array',
      maxItems: TUNING.maxStoredTests.value,
      description: `The test cases (at most ${TUNING.maxStoredTests.value}); an empty list removes them.`,
      items: { $ref: 'StoredTest#' },
    },
  },
  examples: [{ tests: [{ name: 'small loan passes', payload: { amount: 500 }, expect: { isValid: true } }] }],
} as const;

/** The body of PUT /contexts/{context}/tests: the same, inline, so the document shows its example. */
const { $id: _storedTestsId, ...storedTestsBody } = storedTestsSchema;
export const storedTestsBodySchema = storedTestsBody;

/** `?force=true` of publish and rollback: go live even when stored tests fail. */
export const forceQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    force: {
      type: 'string',
      enum: ['true', 'false'],
      description: '`true`: go live even when stored tests of the context fail.',
      examples: ['true'],
    },
  },
} as const;

/** POST /contexts/{context}/tests/run. */
export const testRunBodySchema = {
  type: 'object',
  description: 'Which rules to run the tests against.',
  additionalProperties: false,
  properties: {
    target: {
      anyOf: [
        { type: 'string', enum: ['draft', 'live'] },
        { type: 'integer', minimum: 1, maximum: 2147483647 },
      ],
      description: '`draft` (default): what a context publish would make live now; `live`: what validation uses now; '
        + 'or a ruleset version number of the context (see GET /contexts/{context}/versions).',
      examples: ['draft'],
    },
    explain: {
      type: 'boolean',
      description: 'true: each entry of `results` adds `trace`, what became of each rule on that test\'s payload.',
    },
  },
  examples: [{ target: 'draft' }],
} as const;

/** The answer of a test run. */
export const testRunResultSchema = {
  $id: 'TestRunResult',
  type: 'object',
  description: 'How each stored test fared.',
  required: ['target', 'passed', 'failed', 'results', 'truncated'],
  properties: {
    target: {
      anyOf: [{ type: 'string' }, { type: 'integer' }],
      description: 'The rules the tests ran against (`draft`, `live` or a ruleset version number), as asked.',
      examples: ['draft'],
    },
    passed: { type: 'integer', description: 'Tests that got the answer they expect, of every stored test.', examples: [3] },
    failed: { type: 'integer', description: 'Tests that did not, of every stored test.', examples: [1] },
    truncated: {
      type: 'boolean',
      description: 'True when `results` stops before the last test: the results would have been larger than OPERATION_ANSWER_MAX_BYTES. '
        + '`passed` and `failed` still count every test.',
      examples: [false],
    },
    results: {
      type: 'array',
      description: 'One entry per test, in order; only the first ones when `truncated` is true.',
      items: {
        type: 'object',
        description: 'One test\'s outcome.',
        required: ['name', 'ok', 'isValid', 'failures'],
        properties: {
          name: testName,
          ok: { type: 'boolean', description: 'Whether it got the answer it expects.', examples: [true] },
          isValid: { type: 'boolean', description: 'Whether the payload passed.', examples: [false] },
          failures: ruleCodes,
          trace: traceSchema,
        },
      },
    },
  },
} as const;

export const contextTestSchemas = [storedTestSchema, storedTestsSchema, testRunResultSchema] as const;
