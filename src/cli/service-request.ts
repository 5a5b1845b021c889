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

/**
 * One request; its JSON answer (null for none, as a 204), or its problem
 * as a CommandError.
 *
 * @example
 * const { items } = await request<{ items: unknown[] }>(remote, 'acme', 'GET', '/api/v1/api-keys');
 */
export async function request<T>(remote: Remote, tenantId: string, method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${remote.url}${path}`, {
      method,
      headers: {
        'x-api-key': remote.key,
        'x-tenant-id': tenantId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new CommandError(`cannot reach ${remote.url}: ${(error as Error).message}`);
  }
  const answer: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const problem = (answer ?? {}) as Problem;
    const errors = Array.isArray(problem.errors) ? `\n${describeErrors(problem.errors)}` : '';
    throw new CommandError(`${response.status} ${problem.code ?? ''}: ${problem.detail ?? response.statusText}${errors}`);
  }
  return answer as T;
}
