/**
 * The console's one way to the service: fetch against /api/v1 with the
 * session's X-Tenant-Id and X-Api-Key headers. A problem+json answer
 * becomes an ApiError carrying the API's own words (`detail`) and its
 * field errors, so a page can show each next to the control it names.
 */
import type { Session } from './session.ts';

/** One entry of a problem's `errors`: where in the request, and what is wrong there. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/** A refusal from the API (or a failure to reach it), in the API's words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: readonly FieldError[] = [],
  ) {
    super(detail);
    this.name = 'ApiError';
  }

  /** The field errors whose path is `field` or lies under it (`expression`, `rules[3].expression`). */
  errorsAt(field: string): FieldError[] {
    return this.errors.filter((error) => error.path === field || error.path.startsWith(`${field}.`) || error.path.startsWith(`${field}[`));
  }
}

export const API_BASE = '/api/v1';

export interface RequestOptions {
  readonly body?: unknown;
  /** Defaults to application/json when there is a body. */
  readonly contentType?: string;
  readonly signal?: AbortSignal;
}

function isProblem(value: unknown): value is { code?: unknown; detail?: unknown; errors?: unknown } {
  return typeof value === 'object' && value !== null;
}

async function problemOf(response: Response): Promise<ApiError> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (isProblem(body) && typeof body.detail === 'string') {
    const errors = Array.isArray(body.errors) ? (body.errors as FieldError[]) : [];
    return new ApiError(response.status, typeof body.code === 'string' ? body.code : 'UNKNOWN', body.detail, errors);
  }
  return new ApiError(response.status, 'UNKNOWN', `The service answered ${response.status} ${response.statusText}.`);
}

/**
 * Calls the API as the session's key. Resolves with the parsed JSON answer
 * (undefined for 204), rejects with an ApiError.
 *
 * @example
 * const { items } = await apiRequest<{ items: ContextSummary[] }>(session, 'GET', '/contexts');
 */
export async function apiRequest<T>(session: Session, method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { 'X-Tenant-Id': session.tenant, 'X-Api-Key': session.key, accept: 'application/json' };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  let response: Response;
  try {
    response = await fetch(API_BASE + path, { method, headers, body, signal: options.signal, credentials: 'omit', cache: 'no-store' });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'NETWORK', 'The service could not be reached.');
  }
  if (!response.ok) throw await problemOf(response);
  if (response.status === 204) return undefined as T;
  const type = response.headers.get('content-type') ?? '';
  return (type.includes('json') ? await response.json() : await response.text()) as T;
}

/** A query string from the parameters that are set: `?a=1&b=x`, or '' when none is. */
export function query(parameters: Record<string, string | number | boolean | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** A path segment: context names and ids are encoded, whatever they hold. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
