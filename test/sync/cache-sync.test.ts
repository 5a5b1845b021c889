/**
 * CacheSync against a real database, with two caches standing for two
 * processes on it: a notice about a newer ruleset makes the other process
 * serve it, an own-process notice costs nothing, the consistency check
 * catches up after lost notices, and revoked or re-roled keys leave the
 * authentication cache. Runs on PGlite and on PostgreSQL; the notices
 * themselves (pg_notify on commit) are checked on PostgreSQL only.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../src/auth/api-key.ts';
import { KeyCache } from '../../src/auth/key-cache.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import type { RuleContent, Storage } from '../../src/storage/types.ts';
import { CacheSync } from '../../src/sync/cache-sync.ts';
import {
  CHANGES_CHANNEL,
  encodeChangeNotice,
  parseChangeNotice,
  type ChangeNotice,
} from '../../src/sync/change-notice.ts';
import { compileAhead } from '../../src/validators/early-compile.ts';
import { ValidatorCache } from '../../src/validators/validator-cache.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

const TENANT = 'acme';
const silent = { info: () => {}, warn: () => {} };

function limit(max: number): RuleContent {
  return {
    name: 'Limit',
    severity: 'Error',
    fieldPath: 'amount',
    required: false,
    expression: `amount <= ${max}`,
    priority: 0,
    enabled: true,
    tags: [],
  };
}

/** What one process holds: its caches and its CacheSync. */
interface Process {
  validators: ValidatorCache;
  keyCache: KeyCache;
  sync: CacheSync;
}

function startProcess(storage: Storage): Process {
  // Unknown contexts are remembered for a minute, so that "B would still say no" holds on a loaded machine.
  const validators = new ValidatorCache({ rules: storage.rules, maxEntries: 100, limits: {}, unknownTtlMs: 60_000 });
  const keyCache = new KeyCache({ find: (keyHash) => storage.apiKeys.findActiveByHash(keyHash) });
  const sync = new CacheSync({ rules: storage.rules, apiKeys: storage.apiKeys, validators, keyCache, log: silent });
  return { validators, keyCache, sync };
}

describe('change notices', () => {
  it.each<[string, ChangeNotice]>([
    ['ruleset', { kind: 'ruleset', tenantId: 'acme', context: 'orders.v2:eu', rulesetVersion: 7 }],
    ['key', { kind: 'key', tenantId: 'acme', keyId: '4a1f0c4e-8a57-4d7e-9a8e-0f2b8f1c2d3e' }],
    ['tenant', { kind: 'tenant', tenantId: 'acme' }],
    ['samples-purge', { kind: 'samples-purge', tenantId: 'acme', purgedAt: 1_795_000_000_123 }],
    ['context-settings', { kind: 'context-settings', tenantId: 'acme', context: 'orders' }],
  ])('round-trip a %s notice', (_name, notice) => {
    expect(parseChangeNotice(encodeChangeNotice(notice))).toEqual(notice);
  });

  it('names the tenant, context and version in the payload', () => {
    const text = encodeChangeNotice({ kind: 'ruleset', tenantId: 'acme', context: 'orders', rulesetVersion: 3 });
    expect(JSON.parse(text)).toEqual({ kind: 'ruleset', tenant: 'acme', context: 'orders', rulesetVersion: 3 });
  });

  it.each([
    ['not JSON', 'hello'],
    ['null', 'null'],
    ['an array', '[1]'],
    ['an unknown kind', '{"kind":"account","tenant":"acme"}'],
    ['no tenant', '{"kind":"key","keyId":"x"}'],
    ['an empty context', '{"kind":"ruleset","tenant":"acme","context":"","rulesetVersion":1}'],
    ['a fractional version', '{"kind":"ruleset","tenant":"acme","context":"c","rulesetVersion":1.5}'],
    ['a string version', '{"kind":"ruleset","tenant":"acme","context":"c","rulesetVersion":"2"}'],
    ['a numeric key id', '{"kind":"key","tenant":"acme","keyId":5}'],
    ['a purge without its time', '{"kind":"samples-purge","tenant":"acme"}'],
    ['a settings notice without a context', '{"kind":"context-settings","tenant":"acme"}'],
    ['a purge time as a string', '{"kind":"samples-purge","tenant":"acme","purgedAt":"2026-11-27T19:00:00Z"}'],
  ])('ignores a payload with %s', (_name, text) => {
    expect(parseChangeNotice(text)).toBeNull();
  });
});

describe('CacheSync between two processes on one database', () => {
  let database: FreshDatabase;
  let storage: Storage;
  let a: Process;
  let b: Process;
  let ruleId: string;

  /** Publishes the context from process A, as its publish route would. */
  const publishOnA = async (context: string): Promise<number> => {
    const { result, live } = await storage.rules.publishContext(TENANT, context, (next) => a.validators.compile(next));
    if (live !== undefined) a.validators.install(live);
    return result.rulesetVersion;
  };
  const editRule = async (max: number): Promise<void> => {
    const rule = (await storage.rules.get(TENANT, ruleId))!;
    await storage.rules.update(TENANT, ruleId, rule.version, limit(max));
  };
  const isValidOn = async (p: Process, context: string, amount: number): Promise<boolean> => {
    const validator = await p.validators.load(TENANT, context);
    return validator!.validate({ amount }, Date.now()).isValid;
  };

  beforeAll(async () => {
    database = await freshDatabase();
    storage = await createStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    await storage.tenants.ensureTenant(TENANT);
    a = startProcess(storage);
    b = startProcess(storage);
    ruleId = (await storage.rules.create(TENANT, 'orders', 'LIMIT', limit(100), 100)).id;
    await publishOnA('orders');
    await b.validators.load(TENANT, 'orders');
  });
  afterAll(async () => {
    await storage?.close();
    await database?.drop();
  });

  it('makes the other process serve a newer ruleset it was told about', async () => {
    await editRule(200);
    const version = await publishOnA('orders');
    expect(await isValidOn(b, 'orders', 150)).toBe(false);
    await b.sync.apply({ kind: 'ruleset', tenantId: TENANT, context: 'orders', rulesetVersion: version });
    expect(b.validators.cachedVersion(TENANT, 'orders')).toBe(version);
    expect(await isValidOn(b, 'orders', 150)).toBe(true);
  });

  it('does nothing for a notice about the version it already serves (its own publish)', async () => {
    const version = a.validators.cachedVersion(TENANT, 'orders')!;
    const compiles = a.validators.compileCount;
    await a.sync.apply({ kind: 'ruleset', tenantId: TENANT, context: 'orders', rulesetVersion: version });
    await a.sync.apply({ kind: 'ruleset', tenantId: TENANT, context: 'orders', rulesetVersion: version - 1 });
    expect(a.validators.compileCount).toBe(compiles);
    expect(a.validators.cachedVersion(TENANT, 'orders')).toBe(version);
  });

  it('waits for its own publish to install when the notice overtakes it, and compiles nothing more', async () => {
    await editRule(300);
    const compiles = a.validators.compileCount;
    let noticeHandled: Promise<void> | undefined;
    const { result } = await compileAhead(a.validators, async (compile) => {
      const outcome = await storage.rules.publishContext(TENANT, 'orders', compile);
      // The notice of this very commit, arriving before the publish has installed what it made live,
      // and handled while the publish is still on its way (a loaded machine).
      noticeHandled = a.sync.apply({ kind: 'ruleset', tenantId: TENANT, context: 'orders', rulesetVersion: outcome.result.rulesetVersion });
      await new Promise((resolve) => setTimeout(resolve, 200));
      return outcome;
    });
    await noticeHandled;
    expect(a.validators.cachedVersion(TENANT, 'orders')).toBe(result.rulesetVersion);
    expect(a.validators.compileCount - compiles).toBe(1);
    expect(await isValidOn(a, 'orders', 250)).toBe(true);
  });

  it('forgets that a context was unknown when told it was published', async () => {
    await storage.rules.create(TENANT, 'fresh', 'LIMIT', limit(5), 100);
    expect(await b.validators.load(TENANT, 'fresh')).toBeNull();
    const version = await publishOnA('fresh');
    // Within its short memory of unknown contexts, B would still say no.
    expect(await b.validators.load(TENANT, 'fresh')).toBeNull();
    await b.sync.apply({ kind: 'ruleset', tenantId: TENANT, context: 'fresh', rulesetVersion: version });
    expect((await b.validators.load(TENANT, 'fresh'))?.rulesetVersion).toBe(version);
  });

  it('catches up on notices it never received in the consistency check', async () => {
    await editRule(300);
    const version = await publishOnA('orders');
    expect(b.validators.cachedVersion(TENANT, 'orders')).toBe(version - 1);
    expect(await b.sync.reconcile()).toEqual({ contexts: 1, keys: 0 });
    expect(b.validators.cachedVersion(TENANT, 'orders')).toBe(version);
    expect(await isValidOn(b, 'orders', 250)).toBe(true);
    expect(await b.sync.reconcile()).toEqual({ contexts: 0, keys: 0 });
  });

  it('follows several publishes in one notice, to the latest version', async () => {
    await editRule(400);
    await publishOnA('orders');
    await editRule(500);
    const latest = await publishOnA('orders');
    await b.sync.apply({ kind: 'ruleset', tenantId: TENANT, context: 'orders', rulesetVersion: latest - 1 });
    expect(b.validators.cachedVersion(TENANT, 'orders')).toBe(latest);
  });

  it('drops revoked keys and keys whose role changed in the consistency check', async () => {
    const revokedKey = generateApiKey();
    const demotedKey = generateApiKey();
    const keptKey = generateApiKey();
    const revoked = await storage.apiKeys.create(TENANT, 'revoked', 'admin', hashApiKey(revokedKey));
    await storage.apiKeys.create(TENANT, 'demoted', 'admin', hashApiKey(demotedKey));
    await storage.apiKeys.create(TENANT, 'kept', 'validator', hashApiKey(keptKey));
    for (const key of [revokedKey, demotedKey, keptKey]) expect(await b.keyCache.lookup(hashApiKey(key))).not.toBeNull();

    await storage.apiKeys.revoke(TENANT, revoked.id);
    await storage.apiKeys.ensure(TENANT, 'demoted', 'validator', hashApiKey(demotedKey));
    expect(await b.sync.reconcile()).toEqual({ contexts: 0, keys: 2 });

    expect(await b.keyCache.lookup(hashApiKey(revokedKey))).toBeNull();
    expect(await b.keyCache.lookup(hashApiKey(demotedKey))).toMatchObject({ role: 'validator' });
    expect(await b.keyCache.lookup(hashApiKey(keptKey))).toMatchObject({ role: 'validator' });
  });

  it('drops a key at once on a key notice', async () => {
    const key = generateApiKey();
    const record = await storage.apiKeys.create(TENANT, 'short-lived', 'validator', hashApiKey(key));
    expect(await b.keyCache.lookup(hashApiKey(key))).toMatchObject({ keyId: record.id });
    await storage.apiKeys.revoke(TENANT, record.id);
    await b.sync.apply({ kind: 'key', tenantId: TENANT, keyId: record.id });
    expect(await b.keyCache.lookup(hashApiKey(key))).toBeNull();
  });
});

describe.skipIf(!process.env.DATABASE_URL)('notices sent by storage (PostgreSQL)', () => {
  let database: FreshDatabase;
  let storage: Storage;
  let listener: pg.Client;
  const received: string[] = [];
  const validators = () => new ValidatorCache({ rules: storage.rules, maxEntries: 10, limits: {} });

  beforeAll(async () => {
    database = await freshDatabase();
    storage = await createStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    await storage.tenants.ensureTenant(TENANT);
    listener = new pg.Client({ connectionString: database.databaseUrl });
    await listener.connect();
    listener.on('notification', (message) => received.push(message.payload ?? ''));
    await listener.query(`LISTEN ${CHANGES_CHANNEL}`);
  });
  afterAll(async () => {
    await listener?.end();
    await storage?.close();
    await database?.drop();
  });

  /** Notifications arrive in commit order: once the marker is in, everything before it is. */
  const drain = async (): Promise<ChangeNotice[]> => {
    const marker = `marker-${received.length}-${Math.random()}`;
    const sender = new pg.Client({ connectionString: database.databaseUrl });
    await sender.connect();
    await sender.query('select pg_notify($1, $2)', [CHANGES_CHANNEL, marker]);
    await sender.end();
    while (!received.includes(marker)) await new Promise((resolve) => setTimeout(resolve, 10));
    return received.splice(0).filter((text) => text !== marker).map((text) => parseChangeNotice(text)!);
  };

  it('announces publish, archive of a live rule, rollback and key revocation once each, on commit', async () => {
    const cache = validators();
    const compile = (next: Parameters<ValidatorCache['compile']>[0]) => cache.compile(next);
    const first = await storage.rules.create(TENANT, 'orders', 'FIRST', limit(1), 100);
    const second = await storage.rules.create(TENANT, 'orders', 'SECOND', limit(2), 100);
    await storage.rules.publishRule(TENANT, first.id, compile);
    await storage.rules.publishContext(TENANT, 'orders', compile);
    await storage.rules.archive(TENANT, second.id, compile);
    await storage.rules.rollback(TENANT, 'orders', 2, 5000, compile);
    const key = await storage.apiKeys.create(TENANT, 'k', 'validator', hashApiKey(generateApiKey()));
    await storage.apiKeys.create(TENANT, 'admin', 'admin', hashApiKey(generateApiKey()));
    await storage.apiKeys.revoke(TENANT, key.id);

    const ruleset = (rulesetVersion: number): ChangeNotice => ({ kind: 'ruleset', tenantId: TENANT, context: 'orders', rulesetVersion });
    expect(await drain()).toEqual([
      ruleset(1),
      ruleset(2),
      ruleset(3),
      ruleset(4),
      { kind: 'key', tenantId: TENANT, keyId: key.id },
    ]);
  });

  it('announces nothing for changes that leave what is live alone, or that roll back', async () => {
    const cache = validators();
    const draft = await storage.rules.create(TENANT, 'quiet', 'NEVER_LIVE', limit(1), 100);
    await storage.rules.archive(TENANT, draft.id, (next) => cache.compile(next));
    await storage.rules.create(TENANT, 'quiet', 'DOOMED', limit(1), 100);
    await expect(
      storage.rules.publishContext(TENANT, 'quiet', () => {
        throw new Error('compile failed');
      }),
    ).rejects.toThrow('compile failed');
    const key = await storage.apiKeys.create(TENANT, 'twice', 'validator', hashApiKey(generateApiKey()));
    await storage.apiKeys.revoke(TENANT, key.id);
    expect(await drain()).toEqual([{ kind: 'key', tenantId: TENANT, keyId: key.id }]);
    await storage.apiKeys.revoke(TENANT, key.id);
    expect(await drain()).toEqual([]);
  });
});
