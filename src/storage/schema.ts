/**
 * Row types of the tables created by migrations/, as kysely sees them.
 * Columns with database defaults are Generated; timestamps come back as
 * Date from both pg and PGlite.
 */
import type { ColumnType, Generated } from 'kysely';
import type { AuditActor, StoredTest } from './types.ts';

type Timestamp = ColumnType<Date, Date, Date>;
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;

export interface TenantsTable {
  id: string;
  rate_limit_max: number | null;
  rate_limit_window_ms: number | null;
  /** Share of validations recorded as samples; 0 (the default) is off. */
  sampling_rate: Generated<number>;
  sampling_max_samples: number | null;
  sampling_retention_hours: number | null;
  /** The last DELETE /tenant/samples: samples recorded at or before it are never stored. */
  samples_purged_at: NullableTimestamp;
  /** The sum of the tenant's samples' stored_bytes, kept with every change of its samples. */
  samples_bytes: ColumnType<string, never, string>;
  /** Browser origins allowed on the local-evaluation routes (CORS): a JSON array of strings. */
  cors_origins: ColumnType<string[], string | undefined, string>;
  created_at: Generated<Date>;
}

export interface ApiKeysTable {
  tenant_id: string;
  id: string;
  name: string;
  role: 'admin' | 'validator' | 'client';
  key_hash: string;
  created_at: Timestamp;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
}

export interface RulesTable {
  tenant_id: string;
  id: string;
  context: string;
  code: string;
  version: number;
  published_version: number | null;
  archived_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  published_at: NullableTimestamp;
}

export interface RuleVersionsTable {
  tenant_id: string;
  rule_id: string;
  version: number;
  /** A RuleContent, stored as json (key order kept). Written as a JSON string. */
  content: ColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
  published_at: NullableTimestamp;
}

export interface ContextsTable {
  tenant_id: string;
  context: string;
  ruleset_version: number | null;
  created_at: Generated<Date>;
  published_at: NullableTimestamp;
  /** Whether the context is served for local evaluation (client keys, the change feed). */
  local_validation: Generated<boolean>;
}

/** One live rule of a ruleset version. */
export interface RulesetMember {
  ruleId: string;
  version: number;
}

/** What made a ruleset version. */
export type RulesetAction = 'publish' | 'archive' | 'rollback' | 'import';

export interface RulesetVersionsTable {
  tenant_id: string;
  context: string;
  ruleset_version: number;
  members: ColumnType<RulesetMember[], string, string>;
  created_at: Timestamp;
  action: RulesetAction;
  /** The caller's note (publish, rollback, import); null when none was given. */
  note: string | null;
  /** The API key that made the version; null for the CLI, startup seeding, and versions older than this column. */
  actor_key_id: string | null;
  /** That key's name when it made the version. */
  actor_key_name: string | null;
}

/** When a context was last used for validation, by any instance (warm start). */
export interface ContextUsageTable {
  tenant_id: string;
  context: string;
  last_used_at: Timestamp;
}

/** The stored test cases of a context (the whole list in one row). */
export interface ContextTestsTable {
  tenant_id: string;
  context: string;
  tests: ColumnType<StoredTest[], string, string>;
  updated_at: Timestamp;
}

/** One change, as the audit trail keeps it (only ever inserted). */
export interface AuditLogTable {
  /** Internal row key, shared by all tenants: never shown (see `seq`). */
  id: Generated<string>;
  tenant_id: string;
  /** The entry's number within its tenant (1, 2, 3... in commit order): its id as GET /audit shows it. */
  seq: ColumnType<string, string, never>;
  at: Generated<Date>;
  action: string;
  actor: ColumnType<AuditActor, string, string>;
  context: string | null;
  target: string | null;
  before: ColumnType<unknown, string | null, string | null>;
  after: ColumnType<unknown, string | null, string | null>;
  note: string | null;
  request_id: string | null;
}

/** A context's payload schema (JSON Schema), read by the save-time warnings only. */
export interface PayloadSchemasTable {
  tenant_id: string;
  context: string;
  /** The schema as sent (key order kept). Written as a JSON string. */
  schema: ColumnType<unknown, string, string>;
  /** A fresh uuid with every write: what a cached parsed copy is checked against. */
  revision: string;
  updated_at: Timestamp;
}

/** One recorded validation (sampled traffic), kept for impact reports. */
export interface SamplesTable {
  id: Generated<string>;
  tenant_id: string;
  context: string;
  recorded_at: Timestamp;
  ruleset_version: number;
  is_valid: boolean;
  /** The failing rule codes, in the order the validation reported them. Written as a JSON string. */
  failures: ColumnType<string[], string, string>;
  /** The payload as validated (key order kept). Written as a JSON string. */
  payload: ColumnType<unknown, string, string>;
  /** UTF-8 bytes of the payload's and failures' JSON text, as stored. */
  stored_bytes: number;
}

/** Each tenant's last audit entry number (audit_log.seq). */
export interface AuditSequencesTable {
  tenant_id: string;
  last_seq: ColumnType<string, string, string>;
}

/** The whole schema. */
/** The service's own Ed25519 key pair, when operators configure none: one row at most. */
export interface SigningKeysTable {
  slot: number;
  key_id: string;
  private_key_pem: string;
  public_key_pem: string;
  created_at: Generated<Date>;
}

export interface DatabaseSchema {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  rules: RulesTable;
  rule_versions: RuleVersionsTable;
  contexts: ContextsTable;
  ruleset_versions: RulesetVersionsTable;
  context_usage: ContextUsageTable;
  context_tests: ContextTestsTable;
  audit_log: AuditLogTable;
  audit_sequences: AuditSequencesTable;
  payload_schemas: PayloadSchemasTable;
  samples: SamplesTable;
  signing_keys: SigningKeysTable;
}
