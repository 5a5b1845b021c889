/**
 * The management API as the benchmarks use it: create a context's rules
 * and publish them, edit one rule and publish again. Every call must
 * succeed; anything else stops the benchmark with the service's answer.
 */
import type { RuleDefinition } from '../../compiler/types.ts';
import type { ServiceProcess } from './service-process.ts';

/** How often a call refused with 503 and Retry-After is asked again (each waits what the answer said, 5 s). */
const MAX_RETRIES_WHEN_BUSY = 12;

/** A rule as the service returns it (the fields used here). */
export interface StoredRule {
  id: string;
  code: string;
  version: number;
}

/**
 * One JSON request to the service; throws unless the status is `expected`.
 *
 * @example
 * const rule = await callApi(service, 'GET', `/api/v1/rules/${id}`);
 */
export async function callApi(
  service: Pick<ServiceProcess, 'baseUrl' | 'adminKey' | 'tenantId'>, method: string, path: string, body?: unknown, expected = 200,
): Promise<any> {
  const headers: Record<string, string> = { 'x-api-key': service.adminKey, 'x-tenant-id': service.tenantId };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const send = () => fetch(service.baseUrl + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(60_000),
  });
  let response = await send();
  // An instance whose event loop lags (a busy machine: the benchmark's own
  // load generator shares the cores) refuses management calls with 503 and
  // Retry-After before doing anything; a client waits and asks again.
  for (let retries = 0; response.status === 503 && expected !== 503 && retries < MAX_RETRIES_WHEN_BUSY; retries++) {
    const waitS = Number(response.headers.get('retry-after'));
    if (!Number.isFinite(waitS)) break;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, waitS * 1000));
    response = await send();
  }
  const text = await response.text();
  if (response.status !== expected) {
    throw new Error(`${method} ${path} answered ${response.status} (expected ${expected}): ${text.slice(0, 1000)}`);
  }
  return text === '' ? undefined : JSON.parse(text);
}

/**
 * A compiler rule definition as a rules file (POST …/import) carries it:
 * without its schema when the rule has none.
 */
export function asFileRule(rule: RuleDefinition): Record<string, unknown> {
  const { schema, ...rest } = rule;
  return { ...rest, ...(typeof schema === 'object' ? { schema } : {}) };
}

/** The body of POST /rules for a compiler rule definition. */
function ruleBody(context: string, rule: RuleDefinition): Record<string, unknown> {
  return { context, ...rule };
}

/**
 * Creates `rules` in `context` and publishes the context. Rules are created
 * a few at a time: a 1000-rule context is 1000 requests.
 *
 * @returns the stored rules by code.
 */
export async function publishContext(
  service: ServiceProcess, context: string, rules: readonly RuleDefinition[],
): Promise<Map<string, StoredRule>> {
  const stored = new Map<string, StoredRule>();
  const concurrency = 8;
  for (let i = 0; i < rules.length; i += concurrency) {
    const created = await Promise.all(rules.slice(i, i + concurrency).map(
      (rule) => callApi(service, 'POST', '/api/v1/rules', ruleBody(context, rule), 201) as Promise<StoredRule>,
    ));
    for (const rule of created) stored.set(rule.code, { id: rule.id, code: rule.code, version: rule.version });
  }
  const published = await callApi(service, 'POST', `/api/v1/contexts/${encodeURIComponent(context)}/publish`);
  if (published.published.length !== rules.length) {
    throw new Error(`publishing ${context} made ${published.published.length} rules live, expected ${rules.length}`);
  }
  return stored;
}

/**
 * Replaces one rule's content (PUT with its current version) and publishes
 * the context; resolves once the new version is live.
 */
export async function editAndPublish(
  service: ServiceProcess, context: string, stored: StoredRule, rule: RuleDefinition,
): Promise<void> {
  const updated = await callApi(service, 'PUT', `/api/v1/rules/${stored.id}`, { ...ruleBody(context, rule), version: stored.version });
  stored.version = updated.version;
  await callApi(service, 'POST', `/api/v1/contexts/${encodeURIComponent(context)}/publish`);
}
