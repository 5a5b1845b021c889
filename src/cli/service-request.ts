/**
 * The CLI's one way of calling a service (--url): a request to its HTTP
 * API as the tenant's admin key, the tenant sent as X-Tenant-Id, and the
 * service's problem+json, when it refuses, as a CommandError to print.
 */
import { CommandError } from './cli-errors.ts';
import { describeErrors } from './rules-file-io.ts';

/** Where the service is, and the tenant's admin key. */
export interface Remote {
  url: string;
  key: string;
}

/** The parts of a problem+json answer the CLI prints. */
interface Problem {
  code?: string;
  detail?: string;
  errors?: Array<{ path: string; message: string }>;
}

/** A body sent as it is under its own media type (a CSV), where any other body is sent as JSON. */
export class TextBody {
  constructor(readonly contentType: string, readonly text: string) {}
}

/**
 * One request; its JSON answer (null for none, as a 204), or its problem
 * as a CommandError.
 *
 * @example
 * const { items } = await request<{ items: unknown[] }>(remote, 'acme', 'GET', '/api/v1/api-keys');
 */
export async function request<T>(remote: Remote, tenantId: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await send(remote, tenantId, method, path, body);
  const answer: unknown = await response.json().catch(() => null);
  if (!response.ok) throw problemError(response, answer);
  return answer as T;
}

/**
 * One GET whose answer is text (a CSV), with its headers; or its problem as a CommandError.
 *
 * @example
 * const { text: csv, headers } = await requestText(remote, 'acme', `/api/v1/rules/${id}/table.csv`);
 */
export async function requestText(remote: Remote, tenantId: string, path: string): Promise<{ text: string; headers: Headers }> {
  const response = await send(remote, tenantId, 'GET', path);
  if (!response.ok) throw problemError(response, await response.json().catch(() => null));
  return { text: await response.text(), headers: response.headers };
}

async function send(remote: Remote, tenantId: string, method: string, path: string, body?: unknown): Promise<Response> {
  const [contentType, text] = body === undefined ? [undefined, undefined]
    : body instanceof TextBody ? [body.contentType, body.text] : ['application/json', JSON.stringify(body)];
  try {
    return await fetch(`${remote.url}${path}`, {
      method,
      headers: { 'x-api-key': remote.key, 'x-tenant-id': tenantId, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
      body: text,
    });
  } catch (error) {
    throw new CommandError(`cannot reach ${remote.url}: ${(error as Error).message}`);
  }
}

/** The service's problem+json, printed with each of its errors on a line. */
function problemError(response: Response, answer: unknown): CommandError {
  const problem = (answer ?? {}) as Problem;
  const errors = Array.isArray(problem.errors) ? `\n${describeErrors(problem.errors)}` : '';
  return new CommandError(`${response.status} ${problem.code ?? ''}: ${problem.detail ?? response.statusText}${errors}`);
}
