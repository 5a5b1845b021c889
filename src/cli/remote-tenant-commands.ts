/**
 * The tenant's rate limit, keys and contexts against a running service
 * (`--url`): the API routes that make the same changes as the CLI on the
 * database (docs/api.md, "API keys" and "Tenant settings"), as the
 * tenant's admin key, audited as that key. Printed as on the database
 * (tenant-output.ts).
 */
import type { ApiKeyRecord, ContextSummary, Role } from '../storage/types.ts';
import { CommandError } from './cli-errors.ts';
import type { Command, RateLimit } from './parse-command.ts';
import type { CommandOutput } from './run-command.ts';
import { request, type Remote } from './service-request.ts';
import { contextsListed, keyCreated, keyRevoked, keysListed, rateLimitChanged, rateLimitShown } from './tenant-output.ts';

export type RemoteTenantCommand = Extract<Command, { kind: 'rate-limit-show' | 'rate-limit-set' | 'key-create' | 'key-revoke' | 'key-list' | 'contexts' }>;

/** GET /tenant/… and PUT /tenant/rate-limit answer the budget so. */
type TenantRateLimit = RateLimit & { default: boolean };

/** GET /api-keys answers records without the tenant (it is the caller's). */
type ListedKey = Omit<ApiKeyRecord, 'tenantId'>;

/** Runs a tenant, key or contexts command through the service at `remote.url`. */
export async function runRemoteTenantCommand(command: RemoteTenantCommand, remote: Remote): Promise<CommandOutput> {
  const { tenantId } = command;
  switch (command.kind) {
    case 'rate-limit-show': {
      const { rateLimit } = await request<{ rateLimit: TenantRateLimit }>(remote, tenantId, 'GET', '/api/v1/tenant');
      return rateLimitShown(tenantId, budgetOf(rateLimit), !rateLimit.default);
    }
    case 'rate-limit-set': {
      const body = command.limit === null ? { default: true } : command.limit;
      const now = await request<TenantRateLimit>(remote, tenantId, 'PUT', '/api/v1/tenant/rate-limit', body);
      return rateLimitChanged(tenantId, budgetOf(now), !now.default);
    }
    case 'key-create': {
      const created = await request<{ id: string; name: string; role: Role; key: string; createdAt: string }>(
        remote, tenantId, 'POST', '/api/v1/api-keys', { name: command.name, role: command.role },
      );
      return keyCreated({ ...created, tenantId }, created.key);
    }
    case 'key-revoke': {
      // DELETE answers 204 without the record; the listing names the key.
      const record = (await keys(remote, tenantId)).find((key) => key.id === command.keyId);
      if (record === undefined) throw new CommandError(`tenant ${tenantId} has no key ${command.keyId}`);
      await request<null>(remote, tenantId, 'DELETE', `/api/v1/api-keys/${encodeURIComponent(command.keyId)}`);
      const revoked = (await keys(remote, tenantId)).find((key) => key.id === command.keyId) ?? record;
      return keyRevoked(revoked);
    }
    case 'key-list':
      return keysListed(tenantId, await keys(remote, tenantId));
    case 'contexts': {
      const { items } = await request<{ items: ContextSummary[] }>(remote, tenantId, 'GET', '/api/v1/contexts');
      return contextsListed(tenantId, items);
    }
  }
}

async function keys(remote: Remote, tenantId: string): Promise<ApiKeyRecord[]> {
  const { items } = await request<{ items: ListedKey[] }>(remote, tenantId, 'GET', '/api/v1/api-keys');
  return items.map((key) => ({ ...key, tenantId }));
}

function budgetOf(answer: TenantRateLimit): RateLimit {
  return { max: answer.max, windowMs: answer.windowMs };
}
