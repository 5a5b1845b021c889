/**
 * The storage contract between the HTTP layer and the database. Every
 * operation is scoped by tenant: an id of another tenant behaves exactly as
 * an unknown id (null / NotFoundError), never as a permission error.
 *
 * Lifecycle rules: docs/api.md.
 */
import type { RuleContent, RuleDefinition } from '../../compiler/rule-schema.ts';

export type RuleStatus = 'draft' | 'published' | 'archived';
export type Role = 'admin' | 'validator' | 'client';

/** The editable content of a rule, what a version stores: derived from the rule's schema. */
export type { RuleContent };

/** The rule resource of docs/rule-language.md, as the API returns it. */
export interface Rule extends RuleContent {
  id: string;
  context: string;
  code: string;
  status: RuleStatus;
  version: number;
  publishedVersion: number | null;
  createdAt: string;
  updatedAt: string;
  publishedAt: string | null;
}

export interface RuleVersion extends RuleContent {
  version: number;
  createdAt: string;
  /** When this version was last made live; null if never. */
  publishedAt: string | null;
}

/** The live rules of one context at one ruleset version. */
export interface LiveRuleset {
  tenantId: string;
  context: string;
  rulesetVersion: number;
  /** Live content of each live rule, as the compiler takes it. */
  rules: RuleDefinition[];
  /**
   * A digest of the rule versions `rules` were read from (ids and versions,
   * in order), when storage read them for a change: a rule version's
   * content never changes, so equal digests mean equal rules.
   */
  versionsDigest?: string;
}

export interface ContextSummary {
  context: string;
  /** null when nothing was ever published in the context. */
  rulesetVersion: number | null;
  rules: { draft: number; published: number; archived: number };
}

/** A context of a tenant. */
export interface ContextRef {
  tenantId: string;
  context: string;
}

/** A context with its current ruleset version (the consistency safety net). */
export interface ContextVersion extends ContextRef {
  rulesetVersion: number;
}

/** A key as authentication caches it (the consistency safety net). */
export interface KeyRef {
  tenantId: string;
  keyId: string;
}

/** The codes a new ruleset version added, changed (live content differs) and removed, compared with the one before it. */
export interface RulesetChanges {
  added: string[];
  changed: string[];
  removed: string[];
  /** Present when the rows of a changed rule's decision table changed: each row, with its rule's code. */
  tableRows?: Array<{ code: string; change: 'added' | 'removed' | 'changed' | 'moved'; path: string; fromPath?: string }>;
}

export interface PublishResult {
  context: string;
  rulesetVersion: number;
  /** Ids of the rules whose new version went live. */
  published: string[];
  /** What the new ruleset version changed, by code; all empty when nothing was published. */
  changes: RulesetChanges;
}

/** What made a ruleset version. */
export type RulesetAction = 'publish' | 'archive' | 'rollback' | 'import';

/** The API key that made a change. */
export interface Actor {
  keyId: string;
  keyName: string;
}

/**
 * Who makes a change of what is live, and why: recorded with the ruleset
 * version it makes. `actorKeyId` is null when no API key is involved (the
 * CLI, startup seeding).
 */
export interface ChangeInfo {
  actorKeyId: string | null;
  note: string | null;
  /** Where the change came from, for its audit entry; none for changes that are not audited (startup seeding). */
  origin?: ChangeOrigin;
}

/** How an edit of a rule's content is audited: a PUT or a PATCH, and by whom. */
export interface RuleEditAudit {
  origin: ChangeOrigin;
  action: 'rule.update' | 'rule.patch';
}

/** No actor, no note: changes made by the service itself or the CLI. */
export const NO_CHANGE_INFO: ChangeInfo = { actorKeyId: null, note: null };

/** One entry of a context's history. */
export interface RulesetVersionSummary {
  rulesetVersion: number;
  action: RulesetAction;
  note: string | null;
  /** How many rules were live in the version. */
  rules: number;
  createdAt: string;
  actor: Actor | null;
}

/** A rule as a POST takes it: its context, its code and its content. */
export type RuleSnapshot = { context: string; code: string } & RuleContent;

/** Which ruleset a history read means: a ruleset version, the live one, or what a context publish would make live. */
export type RulesetRef = number | 'live' | 'draft';

/** The rules of a ruleset, by code; rulesetVersion null for a draft that is not a version yet, or a context never published. */
export interface RulesetSnapshot {
  rulesetVersion: number | null;
  rules: RuleSnapshot[];
}

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  name: string;
  role: Role;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface ListRulesQuery {
  context?: string;
  /** 'all' includes archived; undefined means all but archived. */
  status?: RuleStatus | 'all';
  tag?: string;
  limit: number;
  cursor?: string;
}

/**
 * Called inside the database transaction of a publish, archive or rollback
 * with the ruleset that is about to go live. It compiles it; throwing
 * aborts the transaction so nothing goes live. What it returns is handed
 * back to the caller of the operation (the compiled validator, to install
 * in the cache before the call returns).
 */
export type BeforeCommit<T> = ((next: LiveRuleset) => T | Promise<T>) & {
  /**
   * The ruleset an earlier run of the same operation handed to its
   * beforeCommit (validators/early-compile.ts): when the rule versions
   * going live are exactly those it was read from (`versionsDigest`),
   * storage hands over its rules rather than reading every rule's content
   * again. A wrapper of a beforeCommit passes it on, or the rules are read again.
   */
  readonly readBefore?: LiveRuleset;
};

/**
 * Errors with which storage operations refuse, each with a stable code; the
 * HTTP layer maps them (http/problem-mapping.ts). The subclasses name
 * situations a client meets often enough to read the same everywhere.
 */
export class NotFoundError extends Error {
  readonly code: string = 'NOT_FOUND';
}
/** No rule of the tenant has this id. */
export class RuleNotFoundError extends NotFoundError {
  override readonly code = 'RULE_NOT_FOUND';
  constructor() {
    super('rule not found');
  }
}
/** No API key of the tenant has this id. */
export class ApiKeyNotFoundError extends NotFoundError {
  override readonly code = 'API_KEY_NOT_FOUND';
  constructor() {
    super('API key not found');
  }
}
/** The context has no such ruleset version. */
export class RulesetVersionNotFoundError extends NotFoundError {
  constructor(readonly context: string, readonly rulesetVersion: number) {
    super(`context "${context}" has no ruleset version ${rulesetVersion}`);
  }
}

/** The context has no rules (none, or only archived ones that never went live). */
export class ContextNotFoundError extends NotFoundError {
  override readonly code = 'CONTEXT_NOT_FOUND';
  constructor(readonly context: string) {
    super(`context "${context}" has no rules`);
  }
}
export class ConflictError extends Error {
  readonly code: string = 'CONFLICT';
}
/** The rule is archived: it can be neither edited nor published. */
export class RuleArchivedError extends ConflictError {
  override readonly code = 'RULE_ARCHIVED';
  constructor() {
    super('the rule is archived');
  }
}
/** A change based on a version of the rule that is no longer its latest. */
export class StaleVersionError extends ConflictError {
  override readonly code = 'STALE_VERSION';
  constructor(readonly currentVersion: number, readonly basedOnVersion: number) {
    super(`the rule is at version ${currentVersion}, not ${basedOnVersion}`);
  }
}
export class LimitExceededError extends Error {
  readonly code = 'LIMIT_EXCEEDED';
}
/** A value the caller sent is wrong in a way only storage can tell (e.g. PUT with a different code). */
export class InvalidInputError extends Error {
  readonly code = 'INVALID_BODY';
  constructor(message: string, readonly path: string) {
    super(message);
  }
}
/** The database cannot be reached. */
export class UnavailableError extends Error {
  readonly code = 'SERVICE_UNAVAILABLE';
}

export interface TenantStore {
  /** Creates the tenant if missing. Returns true when it was created. */
  ensureTenant(tenantId: string): Promise<boolean>;
  exists(tenantId: string): Promise<boolean>;
  /** Per-tenant rate limit override (null: the default). */
  getRateLimit(tenantId: string): Promise<{ max: number; windowMs: number } | null>;
  setRateLimit(tenantId: string, limit: { max: number; windowMs: number } | null, origin?: ChangeOrigin): Promise<void>;
  /** The tenant's sampling settings; off with the default bounds when never set (or for an unknown tenant). */
  getSampling(tenantId: string): Promise<SamplingSettings>;
  /** Replaces the sampling settings; a tenant change notice and the `tenant.sampling` audit entry go in the same transaction. */
  setSampling(tenantId: string, settings: SamplingSettings, origin?: ChangeOrigin): Promise<void>;
  /**
   * What the request path needs of the tenant's settings, in one read: its own
   * rate-limit budget (null: the default) and its sampling rate.
   */
  getPolicy(tenantId: string): Promise<TenantPolicySettings>;
  /** The browser origins allowed on the local-evaluation routes; empty when never set (or for an unknown tenant). */
  getCorsOrigins(tenantId: string): Promise<string[]>;
  /** Replaces them; a tenant change notice and the `tenant.cors` audit entry go in the same transaction. */
  setCorsOrigins(tenantId: string, origins: readonly string[], origin?: ChangeOrigin): Promise<void>;
  /** True when the database holds no tenant at all (first run). */
  isEmpty(): Promise<boolean>;
}

/** What ApiKeyStore.ensure found and did. */
export interface EnsuredApiKey {
  key: ApiKeyRecord;
  /** `created`: there was none; `active`: it was there, active (with the role now); `revoked`: it was revoked and stays so. */
  outcome: 'created' | 'active' | 'revoked';
}

export interface ApiKeyStore {
  /** Stores the key's SHA-256 hash (hex), never the key. */
  create(tenantId: string, name: string, role: Role, keyHash: string, origin?: ChangeOrigin): Promise<ApiKeyRecord>;
  /**
   * Idempotent (bootstrap): creates the key when no key has this hash, gives
   * an active one the role, and leaves a revoked one revoked: a revocation
   * is never undone. ConflictError when the hash is another tenant's.
   */
  ensure(tenantId: string, name: string, role: Role, keyHash: string): Promise<EnsuredApiKey>;
  /** The active (not revoked) key with this hash, or null. */
  findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  list(tenantId: string): Promise<ApiKeyRecord[]>;
  /** Revokes; idempotent. NotFoundError for unknown ids; ConflictError for the last active admin key. */
  revoke(tenantId: string, keyId: string, origin?: ChangeOrigin): Promise<ApiKeyRecord>;
  /** Records last use, batched by the caller (never on the hot path). */
  touch(usedAt: Map<string, Date>): Promise<void>;
  /** The keys among these that are still active, with their current role (one query per thousand keys). */
  activeAmong(keys: readonly KeyRef[]): Promise<Array<KeyRef & { role: Role }>>;
}

export interface RuleStore {
  /** status draft, version 1. ConflictError when the code is taken by a non-archived rule of the context; LimitExceededError past maxRulesPerContext. */
  create(tenantId: string, context: string, code: string, content: RuleContent, maxRulesPerContext: number, origin?: ChangeOrigin): Promise<Rule>;
  get(tenantId: string, id: string): Promise<Rule | null>;
  list(tenantId: string, query: ListRulesQuery): Promise<Page<Rule>>;
  /** New version with this content. ConflictError when `basedOnVersion` is stale or the rule is archived. */
  update(tenantId: string, id: string, basedOnVersion: number, content: RuleContent, audit?: RuleEditAudit): Promise<Rule>;
  versions(tenantId: string, id: string): Promise<RuleVersion[] | null>;
  /**
   * An archived rule becomes a draft again, with a new version copying its archived content (the history stays whole).
   * ConflictError when the rule is not archived or its code is taken by a non-archived rule of the context;
   * LimitExceededError when the context already has maxRulesPerContext non-archived rules.
   */
  restore(tenantId: string, id: string, maxRulesPerContext: number, origin?: ChangeOrigin): Promise<Rule>;
  /**
   * Archive (DELETE). Idempotent. If the rule was live, the ruleset version rises (action `archive`, recorded with `info`)
   * and beforeCommit sees the new ruleset.
   */
  archive<T>(tenantId: string, id: string, beforeCommit: BeforeCommit<T>, info?: ChangeInfo): Promise<{ rule: Rule; live?: T }>;
  /** Make the rule's latest version live. ConflictError when already live or archived. `info` goes with the new ruleset version. */
  publishRule<T>(
    tenantId: string, id: string, beforeCommit: BeforeCommit<T>, info?: ChangeInfo,
  ): Promise<{ rule: Rule; result: PublishResult; live: T }>;
  /** Publish every draft of the context atomically. NotFoundError when the context has no rules. With no drafts: published [] and live undefined. */
  publishContext<T>(tenantId: string, context: string, beforeCommit: BeforeCommit<T>, info?: ChangeInfo): Promise<{ result: PublishResult; live?: T }>;
  /**
   * Make ruleset version N live again (docs/api.md). NotFoundError: unknown version; ConflictError: the current one, or a
   * code clash; LimitExceededError when the rules it revives would leave the context with more than maxRulesPerContext.
   */
  rollback<T>(
    tenantId: string, context: string, rulesetVersion: number, maxRulesPerContext: number, beforeCommit: BeforeCommit<T>,
    info?: ChangeInfo,
  ): Promise<{ result: PublishResult; live: T }>;
  /**
   * Makes the context's drafts equal to a rules file, in one transaction
   * with its payload schema, tests, audit entry and (with `publish`) the
   * publish; beforeCommit is called when the live ruleset changes (a
   * publish, or pruning a live rule). LimitExceededError past
   * maxRulesPerContext. The file is compared with the context's rules in
   * the transaction (`plan`), or was compared on a management thread
   * (`prepared`, a real import only): then StaleImportBaseError, and
   * nothing written, when the rules it was compared with are no longer the
   * context's.
   */
  importContext<T>(
    tenantId: string, context: string, source: ImportSource, options: ImportOptions, beforeCommit: BeforeCommit<T>, info?: ChangeInfo,
  ): Promise<{ result: ImportResult; live?: T }>;
  /** What validation evaluates now; null when the context has no ruleset version. */
  liveRuleset(tenantId: string, context: string): Promise<LiveRuleset | null>;
  /** The ruleset as it would be after a context publish (drafts applied), for POST /rules/test. Null when the context has no rules. */
  draftRuleset(tenantId: string, context: string): Promise<LiveRuleset | null>;
  /** liveRuleset or draftRuleset ('live', 'draft'), the rules left as JSON text for a management thread to parse. */
  rulesetText(tenantId: string, context: string, mode: 'live' | 'draft'): Promise<RulesetText | null>;
  /** What an import's dry run compares a file with, in one snapshot, the rules as JSON text. */
  importBaseText(tenantId: string, context: string): Promise<ImportBaseText>;
  /** Current ruleset version per context of the tenant, for the consistency safety net. */
  rulesetVersions(tenantId: string): Promise<Map<string, number>>;
  /** Current ruleset versions of many contexts of any tenants in one query; contexts without one are left out. */
  rulesetVersionsOf(contexts: readonly ContextRef[]): Promise<ContextVersion[]>;
  contexts(tenantId: string): Promise<ContextSummary[]>;
}

/** The history of each context's ruleset versions, for reading. */
export interface ContextHistoryStore {
  /**
   * The context's ruleset versions, newest first, a page at a time (`cursor` from the previous page's nextCursor).
   * ContextNotFoundError for an unknown context; InvalidInputError (path `cursor`) for a cursor this store did not make.
   */
  versions(tenantId: string, context: string, page: { limit: number; cursor?: string }): Promise<Page<RulesetVersionSummary>>;
  /**
   * The rules of each ruleset named, read in one snapshot, in the order asked. `live` of a context never published is
   * empty. ContextNotFoundError for an unknown context; RulesetVersionNotFoundError for a version it does not have.
   */
  rulesets(tenantId: string, context: string, refs: readonly RulesetRef[]): Promise<RulesetSnapshot[]>;
}

/** When contexts were last used, so that a starting process compiles the likely ones first (warm start). */
export interface ContextUsageStore {
  /** Records that these contexts were used at `usedAt`, keeping a later time already recorded; batched by the caller, never on the hot path. */
  recordUse(contexts: readonly ContextRef[], usedAt: Date): Promise<void>;
  /**
   * Up to `limit` contexts of any tenant that have a ruleset version: the
   * most recently used first, then those never used, newest publish first.
   */
  likelyUsed(limit: number): Promise<ContextRef[]>;
}

/** A stored test case of a context: a payload and the answer it must get. */
export interface StoredTest {
  name: string;
  payload: Record<string, unknown>;
  expect: {
    isValid: boolean;
    /** When given, exactly the set of rule codes that must fail. */
    failures?: string[];
  };
}

/** The stored test cases of each context, replaced and read as a whole. */
export interface ContextTestStore {
  /** The context's tests, in the order they were stored; [] when it has none. */
  list(tenantId: string, context: string): Promise<StoredTest[]>;
  /** The same, as the JSON text stored (`[]` when none), for a management thread to parse. */
  listText(tenantId: string, context: string): Promise<string>;
  /** Replaces the context's tests ([] removes them). */
  replace(tenantId: string, context: string, tests: StoredTest[], origin?: ChangeOrigin): Promise<void>;
}

/** Who made a change: an API key, or an operator at the CLI. */
export type AuditActor = { keyId: string; keyName: string; role: Role } | { cli: true };

/** Where a change came from, given to a store method that writes its audit entry. */
export interface ChangeOrigin {
  actor: AuditActor;
  /** The request's id (its log lines carry it); none at the CLI. */
  requestId?: string;
}

/** What is audited (docs/api.md). */
export type AuditAction =
  | 'rule.create' | 'rule.update' | 'rule.patch' | 'rule.archive' | 'rule.restore' | 'rule.publish'
  | 'context.publish' | 'context.rollback' | 'context.import' | 'context.recompile'
  | 'context.payload-schema' | 'context.tests' | 'context.settings'
  | 'key.create' | 'key.revoke'
  | 'tenant.rate-limit' | 'tenant.sampling' | 'tenant.samples-delete' | 'tenant.cors';

/** One entry of the audit trail. */
export interface AuditEntry {
  id: string;
  at: string;
  action: AuditAction;
  actor: AuditActor;
  context?: string;
  /** The changed resource's id (a rule, a key), when it has one. */
  target?: string;
  /** The changed resource's content before and after (never a key's secret or hash). */
  before?: unknown;
  after?: unknown;
  note?: string;
  requestId?: string;
}

export interface AuditQuery {
  context?: string;
  action?: AuditAction;
  /** Entries at or after this time. */
  since?: Date;
  limit: number;
  cursor?: string;
}

/** The audit trail: entries are written by the stores, in their changes' transactions, and only read here. */
export interface AuditStore {
  /** Newest first. InvalidInputError (path `cursor`) for a cursor this store did not give. */
  list(tenantId: string, query: AuditQuery): Promise<Page<AuditEntry>>;
  /** An audited change with nothing else to write (a recompile). */
  record(tenantId: string, origin: ChangeOrigin, change: AuditedChange): Promise<void>;
  /** Deletes every tenant's entries committed before `olderThan`, `batch` rows a statement; how many went. */
  deleteOlderThan(olderThan: Date, batch: number): Promise<number>;
}

/** What an audit entry says about its change. */
export interface AuditedChange {
  action: AuditAction;
  context?: string;
  target?: string;
  before?: unknown;
  after?: unknown;
  note?: string;
}

/** A context's payload schema as stored, with the revision that changes on every write. */
export interface StoredPayloadSchema {
  schema: unknown;
  revision: string;
}

/** Payload schemas per tenant and context (docs/api.md); used for save-time warnings only. */
export interface PayloadSchemaStore {
  /** The schema and its revision; null when the context has none. */
  get(tenantId: string, context: string): Promise<StoredPayloadSchema | null>;
  /** The revision alone (a cached parsed copy is current when it matches); null when there is none. */
  revision(tenantId: string, context: string): Promise<string | null>;
  /** Sets (creates or replaces) the schema, already checked by the caller, under a new revision; audited (`context.payload-schema`) when an origin is given. */
  put(tenantId: string, context: string, schema: unknown, origin?: ChangeOrigin): Promise<StoredPayloadSchema>;
  /** Removes it, audited as put is; false when there was none (nothing audited). */
  delete(tenantId: string, context: string, origin?: ChangeOrigin): Promise<boolean>;
}

/**
 * What a rules file (docs/api.md, "Rules as files") asks of a context, its
 * rules already checked: each rule's code and content as it would be stored.
 */
/**
 * A ruleset whose rules are still the database's JSON text
 * (`[{ code, content }]`, sorted by code), for a management thread to parse
 * (src/pool/tasks/stored-rules.ts) instead of the event loop.
 */
export interface RulesetText {
  tenantId: string;
  context: string;
  rulesetVersion: number;
  rulesJson: string;
}

/** A context's rules as an import's dry run compares them: the live ruleset version, and every non-archived rule's latest content as JSON text. */
export interface ImportBaseText {
  rulesetVersion: number | null;
  /** The context's rules, as `[{ id, version, code, content }, ...]` by code (the version the content is). */
  rulesJson: string;
}

export interface ImportPlan {
  rules: Array<{ code: string; content: RuleContent }>;
  /** Absent (undefined): left as it is; null: removed; else the schema to set, already checked. */
  payloadSchema?: unknown;
  /** Absent: left as they are; else the tests to store ([] removes them), already checked. */
  tests?: StoredTest[];
}

/**
 * A real import worked out on a management thread (pool/tasks/import-prepare-task.ts)
 * against the context's rules as it read them (ImportBaseText), for the
 * transaction to write: the contents as their JSON text, so the event loop
 * neither walks nor copies the file's rules as objects.
 */
export interface PreparedImport {
  /**
   * Which rules it was compared with (import-changes.ts `importBaseDigest`:
   * their ids, versions and codes; a version's content never changes). The
   * transaction writes only if the context's rules, locked, are still those.
   */
  baseDigest: string;
  writes: ImportWrites;
  /** The answer's lists; its rulesetVersion is the one the transaction finds. */
  result: ImportResult;
  payloadSchema?: unknown;
  tests?: StoredTest[];
}

/** What an import writes: the file as checked, or the changes a thread worked out from it. */
export type ImportSource = { plan: ImportPlan } | { prepared: PreparedImport };

/** What an import writes: rules to create, rules that get a new draft version (after `version`), rules to archive. */
export interface ImportWrites {
  create: Array<{ code: string; contentJson: string }>;
  update: Array<{ id: string; version: number; contentJson: string }>;
  archive: Array<{ id: string }>;
}

/** The context's rules changed between an import's comparison and its transaction: nothing was written. */
export class StaleImportBaseError extends ConflictError {
  constructor() {
    super('the context\'s rules changed while the file was compared with them');
  }
}

export interface ImportOptions {
  /** Work out what would change, and change nothing. */
  dryRun: boolean;
  /** Archive the rules whose codes the file does not have. */
  prune: boolean;
  /** Publish the drafts in the same transaction (ruleset action `import`). */
  publish: boolean;
  maxRulesPerContext: number;
}

/** What an import did (or, in a dry run, would do), by rule code. */
export interface ImportResult {
  dryRun: boolean;
  create: string[];
  update: string[];
  archive: string[];
  unchanged: string[];
  /** The context's live ruleset version afterwards; null when it has none. */
  rulesetVersion: number | null;
}

/** A tenant's sampling settings (docs/operations.md, "Sampling"); rate 0 is off. */
export interface SamplingSettings {
  /** Share of single validations and batch items recorded, 0 to 1. */
  rate: number;
  /** Samples kept per context, newest first. */
  maxSamples: number;
  /** Samples older than this are dropped. */
  retentionHours: number;
}

/** The settings a tenant's cached request policy is made of (TenantStore.getPolicy). */
export interface TenantPolicySettings {
  rateLimit: { max: number; windowMs: number } | null;
  samplingRate: number;
  /** Browser origins allowed on the local-evaluation routes (CORS). */
  corsOrigins: readonly string[];
}

/** A context's settings (PUT /contexts/{c}/settings). */
export interface ContextSettings {
  localValidation: boolean;
}

/** A context's settings with its live ruleset version (null before its first publish). */
export interface ContextState extends ContextSettings {
  rulesetVersion: number | null;
}

/** Contexts' settings; null for a context with no row (no rule was ever made in it). */
export interface ContextSettingsStore {
  state(tenantId: string, context: string): Promise<ContextState | null>;
  /** Replaces the settings; the `context.settings` audit entry goes in the same transaction. */
  set(tenantId: string, context: string, settings: ContextSettings, origin?: ChangeOrigin): Promise<ContextSettings | null>;
}

/** An Ed25519 key pair as stored: PEM texts (PKCS#8 and SPKI) and the id derived from the public key. */
export interface StoredSigningKey {
  keyId: string;
  privateKeyPem: string;
  publicKeyPem: string;
}

/** The service's own signing key pair, shared by every instance on the database. */
export interface SigningKeyStore {
  /** The stored pair, or the one `make` gives, stored first (whichever instance stores first wins). */
  getOrCreate(make: () => StoredSigningKey): Promise<StoredSigningKey>;
}

/** A validation as the sampler hands it to the store. */
export interface SampleRecord {
  tenantId: string;
  context: string;
  recordedAt: Date;
  rulesetVersion: number;
  isValid: boolean;
  /** The failing rule codes. */
  failures: string[];
  /** The payload as validated; stored as JSON text, key order kept. */
  payload: unknown;
  /** The payload's JSON text, when the caller has made it already (stored instead of writing it again). */
  payloadText?: string;
}

/** A stored sample. */
export interface StoredSample {
  id: string;
  context: string;
  recordedAt: Date;
  rulesetVersion: number;
  isValid: boolean;
  failures: string[];
  payload: unknown;
}

/** What DELETE /tenant/samples did: how many samples went, and the time samples must be recorded after to be kept. */
export interface SamplesPurge {
  deleted: number;
  purgedAt: Date;
}

/**
 * A sample as an impact replay on a management thread takes it: its payload
 * as the stored JSON text, parsed on that thread rather than by the driver
 * on the event loop (a page holds up to megabytes of payloads).
 */
export interface SampleText {
  id: string;
  recordedAt: Date;
  payloadText: string;
}

/** Where a page of samples ends: the last sample read. */
export type SampleCursor = Pick<StoredSample, 'recordedAt' | 'id'>;

/** Sampled traffic, per tenant and context; written in batches off the request path. */
export interface SampleStore {
  /**
   * Stores these samples (any tenants and contexts), SAMPLES_PER_STATEMENT
   * (sample-store.ts) rows per transaction: up to that many, all or
   * nothing. Leaves out the samples recorded at or before their tenant's
   * last purge (deleteAll), even one that runs meanwhile. With
   * `maxBytesPerTenant`, deletes each tenant's oldest samples (any context)
   * until its samples' stored bytes are within it, in the same transaction.
   * Resolves to how many were stored.
   */
  insertMany(samples: readonly SampleRecord[], maxBytesPerTenant?: number): Promise<number>;
  /** The context's newest samples, newest first, at most `limit`. */
  newest(tenantId: string, context: string, limit: number): Promise<StoredSample[]>;
  /**
   * The context's samples recorded before `before` (a sample read earlier: its time, then its id), newest first,
   * at most `limit`; from the newest when `before` is absent. Pages through what `newest` reads at once. With
   * `maxBytes`, fewer when their stored bytes would exceed it (never none when there is one).
   */
  newestBefore(tenantId: string, context: string, limit: number, before?: SampleCursor, maxBytes?: number): Promise<StoredSample[]>;
  /** The same samples as `newestBefore` with `maxBytes`, with only what a replay reads: the payload as its JSON text. */
  newestTextsBefore(tenantId: string, context: string, limit: number, before: SampleCursor | undefined, maxBytes: number): Promise<SampleText[]>;
  /** One sample of the context; null when there is none with this id (or it belongs to another tenant or context). */
  get(tenantId: string, context: string, id: string): Promise<StoredSample | null>;
  /** Drops the context's samples past the newest `maxSamples` and those recorded before `olderThan`; how many went. */
  prune(tenantId: string, context: string, maxSamples: number, olderThan: Date): Promise<number>;
  /** Deletes the tenant's oldest samples (any context) until their stored bytes are within `maxBytes`; how many went. */
  trimToBytes(tenantId: string, maxBytes: number): Promise<number>;
  /** The stored bytes (payload and failures JSON text) of the tenant's samples, as kept with every change. */
  storedBytes(tenantId: string): Promise<number>;
  /** The contexts of the tenant that hold samples. */
  contexts(tenantId: string): Promise<string[]>;
  /** Every tenant and context that holds samples (the periodic pruning walks them). */
  sampled(): Promise<ContextRef[]>;
  /**
   * Drops every sample of the tenant and records the purge time: no sample
   * recorded at or before it is stored afterwards (insertMany), and a
   * `samples-purge` change notice tells every instance to drop what it still
   * queues. With an origin, the `tenant.samples-delete` audit entry goes in
   * the same transaction.
   */
  deleteAll(tenantId: string, origin?: ChangeOrigin): Promise<SamplesPurge>;
}

export interface Storage {
  readonly kind: 'pglite' | 'postgres';
  readonly tenants: TenantStore;
  readonly apiKeys: ApiKeyStore;
  readonly rules: RuleStore;
  readonly history: ContextHistoryStore;
  readonly usage: ContextUsageStore;
  readonly tests: ContextTestStore;
  readonly audit: AuditStore;
  readonly payloadSchemas: PayloadSchemaStore;
  readonly samples: SampleStore;
  readonly contextSettings: ContextSettingsStore;
  readonly signingKeys: SigningKeyStore;
  /** True when the database answers (for /health/ready). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
