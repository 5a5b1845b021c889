/**
 * The problem+json body of every error (src/errors.ts), as shared schemas
 * of the OpenAPI document. Error bodies are built by the error handler, not
 * serialized by these schemas: they describe what it sends.
 */
import { ERRORS } from '../../errors.ts';

/** One problem with a request body, query or parameter. */
export const fieldErrorSchema = {
  $id: 'FieldError',
  type: 'object',
  description: 'One problem with the request, at a path in the rule-path syntax (`items[3].payload`, `rule.expression`).',
  required: ['path', 'message'],
  properties: {
    path: {
      type: 'string',
      description: 'Where the problem is: a field of the body (or query), `""` for the body as a whole.',
      examples: ['items[3].payload'],
    },
    message: {
      type: 'string',
      description: 'What is wrong there.',
      examples: ['must be object'],
    },
  },
} as const;

/** RFC 9457 problem details, with the service's stable code and the request id. */
export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  description: 'An error, as application/problem+json (RFC 9457).',
  required: ['type', 'title', 'status', 'detail', 'code', 'requestId'],
  properties: {
    type: {
      type: 'string',
      description: 'A relative URI naming the kind of problem, one per code.',
      examples: ['/problems/invalid-body'],
    },
    title: { type: 'string', description: 'Short summary of the kind of problem; the same for every occurrence.', examples: ['Invalid request'] },
    status: { type: 'integer', description: 'The HTTP status code of the response.', examples: [400] },
    detail: {
      type: 'string',
      description: 'What went wrong with this request.',
      examples: ['The request body is invalid.'],
    },
    code: {
      type: 'string',
      enum: Object.keys(ERRORS),
      description: 'Stable upper-case error code; programs branch on it.',
      examples: ['INVALID_BODY'],
    },
    requestId: {
      type: 'string',
      description: 'Identifies the request in the service logs.',
      examples: ['3f9c1a2b-77d0-4e1a-9c3d-000000000001'],
    },
    errors: {
      type: 'array',
      description: 'Each problem with the request body, query or parameters (400 and some 404 and 409 answers).',
      items: { $ref: 'FieldError#' },
    },
    currentVersion: {
      type: 'integer',
      description: 'With a 409 for a PUT or PATCH of a rule whose `version` is not the latest: the latest version. '
        + 'Read the rule again, reapply the change and send it with this version.',
      examples: [3],
    },
  },
  examples: [{
    type: '/problems/invalid-body',
    title: 'Invalid request',
    status: 400,
    detail: 'The request body is invalid.',
    code: 'INVALID_BODY',
    requestId: '3f9c1a2b-77d0-4e1a-9c3d-000000000001',
    errors: [{ path: 'payload', message: 'is required' }],
  }],
} as const;
