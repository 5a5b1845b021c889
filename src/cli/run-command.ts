/**
 * The CLI's commands over the storage API: the same stores, key generation
 * and hashing as the service (`src/auth/api-key.ts`), nothing re-implemented.
 * Each command returns what it prints: text for operators, or a JSON value
 * for scripts (`--json`).
 */
import { generateApiKey, hashApiKey } from '../auth/api-key.ts';
import type { Config } from '../config.ts';
import { isUuid } from '../routes/schemas/route-helpers.ts';
import { ConflictError, NotFoundError, type ApiKeyRecord, type ChangeOrigin, type Storage } from '../storage/types.ts';
import { CommandError } from './cli-errors.ts';
import type { Command } from './parse-command.ts';
import { runFileCommand } from './file-commands.ts';
import { localSigningKey } from './signing-key-command.ts';
import { runImpactCommand } from './impact-command.ts';
import { formatTable } from './format-table.ts';

/** What a command prints. */
export interface CommandOutput {
  text: string;
  json: unknown;
  /** The exit status when not 0 (test: a test failed). */
  exitCode?: number;
}

/** The audit trail's actor for changes made here. */
const AT_THE_CLI: ChangeOrigin = { actor: { cli: true } };

type StorageCommand = Exclude<Command, { kind: 'help' } | { kind: 'migrate' }>;

/**
 * Runs one command that needs the stores.
 *
 * @example
 * const out = await runCommand({ kind: 'tenant-create', tenantId: 'acme' }, storage, config);
 * console.log(out.text); // Tenant acme created.
 */
export async function runCommand(command: StorageCommand, storage: Storage, config: Config): Promise<CommandOutput> {
  switch (command.kind) {
    case 'tenant-create': {
      const created = await storage.tenants.ensureTenant(command.tenantId);
      return {
        text: created ? `Tenant ${command.tenantId} created.` : `Tenant ${command.tenantId} already exists.`,
        json: { tenantId: command.tenantId, created },
      };
    }
    case 'rate-limit-show': {
      await requireTenant(storage, command.tenantId);
      const override = await storage.tenants.getRateLimit(command.tenantId);
      const limit = override ?? { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs };
      const source = override === null ? 'the default, RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS' : 'set for this tenant';
      return {
        text: `Tenant ${command.tenantId}: ${limit.max} requests per ${limit.windowMs} ms (${source}).`,
        json: { tenantId: command.tenantId, ...limit, override: override !== null },
      };
    }
    case 'rate-limit-set': {
      await requireTenant(storage, command.tenantId);
      await storage.tenants.setRateLimit(command.tenantId, command.limit, AT_THE_CLI);
      const limit = command.limit ?? { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs };
      const what = command.limit === null ? 'back to the default,' : 'set to';
      return {
        text: `Tenant ${command.tenantId}: rate limit ${what} ${limit.max} requests per ${limit.windowMs} ms. ` +
          'Running servers apply it within a few seconds.',
        json: { tenantId: command.tenantId, ...limit, override: command.limit !== null },
      };
    }
    case 'key-create': {
      await requireTenant(storage, command.tenantId);
      const key = generateApiKey();
      const record = await storage.apiKeys.create(command.tenantId, command.name, command.role, hashApiKey(key), AT_THE_CLI);
      return {
        text: [
          `Created ${record.role} key ${JSON.stringify(record.name)} (id ${record.id}) for tenant ${record.tenantId}.`,
          'The key is shown only this once; store it now:',
          key,
        ].join('\n'),
        json: { id: record.id, tenantId: record.tenantId, name: record.name, role: record.role, key, createdAt: record.createdAt },
      };
    }
    case 'key-revoke': {
      await requireTenant(storage, command.tenantId);
      const record = await revoke(storage, command.tenantId, command.keyId);
      return {
        text: `Revoked key ${JSON.stringify(record.name)} (id ${record.id}) of tenant ${record.tenantId}.`,
        json: keyJson(record),
      };
    }
    case 'key-list': {
      await requireTenant(storage, command.tenantId);
      const keys = await storage.apiKeys.list(command.tenantId);
      const text = keys.length === 0
        ? `Tenant ${command.tenantId} has no keys.`
        : formatTable(
          ['ID', 'NAME', 'ROLE', 'CREATED', 'LAST USED', 'REVOKED'],
          keys.map((k) => [k.id, k.name, k.role, k.createdAt, k.lastUsedAt ?? '-', k.revokedAt ?? '-']),
        );
      return { text, json: { items: keys.map(keyJson) } };
    }
    case 'contexts': {
      await requireTenant(storage, command.tenantId);
      const contexts = await storage.rules.contexts(command.tenantId);
      const text = contexts.length === 0
        ? `Tenant ${command.tenantId} has no contexts.`
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
      return { text, json: { items: contexts } };
    }
    case 'export':
    case 'import':
    case 'test':
      await requireTenant(storage, command.tenantId);
      return runFileCommand(command, storage, config);
    case 'impact':
      await requireTenant(storage, command.tenantId);
      return runImpactCommand(command, storage, config);
    case 'signing-key':
      return localSigningKey(storage, config);
  }
}

async function requireTenant(storage: Storage, tenantId: string): Promise<void> {
  if (!(await storage.tenants.exists(tenantId))) {
    throw new CommandError(`tenant ${tenantId} does not exist (create it with: tenant create ${tenantId})`);
  }
}

async function revoke(storage: Storage, tenantId: string, keyId: string): Promise<ApiKeyRecord> {
  // Not a UUID: unknown, as the API answers (PostgreSQL would refuse the cast).
  if (!isUuid(keyId)) throw new CommandError(`tenant ${tenantId} has no key ${keyId}`);
  try {
    return await storage.apiKeys.revoke(tenantId, keyId, AT_THE_CLI);
  } catch (error) {
    if (error instanceof NotFoundError) throw new CommandError(`tenant ${tenantId} has no key ${keyId}`);
    if (error instanceof ConflictError) {
      throw new CommandError(`key ${keyId} is the last active admin key of tenant ${tenantId}; create another admin key first`);
    }
    throw error;
  }
}

/** A key record as printed: the stored record has no secret (the hash is not part of it). */
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
