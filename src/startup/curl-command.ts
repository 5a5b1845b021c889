/**
 * The one-line curl command printed on first run. Every argument is
 * single-quoted for POSIX shells, so it works pasted as printed.
 */

/** Quotes a string for sh/bash: single quotes, with embedded ones closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", '\'\\\'\'')}'`;
}

export interface CurlCommandOptions {
  port: number;
  apiKey: string;
  tenantId: string;
  body: unknown;
}

/**
 * A curl command that POSTs `body` to the local validate endpoint.
 *
 * @example
 * validateCurlCommand({ port: 3000, apiKey: 'rk_x', tenantId: 'demo', body: { context: 'c', payload: {} } });
 * // "curl -sS -X POST 'http://127.0.0.1:3000/api/v1/validation/validate' -H ... --data '{...}'"
 */
export function validateCurlCommand(options: CurlCommandOptions): string {
  const url = `http://127.0.0.1:${options.port}/api/v1/validation/validate`;
  return [
    'curl -sS -X POST',
    shellQuote(url),
    '-H', shellQuote('Content-Type: application/json'),
    '-H', shellQuote(`X-Api-Key: ${options.apiKey}`),
    '-H', shellQuote(`X-Tenant-Id: ${options.tenantId}`),
    '--data', shellQuote(JSON.stringify(options.body)),
  ].join(' ');
}
