/**
 * Shared setup of the storage tests: a migrated Storage on a fresh
 * database, and rule content with the defaults of docs/rule-language.md.
 */
import { createStorage } from '../../src/storage/create-storage.ts';
import type { LiveRuleset, RuleContent, Storage } from '../../src/storage/types.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

/** A rule body with section 2's defaults; `overrides` replaces fields. */
export function content(overrides: Partial<RuleContent> = {}): RuleContent {
  return {
    name: 'Amount is positive',
    severity: 'Error',
    required: false,
    expression: 'amount > 0',
    fieldPath: 'amount',
    priority: 0,
    enabled: true,
    tags: [],
    ...overrides,
  };
}

/** A beforeCommit that accepts every ruleset and hands it back. */
export const accept = (next: LiveRuleset): LiveRuleset => next;

/** Large enough never to limit a test that is not about the limit. */
export const NO_LIMIT = 5000;

/** A migrated storage on a fresh database, with tenants `acme` and `globex`. */
export async function openTestStorage(): Promise<{ storage: Storage; database: FreshDatabase; close: () => Promise<void> }> {
  const database = await freshDatabase();
  const storage = await createStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
  await storage.tenants.ensureTenant('acme');
  await storage.tenants.ensureTenant('globex');
  return {
    storage,
    database,
    async close() {
      await storage.close();
      await database.drop();
    },
  };
}

/** Codes and expressions of a ruleset, for compact assertions. */
export function summarize(ruleset: LiveRuleset | null): Record<string, string | undefined> | null {
  if (ruleset === null) return null;
  return Object.fromEntries(ruleset.rules.map((r) => [r.code, r.expression]));
}
