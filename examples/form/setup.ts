/**
 * Prepares a tenant for the order form, with an admin key: creates the
 * rules of rules.json in the context (those whose code it lacks) and
 * publishes them, turns local validation on for the context, adds the
 * page's origin to the tenant's CORS origins, creates a key of the `client`
 * role for the page, and reads the service's signing key. Prints the
 * command that serves the page with them.
 *
 *   node --import tsx examples/form/setup.ts --admin-key rk_... \
 *     [--service http://127.0.0.1:3000] [--tenant demo] [--context orders] [--origin http://127.0.0.1:5173]
 */
import { parseArgs } from 'node:util';
import { createRulesClient, type paths } from '../../clients/typescript/src/index.ts';
import { SERVICE_OPTIONS, startedAsScript } from './cli.ts';
import rules from './rules.json' with { type: 'json' };

/** The body of POST /api/v1/rules. */
type RuleCreate = paths['/api/v1/rules']['post']['requestBody']['content']['application/json'];

/** The rules the form is written for: the fields its inputs fill. */
export const ORDER_RULES = rules as ReadonlyArray<Omit<RuleCreate, 'context'>>;

export interface FormSetup {
  /** The new `client` key the page uses. */
  clientKey: string;
  /** The service's public signing key (base64 of the raw 32 bytes). */
  publicKey: string;
  /** The ruleset version live in the context afterwards. */
  rulesetVersion: number | null;
}

export async function setUpFormExample(
  options: { serviceUrl: string; tenantId: string; adminKey: string; context: string; origin: string },
): Promise<FormSetup> {
  const admin = createRulesClient({ baseUrl: options.serviceUrl, tenantId: options.tenantId, apiKey: options.adminKey });
  const { context } = options;
  const { data: existing } = await admin.api.GET('/api/v1/rules', { params: { query: { context, limit: '100' } } });
  const codes = new Set(existing?.items.map((rule) => rule.code));
  const missing = ORDER_RULES.filter((rule) => !codes.has(rule.code));
  for (const rule of missing) await admin.api.POST('/api/v1/rules', { body: { ...rule, context } });
  let rulesetVersion: number | null = null;
  if (missing.length > 0) {
    const { data } = await admin.api.POST('/api/v1/contexts/{context}/publish', { params: { path: { context } }, body: { note: 'order form example' } });
    rulesetVersion = data?.rulesetVersion ?? null;
  }
  await admin.api.PUT('/api/v1/contexts/{context}/settings', { params: { path: { context } }, body: { localValidation: true } });
  const { data: tenant } = await admin.api.GET('/api/v1/tenant');
  const origins = new Set([...(tenant?.corsOrigins ?? []), new URL(options.origin).origin]);
  await admin.api.PUT('/api/v1/tenant/cors', { body: { origins: [...origins] } });
  const { data: key } = await admin.api.POST('/api/v1/api-keys', { body: { name: 'order form example', role: 'client' } });
  const { data: signingKey } = await admin.api.GET('/api/v1/signing-key');
  return { clientKey: key?.key ?? '', publicKey: signingKey?.publicKey ?? '', rulesetVersion };
}

if (startedAsScript(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      ...SERVICE_OPTIONS,
      origin: { type: 'string', default: 'http://127.0.0.1:5173' },
      'admin-key': { type: 'string' },
    },
  });
  if (values['admin-key'] === undefined) {
    console.error('usage: setup.ts --admin-key <admin key> [--service URL] [--tenant ID] [--context NAME] [--origin URL]');
    process.exit(2);
  }
  const setup = await setUpFormExample({
    serviceUrl: values.service, tenantId: values.tenant, adminKey: values['admin-key'], context: values.context, origin: values.origin,
  });
  const port = new URL(values.origin).port || '80';
  console.log([
    'node --import tsx examples/form/server.ts', `--service ${values.service}`, `--tenant ${values.tenant}`, `--context ${values.context}`,
    `--key ${setup.clientKey}`, `--public-key ${setup.publicKey}`, `--port ${port}`,
  ].join(' '));
}
