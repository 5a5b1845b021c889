/**
 * What the CLI's tenant, key and contexts commands print, whether they ran
 * on the database (run-command.ts) or against a service with --url
 * (remote-tenant-commands.ts): the same text and the same JSON either way.
 */
import type { ApiKeyRecord, ContextSummary } from '../storage/types.ts';
import type { RateLimit } from './parse-command.ts';
import { formatTable } from './format-table.ts';
import type { CommandOutput } from './run-command.ts';

/** `tenant rate-limit <tenant>`: the budget in force, and whether it is the tenant's own. */
export function rateLimitShown(tenantId: string, limit: RateLimit, own: boolean): CommandOutput {
  const source = own ? 'set for this tenant' : 'the default, RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS';
  return {
    text: `Tenant ${tenantId}: ${limit.max} requests per ${limit.windowMs} ms (${source}).`,
    json: { tenantId, ...limit, override: own },
  };
}

/** `tenant rate-limit <tenant> …`: the budget now in force; `own` false when it was put back on the default. */
export function rateLimitChanged(tenantId: string, limit: RateLimit, own: boolean): CommandOutput {
  const what = own ? 'set to' : 'back to the default,';
  return {
    text: `Tenant ${tenantId}: rate limit ${what} ${limit.max} requests per ${limit.windowMs} ms. ` +
      'Running servers apply it within a few seconds.',
    json: { tenantId, ...limit, override: own },
  };
}

/** `key create`: the record and its secret, shown this once. */
export function keyCreated(record: Pick<ApiKeyRecord, 'id' | 'tenantId' | 'name' | 'role' | 'createdAt'>, key: string): CommandOutput {
  return {
    text: [
      `Created ${record.role} key ${JSON.stringify(record.name)} (id ${record.id}) for tenant ${record.tenantId}.`,
      'The key is shown only this once; store it now:',
      key,
    ].join('\n'),
    json: { id: record.id, tenantId: record.tenantId, name: record.name, role: record.role, key, createdAt: record.createdAt },
  };
}

/** `key revoke`. */
export function keyRevoked(record: ApiKeyRecord): CommandOutput {
  return { text: `Revoked key ${JSON.stringify(record.name)} (id ${record.id}) of tenant ${record.tenantId}.`, json: keyJson(record) };
}

/** `key list`: never secrets (records have none). */
export function keysListed(tenantId: string, keys: readonly ApiKeyRecord[]): CommandOutput {
  const text = keys.length === 0
    ? `Tenant ${tenantId} has no keys.`
    : formatTable(
      ['ID', 'NAME', 'ROLE', 'CREATED', 'LAST USED', 'REVOKED'],
      keys.map((k) => [k.id, k.name, k.role, k.createdAt, k.lastUsedAt ?? '-', k.revokedAt ?? '-']),
    );
  return { text, json: { items: keys.map(keyJson) } };
}

/** `contexts`. */
export function contextsListed(tenantId: string, contexts: readonly ContextSummary[]): CommandOutput {
  const text = contexts.length === 0
    ? `Tenant ${tenantId} has no contexts.`
    : formatTable(
      ['CONTEXT', 'RULESET VERSION', 'DRAFT', 'PUBLISHED', 'ARCHIVED'],
      contexts.map((c) => [
        c.context,
        c.rulesetVersion === null ? '-' : String(c.rulesetVersion),
        String(c.rules.draft),
        String(c.rules.published),
        String(c.rules.archived),
      ]),
    );
  return { text, json: { items: contexts.map(({ context, rulesetVersion, rules }) => ({ context, rulesetVersion, rules })) } };
}

/** A key record as printed, in a fixed field order. */
function keyJson(record: ApiKeyRecord): Record<string, unknown> {
  return {
    id: record.id,
    tenantId: record.tenantId,
    name: record.name,
    role: record.role,
    createdAt: record.createdAt,
    lastUsedAt: record.lastUsedAt,
    revokedAt: record.revokedAt,
  };
}
