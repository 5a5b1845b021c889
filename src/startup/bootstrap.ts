/**
 * RULES_BOOTSTRAP_TENANTS (docs/api.md): at every start, each configured
 * tenant exists and holds its configured admin key. Idempotent, so every
 * instance of a fleet may run it.
 */
import { hashApiKey } from '../auth/api-key.ts';
import type { BootstrapTenant } from '../config.ts';
import { ConflictError, type Storage } from '../storage/types.ts';

/** Name given to keys created from configuration. */
export const BOOTSTRAP_KEY_NAME = 'bootstrap admin';

/**
 * Ensures the tenants and their admin keys.
 *
 * @example
 * await bootstrapTenants(storage, config.bootstrapTenants ?? []);
 */
export async function bootstrapTenants(storage: Storage, tenants: readonly BootstrapTenant[]): Promise<void> {
  for (const { tenantId, adminKey } of tenants) {
    await storage.tenants.ensureTenant(tenantId);
    try {
      await storage.apiKeys.ensure(tenantId, BOOTSTRAP_KEY_NAME, 'admin', hashApiKey(adminKey));
    } catch (error) {
      // The key was registered for another tenant, by an earlier configuration or the CLI.
      if (!(error instanceof ConflictError)) throw error;
      throw new Error(`RULES_BOOTSTRAP_TENANTS: the key of tenant ${tenantId} is already registered for another tenant; give each tenant its own`, { cause: error });
    }
  }
}
