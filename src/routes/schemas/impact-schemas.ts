/**
 * JSON Schemas of the impact report and of one recorded sample. The
 * response schemas are shared schemas (`$id`), components of the OpenAPI
 * document.
 */
import { TUNING } from '../../tuning.ts';

const MAX_SAMPLES = TUNING.impactMaxSamples.value;
const DEFAULT_SAMPLES = TUNING.impactDefaultSamples.value;

/** POST /contexts/{context}/impact: an optional body. */
export const impactBodySchema = {
  type: 'object',
  description: 'What to compare the live ruleset with, on how many of the newest samples.',
  additionalProperties: false,
  properties: {
    target: {
      anyOf: [
        { type: 'string', enum: ['draft'] },
        { type: 'integer', minimum: 1, maximum: 2147483647 },
      ],
      description: '`draft` (default): what a context publish would make live now; or a ruleset version number of the context.',
      examples: ['draft'],
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_SAMPLES,
      description: `How many of the context's newest samples to replay: 1 to ${MAX_SAMPLES}, default ${DEFAULT_SAMPLES}; `
        + 'never more than the tenant\'s sampling `maxSamples`.',
      examples: [DEFAULT_SAMPLES],
    },
  },
  examples: [{ target: 'draft', limit: DEFAULT_SAMPLES }],
} as const;

const ruleCodes = {
  type: 'array',
  description: 'Codes of the failing rules, each once, in the order failures are reported.',
  items: { type: 'string', description: 'A rule code.' },
  examples: [['MAX_AMOUNT']],
} as const;

const verdict = (description: string) => ({
  type: 'object',
  description,
  required: ['isValid', 'failures'],
  properties: {
    isValid: { type: 'boolean', description: 'Whether the payload passes.', examples: [false] },
    failures: ruleCodes,
  },
}) as const;

const count = (description: string, example: number) => ({ type: 'integer', description, examples: [example] }) as const;

/** The answer of POST /contexts/{context}/impact. */
export const impactReportSchema = {
  $id: 'ImpactReport',
  type: 'object',
  description: 'What would change for recorded traffic if the target ruleset were live. The four counts add up to `samples`.',
  required: ['samples', 'unchanged', 'becameInvalid', 'becameValid', 'failuresChanged', 'byRule', 'examples'],
  properties: {
    samples: count('Samples replayed: the newest ones, at most `limit`.', 10000),
    unchanged: count('Samples with the same verdict under both: valid under both, or invalid under both failing the same rules.', 9950),
    becameInvalid: count('Samples valid live and invalid under the target.', 30),
    becameValid: count('Samples invalid live and valid under the target.', 15),
    failuresChanged: count('Samples invalid under both, failing a different set of rules.', 5),
    byRule: {
      type: 'array',
      description: 'Per rule code whose outcome changed for any sample: in how many samples it fails under the target only, and live only. '
        + 'The rules that moved most come first.',
      items: {
        type: 'object',
        required: ['ruleCode', 'newFailures', 'resolvedFailures'],
        properties: {
          ruleCode: { type: 'string', description: 'The rule code.', examples: ['MAX_AMOUNT'] },
          newFailures: count('Samples it fails under the target and not live.', 30),
          resolvedFailures: count('Samples it fails live and not under the target.', 2),
        },
      },
    },
    examples: {
      type: 'array',
      description: 'Samples whose verdict changed, newest first within each kind: up to 20 that became invalid, then up to 20 that became '
        + 'valid, then up to 20 whose failures changed. GET /contexts/{context}/samples/{sampleId} answers the payload of each.',
      items: {
        type: 'object',
        required: ['sampleId', 'recordedAt', 'live', 'target'],
        properties: {
          sampleId: { type: 'string', description: 'The sample\'s id.', examples: ['5f0c7a5e-2b9d-4c1e-8f3a-6d2e1b0c9a87'] },
          recordedAt: { type: 'string', format: 'date-time', description: 'When it was recorded.', examples: ['2026-11-27T09:30:00.000Z'] },
          live: verdict('Its verdict under the live ruleset.'),
          target: verdict('Its verdict under the target.'),
        },
      },
    },
  },
} as const;

/** `:context` and `:sampleId`; an id that cannot exist is simply unknown (404), checked in the handler. */
export const sampleParamsSchema = {
  type: 'object',
  required: ['context', 'sampleId'],
  properties: {
    context: { type: 'string', description: 'The context name.', examples: ['loan-application'] },
    sampleId: { type: 'string', description: 'A sample id from an impact report.', examples: ['5f0c7a5e-2b9d-4c1e-8f3a-6d2e1b0c9a87'] },
  },
} as const;

/** The answer of GET /contexts/{context}/samples/{sampleId}. */
export const sampleSchema = {
  $id: 'Sample',
  type: 'object',
  description: 'One recorded sample: the payload as it was validated, when, and against which ruleset version.',
  required: ['sampleId', 'recordedAt', 'rulesetVersion', 'payload'],
  properties: {
    sampleId: { type: 'string', description: 'The sample\'s id.', examples: ['5f0c7a5e-2b9d-4c1e-8f3a-6d2e1b0c9a87'] },
    recordedAt: { type: 'string', format: 'date-time', description: 'When it was recorded.', examples: ['2026-11-27T09:30:00.000Z'] },
    rulesetVersion: { type: 'integer', description: 'The ruleset version that validated it.', examples: [4] },
    payload: { description: 'The payload, as validated.', examples: [{ amount: 25000 }] },
  },
} as const;

export const impactSchemas = [impactReportSchema, sampleSchema] as const;
