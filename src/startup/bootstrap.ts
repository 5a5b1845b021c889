/**
 * RULES_BOOTSTRAP_TENANTS (docs/operations.md, "Security"): at every start,
 * each configured tenant exists and its configured admin key is registered.
 * It creates what is missing and changes nothing else: a configured key
 * revoked since (through the API or the CLI) stays revoked, and the log
 * says so. Idempotent, so every instance of a fleet may run it.
 */
import { hashApiKey } from '../auth/api-key.ts';
import type { BootstrapTenant } from '../config.ts';
import { ConflictError, type ApiKeyRecord, type EnsuredApiKey, type Storage } from '../storage/types.ts';

/** Name given to keys created from configuration. */
export const BOOTSTRAP_KEY_NAME = 'bootstrap admin';

/** What bootstrap found and did for one configured tenant. */
export interface BootstrapOutcome {
  tenantId: string;
  tenantCreated: boolean;
  /** The configured key as it is now. */
  key: ApiKeyRecord;
  keyOutcome: EnsuredApiKey['outcome'];
}

/** Where bootstrap says what it did; a pino logger or the cluster primary's. */
export interface BootstrapLog {
  info(o: object, msg?: string): void;
  warn(o: object, msg?: string): void;
}

/**
 * Ensures the tenants and their admin keys, and says what it did in `log`
 * when one is given: one line for all, and a warning for each configured
 * key left revoked (never the key itself).
 *
 * @example
 * await bootstrapTenants(storage, config.bootstrapTenants ?? [], app.log);
 */
export async function bootstrapTenants(storage: Storage, tenants: readonly BootstrapTenant[], log?: BootstrapLog): Promise<BootstrapOutcome[]> {
  const outcomes: BootstrapOutcome[] = [];
  for (const { tenantId, adminKey } of tenants) {
    const tenantCreated = await storage.tenants.ensureTenant(tenantId);
    let ensured: EnsuredApiKey;
    try {
      ensured = await storage.apiKeys.ensure(tenantId, BOOTSTRAP_KEY_NAME, 'admin', hashApiKey(adminKey));
    } catch (error) {
      // The key was registered for another tenant, by an earlier configuration or the CLI.
      if (!(error instanceof ConflictError)) throw error;
      throw new Error(`RULES_BOOTSTRAP_TENANTS: the key of tenant ${tenantId} is already registered for another tenant; give each tenant its own`, { cause: error });
    }
    outcomes.push({ tenantId, tenantCreated, key: ensured.key, keyOutcome: ensured.outcome });
  }
  if (log !== undefined) logOutcomes(log, outcomes);
  return outcomes;
}

function logOutcomes(log: BootstrapLog, outcomes: readonly BootstrapOutcome[]): void {
  for (const { tenantId, key, keyOutcome } of outcomes) {
    if (keyOutcome !== 'revoked') continue;
    log.warn(
      { tenant: tenantId, keyId: key.id, revokedAt: key.revokedAt },
      'the admin key RULES_BOOTSTRAP_TENANTS gives this tenant was revoked; left revoked: remove it from the variable, or configure a new key',
    );
  }
  log.info({
    tenants: outcomes.map((outcome) => outcome.tenantId),
    tenantsCreated: outcomes.filter((outcome) => outcome.tenantCreated).map((outcome) => outcome.tenantId),
    keysCreated: outcomes.filter((outcome) => outcome.keyOutcome === 'created').map((outcome) => outcome.tenantId),
    keysLeftRevoked: outcomes.filter((outcome) => outcome.keyOutcome === 'revoked').map((outcome) => outcome.tenantId),
  }, 'bootstrap tenants ensured');
}
