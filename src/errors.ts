/**
 * The error registry: every error the service answers with has a stable
 * upper-case code, one HTTP status and a title, and is sent as RFC 9457
 * problem+json (product.md section 7). docs/api.md's error table (checked by
 * test/docs/docs-facts.test.ts) and test/http/errors.test.ts follow this list.
 */

export const ERRORS = {
  INVALID_BODY: { status: 400, title: 'Invalid request' },
  UNAUTHORIZED: { status: 401, title: 'Unauthorized' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  CONTEXT_NOT_FOUND: { status: 404, title: 'Context not found' },
  CONFLICT: { status: 409, title: 'Conflict' },
  LIMIT_EXCEEDED: { status: 409, title: 'Limit exceeded' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  INTERNAL: { status: 500, title: 'Internal error' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** One problem with a request body or query, at a path in product.md 2.4 syntax. */
export interface FieldError {
  path: string;
  message: string;
}

/** The problem+json body. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  requestId: string;
  errors?: FieldError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** The `type` URI of a code: a relative reference documented in docs/api.md. */
export function problemType(code: ErrorCode): string {
  return `/problems/${code.toLowerCase().replaceAll('_', '-')}`;
}

/**
 * An error that becomes a problem+json response. Throw it from handlers and
 * hooks; the error handler renders it. `headers` are added to the response
 * (Retry-After for 429 and 503).
 */
export class ProblemError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.name = 'ProblemError';
    this.status = ERRORS[code].status;
  }
}

/** Builds the problem+json body for a code. */
export function problemBody(code: ErrorCode, detail: string, requestId: string, errors?: FieldError[]): Problem {
  const body: Problem = {
    type: problemType(code),
    title: ERRORS[code].title,
    status: ERRORS[code].status,
    detail,
    code,
    requestId,
  };
  if (errors !== undefined && errors.length > 0) body.errors = errors;
  return body;
}

/** The single body every authentication failure gets, whatever part was wrong (product.md 5). */
export const UNAUTHORIZED_DETAIL = 'A valid X-Api-Key and the X-Tenant-Id of its tenant are required.';
