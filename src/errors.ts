/**
 * The error catalogue: every error the service answers with has a stable
 * upper-case code, one HTTP status, a title and a default detail, and is
 * sent as RFC 9457 problem+json. PROBLEMS names each situation the service
 * refuses a request for, so that one situation always reads the same
 * wherever it is met; throw sites and hooks take their problem from there
 * and write no text of their own. docs/api.md's error table (checked by
 * test/docs/docs-facts.test.ts) and test/http/errors.test.ts follow this list.
 */

import type { FieldError } from './domain-errors.ts';
import { TUNING } from './tuning.ts';

/** One code of the catalogue. */
export interface ErrorEntry {
  readonly status: number;
  readonly title: string;
  /** What the problem says when nothing more specific is known. */
  readonly detail: string;
}

export const ERRORS = {
  INVALID_BODY: { status: 400, title: 'Invalid request', detail: 'Invalid request.' },
  UNAUTHORIZED: { status: 401, title: 'Unauthorized', detail: 'Unauthorized.' },
  FORBIDDEN: { status: 403, title: 'Forbidden', detail: 'Forbidden.' },
  NOT_FOUND: { status: 404, title: 'Not found', detail: 'Not found.' },
  CONTEXT_NOT_FOUND: { status: 404, title: 'Context not found', detail: 'The context was not found.' },
  CONFLICT: { status: 409, title: 'Conflict', detail: 'Conflict.' },
  LIMIT_EXCEEDED: { status: 409, title: 'Limit exceeded', detail: 'Limit exceeded.' },
  TESTS_FAILED: { status: 409, title: 'Tests failed', detail: 'Stored tests of the context fail.' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large', detail: 'Payload too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type', detail: 'Unsupported media type.' },
  RATE_LIMITED: { status: 429, title: 'Too many requests', detail: 'Too many requests.' },
  INTERNAL: { status: 500, title: 'Internal error', detail: 'An internal error occurred; it has been logged.' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable', detail: 'The service is unavailable; retry shortly.' },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERRORS;

// The `errors` of a problem: one entry per place in the request.
export type { FieldError };

/** The problem+json body. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  requestId: string;
  errors?: FieldError[];
  /** A 409 for an edit based on a version that is no longer the latest: the latest one, to read and edit again. */
  currentVersion?: number;
}

/** A problem ready to send: its code, what it says, and what goes with it. */
export interface ProblemSpec {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors?: FieldError[];
  /** The rule's latest version, for an edit based on another (Problem.currentVersion). */
  readonly currentVersion?: number;
  /** Added to the response (Retry-After for 429 and 503). */
  readonly headers?: Record<string, string>;
}

/** A problem that always comes with headers (Retry-After). */
export type ProblemWithHeaders = ProblemSpec & { readonly headers: Record<string, string> };

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** The `type` URI of a code: a relative reference documented in docs/api.md. */
export function problemType(code: ErrorCode): string {
  return `/problems/${code.toLowerCase().replaceAll('_', '-')}`;
}

/**
 * An error that becomes a problem+json response. Throw it from handlers and
 * hooks with a problem of PROBLEMS; the error handler renders it.
 *
 * @example
 * throw new ProblemError(PROBLEMS.invalidBody(errors));
 */
export class ProblemError extends Error implements ProblemSpec {
  readonly status: number;
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors?: FieldError[];
  readonly currentVersion?: number;
  readonly headers?: Record<string, string>;

  constructor(problem: ProblemSpec) {
    super(problem.detail);
    this.name = 'ProblemError';
    this.code = problem.code;
    this.detail = problem.detail;
    if (problem.errors !== undefined) this.errors = problem.errors;
    if (problem.currentVersion !== undefined) this.currentVersion = problem.currentVersion;
    if (problem.headers !== undefined) this.headers = problem.headers;
    this.status = ERRORS[problem.code].status;
  }
}

/** Builds the problem+json body for a code; `currentVersion` goes with a stale edit's 409. */
export function problemBody(code: ErrorCode, detail: string, requestId: string, errors?: FieldError[], currentVersion?: number): Problem {
  const body: Problem = {
    type: problemType(code),
    title: ERRORS[code].title,
    status: ERRORS[code].status,
    detail,
    code,
    requestId,
  };
  if (errors !== undefined && errors.length > 0) body.errors = errors;
  if (currentVersion !== undefined) body.currentVersion = currentVersion;
  return body;
}

/** The single body every authentication failure gets, whatever part was wrong. */
export const UNAUTHORIZED_DETAIL = 'A valid X-Api-Key and the X-Tenant-Id of its tenant are required.';

/** The code's default detail. */
function generic(code: ErrorCode): ProblemSpec {
  return { code, detail: ERRORS[code].detail };
}

function retryAfter(seconds: number): Record<string, string> {
  return { 'retry-after': String(seconds) };
}

/** Context names as a detail quotes them: `"a", "b"`. */
/** Milliseconds as seconds, with a decimal only where it says something. */
function seconds(ms: number): string {
  return Number.isInteger(ms / 1000) ? String(ms / 1000) : (ms / 1000).toFixed(1);
}

function quoted(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(', ');
}

/** A context a request names, and where in the request it names it (none when in the URL). */
export interface NamedContext {
  context: string;
  path?: string;
}

/**
 * The situations the service refuses a request for, by name. Each gives the
 * same code and detail wherever the situation is met.
 *
 * @example
 * throw new ProblemError(PROBLEMS.ruleNotFound());
 * sendProblem(request, reply, PROBLEMS.tenantBudgetSpent(max, resetSeconds));
 */
export const PROBLEMS = {
  // 400: the request itself.
  /** Fastify or Node refused a client error the catalogue has no text for. */
  clientError: (code: ErrorCode): ProblemSpec => generic(code),
  invalidBody: (errors?: FieldError[]): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The request body is invalid.', errors }),
  invalidQuery: (errors?: FieldError[]): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The query string is invalid.', errors }),
  invalidParams: (errors?: FieldError[]): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The path parameters are invalid.', errors }),
  invalidHeaders: (errors?: FieldError[]): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The request headers are invalid.', errors }),
  bodyEmpty: (): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'The request body is empty.', errors: [{ path: '', message: 'is required' }],
  }),
  bodyNotJson: (): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'The request body is not valid JSON.', errors: [{ path: '', message: 'must be valid JSON' }],
  }),
  bodyNotUtf8: (): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'The request body is not valid UTF-8.', errors: [{ path: '', message: 'must be valid UTF-8' }],
  }),
  forbiddenKey: (path: string): ProblemSpec => ({
    code: 'INVALID_BODY',
    detail: 'The request body holds a forbidden key.',
    errors: [{ path, message: 'is a forbidden key (prototype poisoning)' }],
  }),
  unstorableBodyText: (error: FieldError): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'The request body holds text that cannot be stored.', errors: [error],
  }),
  unstorableQueryText: (error: FieldError): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'The query string holds text that cannot be stored or searched for.', errors: [error],
  }),
  malformedUrl: (): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'The URL is malformed: a path segment is not valid percent-encoded UTF-8.',
  }),
  malformedRequest: (): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The request is malformed.' }),
  contentLengthMismatch: (): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The Content-Length header does not match the body.' }),
  headersTooLarge: (): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The request headers are too large.' }),
  requestTooSlow: (): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The request took too long to arrive.' }),

  // 400: what the request asks the rules to do.
  evaluationTooLong: (path: string, deadlineMs: number): ProblemSpec => ({
    code: 'INVALID_BODY',
    detail: 'The payload is too large to evaluate against the rules of this context.',
    errors: [{ path, message: `took longer than ${deadlineMs} ms to evaluate; send a smaller payload` }],
  }),
  tooManyFailures: (path: string, maxFailures: number): ProblemSpec => ({
    code: 'INVALID_BODY',
    detail: 'The payload fails too many rules to answer.',
    errors: [{ path, message: `fails rules more than ${maxFailures} times in one validation; send a smaller payload` }],
  }),
  answerTooLarge: (path: string, maxBytes: number): ProblemSpec => ({
    code: 'INVALID_BODY',
    detail: 'The answer would be too large to send.',
    errors: [{
      path,
      message: `its failures would take more than ${maxBytes} bytes (MAX_ANSWER_BYTES); send a smaller payload, or fewer items`,
    }],
  }),
  /** A heavy management operation stopped at its time budget; `reached` says how far it got. Nothing was changed. */
  operationOverTimeBudget: (operation: string, budgetMs: number, reached: string, path?: string): ProblemSpec => ({
    code: 'LIMIT_EXCEEDED',
    detail: `The ${operation} stopped after ${seconds(budgetMs)} s, its time budget (OPERATION_TIME_BUDGET_MS), ${reached}; nothing was changed.`,
    ...(path === undefined ? {} : { errors: [{ path, message: `asks for more work than ${seconds(budgetMs)} s allow; ask for less` }] }),
  }),
  /** A heavy management operation whose thread ran out of its heap. Nothing was changed. */
  operationOverMemoryBudget: (operation: string, memoryMb: number, reached: string): ProblemSpec => ({
    code: 'LIMIT_EXCEEDED',
    detail: `The ${operation} stopped ${reached}: it needed more than the ${memoryMb} MiB a management thread may use (POOL_WORKER_MEMORY_MB); nothing was changed.`,
  }),
  ruleDoesNotCompile: (errors: FieldError[]): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The rule does not compile.', errors }),
  /** A ruleset that does not compile; `context` names it when it is a stored context's. */
  rulesetDoesNotCompile: (errors: FieldError[], context?: string): ProblemSpec => ({
    code: 'INVALID_BODY',
    detail: context === undefined ? 'The ruleset does not compile.' : `The ruleset of context ${quoted([context])} does not compile.`,
    errors,
  }),
  rulesetOverLimit: (errors: FieldError[], context?: string): ProblemSpec => ({
    code: 'LIMIT_EXCEEDED',
    detail: context === undefined ? 'The ruleset is over a limit.' : `The ruleset of context ${quoted([context])} is over a limit.`,
    errors,
  }),
  /** A merge patch that would remove (null) fields a rule cannot be without. */
  requiredRuleFieldsRemoved: (errors: FieldError[]): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'The patch removes fields a rule cannot be without.', errors,
  }),
  payloadSchemaInvalid: (errors: FieldError[]): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'The payload schema is not a JSON Schema the service accepts.', errors,
  }),
  immutableRuleFields: (errors: FieldError[]): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'The context and code of a rule are immutable.', errors,
  }),
  ruleAndContextBoth: (errors: FieldError[]): ProblemSpec => ({
    code: 'INVALID_BODY', detail: 'Send either `rule` or `context`, not both.', errors,
  }),
  ruleOrContextMissing: (): ProblemSpec => ({
    code: 'INVALID_BODY',
    detail: 'Send either `rule` or `context`.',
    errors: [{ path: 'rule', message: 'either `rule` or `context` is required' }],
  }),

  // 401, 403: who is asking.
  unauthorized: (): ProblemSpec => ({ code: 'UNAUTHORIZED', detail: UNAUTHORIZED_DETAIL }),
  roleForbidden: (): ProblemSpec => ({ code: 'FORBIDDEN', detail: 'This API key may not call this operation.' }),

  // 404: what is asked for.
  noSuchRoute: (): ProblemSpec => ({ code: 'NOT_FOUND', detail: 'No such route.' }),
  ruleNotFound: (): ProblemSpec => ({ code: 'NOT_FOUND', detail: 'Rule was not found.' }),
  sampleNotFound: (): ProblemSpec => ({ code: 'NOT_FOUND', detail: 'Sample was not found.' }),
  apiKeyNotFound: (): ProblemSpec => ({ code: 'NOT_FOUND', detail: 'API key was not found.' }),
  noPayloadSchema: (context: string): ProblemSpec => ({
    code: 'NOT_FOUND', detail: `Context ${quoted([context])} has no payload schema.`,
  }),
  /** A context name in the URL that no context can have. */
  impossibleContextName: (): ProblemSpec => generic('CONTEXT_NOT_FOUND'),
  contextHasNoRules: (context: string): ProblemSpec => ({
    code: 'CONTEXT_NOT_FOUND', detail: `Context ${quoted([context])} has no rules.`,
  }),
  /** Contexts without a published ruleset; each named where the request names it, when that is in the body. */
  contextsNotPublished: (contexts: readonly NamedContext[]): ProblemSpec => {
    const names = quoted(contexts.map(({ context }) => context));
    const errors: FieldError[] = [];
    for (const { path } of contexts) if (path !== undefined) errors.push({ path, message: 'names no published ruleset' });
    return {
      code: 'CONTEXT_NOT_FOUND',
      detail: contexts.length === 1 ? `Context ${names} has no published rules.` : `Contexts ${names} have no published rules.`,
      errors: errors.length > 0 ? errors : undefined,
    };
  },

  // 409: the state of what is changed.
  ruleArchived: (): ProblemSpec => ({ code: 'CONFLICT', detail: 'the rule is archived' }),
  staleVersion: (currentVersion: number, basedOnVersion: number): ProblemSpec => ({
    code: 'CONFLICT', detail: `the rule is at version ${currentVersion}, not ${basedOnVersion}`, currentVersion,
  }),
  testsFailed: (errors: FieldError[], context: string): ProblemSpec => ({
    code: 'TESTS_FAILED',
    detail: `${errors.length === 1 ? 'A stored test' : `${errors.length} stored tests`} of context ${quoted([context])} `
      + `${errors.length === 1 ? 'fails' : 'fail'} against the rules that would go live; nothing was changed. `
      + 'Fix the rules or the tests, or add ?force=true to go ahead anyway.',
    errors,
  }),

  // Storage's other refusals, each in the words storage gives it (they name the versions, counts and codes involved).
  storageNotFound: (detail: string): ProblemSpec => ({ code: 'NOT_FOUND', detail }),
  consoleNotBuilt: (): ProblemSpec => ({ code: 'NOT_FOUND', detail: 'The console was not built: run `npm run build`, then reload this page.' }),
  storageConflict: (detail: string): ProblemSpec => ({ code: 'CONFLICT', detail }),
  storageLimitExceeded: (detail: string): ProblemSpec => ({ code: 'LIMIT_EXCEEDED', detail }),
  storageInvalidInput: (path: string, detail: string): ProblemSpec => ({
    code: 'INVALID_BODY', detail, errors: [{ path, message: detail }],
  }),

  // 413, 415: the body's size and form.
  bodyTooLarge: (): ProblemSpec => ({ code: 'PAYLOAD_TOO_LARGE', detail: 'The request body is larger than the limit.' }),
  notJson: (): ProblemSpec => ({ code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'Send the body as Content-Type: application/json.' }),
  notMergePatch: (): ProblemSpec => ({
    code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'Send the body as Content-Type: application/merge-patch+json.',
  }),
  encodedBody: (): ProblemSpec => ({
    code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'The body\'s Content-Encoding is not supported: send it uncompressed.',
  }),

  // 429: budgets.
  tenantBudgetSpent: (max: number, resetSeconds: number): ProblemWithHeaders => ({
    code: 'RATE_LIMITED',
    detail: `The tenant's budget of ${max} requests per window is spent; retry in ${resetSeconds} s.`,
    headers: retryAfter(resetSeconds),
  }),
  /** A heavy management operation refused because the tenant has its most waiting or running (management-pool.ts). */
  operationsBusy: (operation: string, most: number): ProblemWithHeaders => ({
    code: 'RATE_LIMITED',
    detail: `The ${operation} was not started: the tenant already has ${most} heavy management operation(s) waiting or running `
      + `(OPERATIONS_PER_TENANT). Retry in ${TUNING.operationBusyRetryAfterSeconds.value} s.`,
    headers: retryAfter(TUNING.operationBusyRetryAfterSeconds.value),
  }),
  /** A heavy operation waited its whole time budget for a management thread behind `others` operations of the same tenant. */
  operationQueuedTooLong: (operation: string, budgetMs: number, others: number): ProblemWithHeaders => ({
    code: 'RATE_LIMITED',
    detail: `The ${operation} was not started: it waited its whole time budget (OPERATION_TIME_BUDGET_MS, ${budgetMs} ms) for a management thread `
      + `behind the tenant's ${others} other heavy management operation(s). Send fewer at once; retry in ${TUNING.operationBusyRetryAfterSeconds.value} s.`,
    headers: retryAfter(TUNING.operationBusyRetryAfterSeconds.value),
  }),
  addressBudgetSpent: (resetSeconds: number): ProblemWithHeaders => ({
    code: 'RATE_LIMITED',
    detail: `Too many unauthenticated requests from this address; retry in ${resetSeconds} s.`,
    headers: retryAfter(resetSeconds),
  }),

  // 500, 503: the service.
  internal: (): ProblemSpec => generic('INTERNAL'),
  /** A route registered outside the authentication hook: it must never answer with data. */
  notAuthenticated: (): ProblemSpec => ({ code: 'INTERNAL', detail: 'The request was not authenticated.' }),
  databaseUnavailable: (): ProblemWithHeaders => ({
    code: 'SERVICE_UNAVAILABLE',
    detail: 'The database is unavailable; retry shortly.',
    headers: retryAfter(TUNING.unavailableRetryAfterSeconds.value),
  }),
  /** Readiness once SIGTERM came: no Retry-After, this process will not be back. */
  shuttingDown: (): ProblemSpec => ({ code: 'SERVICE_UNAVAILABLE', detail: 'The service is shutting down.' }),
  /** A heavy management operation that waited a whole time budget for a management thread. */
  managementThreadsBusy: (operation: string): ProblemWithHeaders => ({
    code: 'SERVICE_UNAVAILABLE',
    detail: `The ${operation} was not started: every management thread stayed busy with other tenants' operations for its whole time budget; retry shortly.`,
    headers: retryAfter(TUNING.unavailableRetryAfterSeconds.value),
  }),
  workerMetricsUnavailable: (): ProblemWithHeaders => ({
    code: 'SERVICE_UNAVAILABLE',
    detail: 'The workers\' metrics could not be collected; retry shortly.',
    headers: retryAfter(TUNING.metricsRetryAfterSeconds.value),
  }),
  /**
   * The process is overloaded (src/overload/overload-monitor.ts): management requests and readiness
   * get this; validations are still answered. `reason` names the pressure past its limit.
   */
  instanceOverloaded: (reason: string): ProblemWithHeaders => ({
    code: 'SERVICE_UNAVAILABLE',
    detail: `The instance is overloaded (${reason}): it refuses management requests until it recovers, `
      + `and still answers validations. Retry in ${TUNING.overloadRetryAfterSeconds.value} s.`,
    headers: retryAfter(TUNING.overloadRetryAfterSeconds.value),
  }),
  contextsRepublishing: (): ProblemWithHeaders => ({
    code: 'SERVICE_UNAVAILABLE',
    detail: 'The contexts are being republished too quickly to take one consistent set; retry shortly.',
    headers: retryAfter(TUNING.republishedRetryAfterSeconds.value),
  }),
} as const satisfies Record<string, (...args: never[]) => ProblemSpec>;
