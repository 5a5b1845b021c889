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
import type { Command, RateLimit } from './parse-command.ts';
import { benchContext } from './bench-command.ts';
import { runFileCommand } from './file-commands.ts';
import { localSigningKey } from './signing-key-command.ts';
import { runTableCommand } from './table-commands.ts';
import { runImpactCommand } from './impact-command.ts';
import { contextsListed, keyCreated, keyRevoked, keysListed, rateLimitChanged, rateLimitShown } from './tenant-output.ts';

/** What a command prints. */
export interface CommandOutput {
  text: string;
  json: unknown;
  /** The exit status when not 0 (test: a test failed, or the file does not compile). */
  exitCode?: number;
  /** Print `text` as it is, with no line break added: a CSV ends with its own. */
  verbatim?: boolean;
}

/** The audit trail's actor for changes made here. */
const AT_THE_CLI: ChangeOrigin = { actor: { cli: true } };

type StorageCommand = Exclude<Command, { kind: 'help' } | { kind: 'migrate' } | { kind: 'test' } | { kind: 'bench' }>;

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
      const own = await storage.tenants.getRateLimit(command.tenantId);
      return rateLimitShown(command.tenantId, own ?? defaultRateLimit(config), own !== null);
    }
    case 'rate-limit-set':
      await requireTenant(storage, command.tenantId);
      await storage.tenants.setRateLimit(command.tenantId, command.limit, AT_THE_CLI);
      return rateLimitChanged(command.tenantId, command.limit ?? defaultRateLimit(config), command.limit !== null);
    case 'key-create': {
      await requireTenant(storage, command.tenantId);
      const key = generateApiKey();
      return keyCreated(await storage.apiKeys.create(command.tenantId, command.name, command.role, hashApiKey(key), AT_THE_CLI), key);
    }
    case 'key-revoke':
      await requireTenant(storage, command.tenantId);
      return keyRevoked(await revoke(storage, command.tenantId, command.keyId));
    case 'key-list':
      await requireTenant(storage, command.tenantId);
      return keysListed(command.tenantId, await storage.apiKeys.list(command.tenantId));
    case 'contexts':
      await requireTenant(storage, command.tenantId);
      return contextsListed(command.tenantId, await storage.rules.contexts(command.tenantId));
    case 'export':
    case 'import':
    case 'test-drafts':
      await requireTenant(storage, command.tenantId);
      return runFileCommand(command, storage, config);
    case 'impact':
      await requireTenant(storage, command.tenantId);
      return runImpactCommand(command, storage, config);
    case 'bench-context':
      await requireTenant(storage, command.tenantId);
      return benchContext(command, storage, config);
    case 'signing-key':
      return localSigningKey(storage, config);
    case 'table-export':
    case 'table-import':
      await requireTenant(storage, command.tenantId);
      return runTableCommand(command, storage, config);
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

function defaultRateLimit(config: Config): RateLimit {
  return { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs };
}
