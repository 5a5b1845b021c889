/**
 * Every migration, by name. Listed statically rather than read from the
 * folder so the set is the same under tsx, vitest and any bundler; names
 * sort in the order they must run.
 */
import type { Migration } from 'kysely';
import * as initialSchema from './2025-06-01-initial-schema.ts';
import * as contextUsage from './2026-11-27-context-usage.ts';
import * as auditLog from './2026-11-28-audit-log.ts';
import * as contextTests from './2026-11-28-context-tests.ts';
import * as rulesetHistory from './2026-11-28-ruleset-history.ts';
import * as payloadSchemas from './2026-11-28-payload-schemas.ts';
import * as samples from './2026-11-29-samples.ts';
import * as samplesPurgedAt from './2026-11-30-samples-purged-at.ts';
import * as auditPerTenantIds from './2026-12-01-audit-per-tenant-ids.ts';
import * as sampleBytes from './2026-12-01-sample-bytes.ts';
import * as localEvaluation from './2026-12-02-local-evaluation.ts';

/** Migrations keyed by their date-prefixed name. */
export const migrations: Record<string, Migration> = {
  '2025-06-01-initial-schema': initialSchema,
  '2026-11-27-context-usage': contextUsage,
  '2026-11-28-audit-log': auditLog,
  '2026-11-28-context-tests': contextTests,
  '2026-11-28-ruleset-history': rulesetHistory,
  '2026-11-28-payload-schemas': payloadSchemas,
  '2026-11-29-samples': samples,
  '2026-11-30-samples-purged-at': samplesPurgedAt,
  '2026-12-01-audit-per-tenant-ids': auditPerTenantIds,
  '2026-12-01-sample-bytes': sampleBytes,
  '2026-12-02-local-evaluation': localEvaluation,
};
