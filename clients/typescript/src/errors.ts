/**
 * The errors the client throws. Every answer of the service other than a
 * success is a problem (RFC 9457, `application/problem+json`) with a stable
 * `code`; the client throws it as a RulesApiError, so callers branch on
 * `error.code` and read `error.errors` for the field-level details.
 */
import type { components } from './generated/api-types.ts';

/** A problem body as the service sends it. */
export type Problem = components['schemas']['Problem'];
/** One field-level problem (`errors[]` of a problem). */
export type FieldError = components['schemas']['FieldError'];
/** The stable codes of problems. */
export type ProblemCode = Problem['code'];

/** An answer of the service other than a success, with its problem. */
export class RulesApiError extends Error {
  override readonly name = 'RulesApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The problem's stable code (`INTERNAL` when the body was not a problem). */
  readonly code: ProblemCode;
  /** What went wrong with this request. */
  readonly detail: string;
  /** Each problem with the request body, query or parameters (empty when the problem has none). */
  readonly errors: readonly FieldError[];
  /** The service's request id, to find the request in its logs. */
  readonly requestId: string | undefined;
  /** What Retry-After asked for, in milliseconds, when the answer had it (429, 503). */
  readonly retryAfterMs: number | undefined;
  /** The problem body as received (a synthesized one when the body was not a problem). */
  readonly problem: Problem;

  constructor(status: number, problem: Problem, retryAfterMs?: number) {
    super(`${status} ${problem.code}: ${problem.detail}`);
    this.status = status;
    this.code = problem.code;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.requestId = problem.requestId;
    this.retryAfterMs = retryAfterMs;
    this.problem = problem;
  }
}

/**
 * Why a local validator could not load or follow a module:
 * - NOT_LOADED: no verified module yet (thrown by validate without `fallback: 'remote'`);
 * - SIGNATURE_INVALID: a module whose signature does not verify against the key given was refused;
 * - MODULE_REFUSED: a module that verifies but is not the one asked for was refused: another
 *   tenant's or context's, or a ruleset version older than the one running (versions only grow,
 *   a rollback is a new version, so an older one is a replay);
 * - NOT_SERVED: the context is not served for local evaluation to this key (its admin turned it
 *   off, the change feed ending saying so, or never on; or the key's role may not have it: a 403);
 *   reported once, the validator keeps the version it runs and asks again every notServedRetryMs;
 * - LOAD_FAILED: a module could not be fetched or imported, or the signing key imported (or read
 *   from the service, with trustServerKey).
 */
export type LocalValidatorErrorCode = 'NOT_LOADED' | 'SIGNATURE_INVALID' | 'MODULE_REFUSED' | 'NOT_SERVED' | 'LOAD_FAILED';

/**
 * Thrown by a local validator that has no verified module to run (none
 * loaded yet, or every one offered was refused) and was not asked to fall
 * back to remote validation; and given to `onError` for every failure of
 * loading or following.
 */
export class LocalValidatorError extends Error {
  override readonly name = 'LocalValidatorError';
  constructor(
    readonly code: LocalValidatorErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Reads a failed answer as a RulesApiError (consumes the response body). */
export async function problemError(response: Response, retryAfterMs: number | undefined): Promise<RulesApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isProblem(body)) return new RulesApiError(response.status, body, retryAfterMs);
  // Not a problem (a proxy's HTML page, an empty body): keep the status, say so.
  const problem: Problem = {
    type: 'about:blank',
    title: response.statusText || 'Unexpected answer',
    status: response.status,
    detail: `The answer was not a problem: ${text.slice(0, 200) || '(empty body)'}`,
    code: 'INTERNAL',
    requestId: response.headers.get('x-request-id') ?? '',
  };
  return new RulesApiError(response.status, problem, retryAfterMs);
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const candidate = body as Record<string, unknown>;
  return typeof candidate.code === 'string' && typeof candidate.detail === 'string' && typeof candidate.status === 'number';
}
