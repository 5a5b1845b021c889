/**
 * Every CLI command on a tenant that the API also offers runs against a
 * service with --url (docs/operations.md, "CLI"): rate limits, keys and
 * contexts, as the tenant's admin key (from --key or RULES_API_KEY),
 * audited as that key, and printed exactly as the same command on the
 * database prints it. `tenant create` has no API and refuses --url.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliRunner, withService } from '../support/cli.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

let db: FreshDatabase;
let adminKey: string;
let adminKeyId: string;

const env = () => ({ RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' });
const { run, runJson } = cliRunner(env);

beforeAll(async () => {
  db = await freshDatabase();
  expect((await run('migrate')).code).toBe(0);
  expect((await run('tenant', 'create', 'acme')).code).toBe(0);
  const created = await runJson('key', 'create', 'acme', 'ops', '--role', 'admin');
  adminKey = created.key;
  adminKeyId = created.id;
}, 120_000);
afterAll(async () => {
  await db?.drop();
});


describe('tenant, key and contexts commands with --url', () => {
  it('print what the same commands print on the database, audited as the key', async () => {
    const onDatabase = {
      rateLimit: await run('tenant', 'rate-limit', 'acme'),
      contexts: await run('contexts', 'acme'),
      contextsJson: await runJson('contexts', 'acme'),
    };
    let createdId = '';
    let remoteKeys: Array<Record<string, unknown>> = [];
    await withService(env(), async (url) => {
      const withKey = ['--url', url, '--key', adminKey];
      // The key from the environment when the command line gives none.
      const fromEnv = cliRunner(() => ({ RULES_API_KEY: adminKey }));
      const shown = await fromEnv.run('tenant', 'rate-limit', 'acme', '--url', url);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toBe(onDatabase.rateLimit.stdout);

      const set = await run('tenant', 'rate-limit', 'acme', '50', '60000', ...withKey);
      expect(set.stdout).toBe('Tenant acme: rate limit set to 50 requests per 60000 ms. Running servers apply it within a few seconds.\n');
      expect(await runJson('tenant', 'rate-limit', 'acme', ...withKey)).toEqual({ tenantId: 'acme', max: 50, windowMs: 60000, override: true });
      expect(await runJson('tenant', 'rate-limit', 'acme', 'default', ...withKey)).toMatchObject({ max: 6000, override: false });

      const created = await run('key', 'create', 'acme', 'ci', '--role', 'validator', ...withKey);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/^Created validator key "ci" \(id [0-9a-f-]{36}\) for tenant acme\.\nThe key is shown only this once; store it now:\nrk_\S+\n$/);
      createdId = /\(id ([0-9a-f-]{36})\)/.exec(created.stdout)![1];
      const newKey = created.stdout.trim().split('\n').at(-1)!;
      const validation = await fetch(`${url}/api/v1/validation/validate`, {
        method: 'POST',
        headers: { 'x-api-key': newKey, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
        body: JSON.stringify({ context: 'nothing', payload: {} }),
      });
      expect(validation.status).not.toBe(401);

      const revoked = await runJson('key', 'revoke', 'acme', createdId, ...withKey);
      expect(revoked).toMatchObject({ id: createdId, tenantId: 'acme', name: 'ci', role: 'validator' });
      expect(revoked.revokedAt).toEqual(expect.any(String));
      const unknown = await run('key', 'revoke', 'acme', '00000000-0000-4000-8000-000000000000', ...withKey);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('tenant acme has no key 00000000-0000-4000-8000-000000000000');
      const last = await run('key', 'revoke', 'acme', adminKeyId, ...withKey);
      expect(last.code).toBe(1);
      expect(last.stderr).toContain('409 CONFLICT');

      remoteKeys = (await runJson('key', 'list', 'acme', ...withKey)).items;
      expect(remoteKeys.map((k) => [k.name, k.role, k.tenantId, k.revokedAt === null])).toEqual([['ops', 'admin', 'acme', true], ['ci', 'validator', 'acme', false]]);
      expect((await run('key', 'list', 'acme', ...withKey)).stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+ROLE\s+CREATED\s+LAST USED\s+REVOKED$/);

      expect((await run('contexts', 'acme', ...withKey)).stdout).toBe(onDatabase.contexts.stdout);
      expect(await runJson('contexts', 'acme', ...withKey)).toEqual(onDatabase.contextsJson);

      const audit = await fetch(`${url}/api/v1/audit?action=tenant.rate-limit`, { headers: { 'x-api-key': adminKey, 'x-tenant-id': 'acme' } });
      const actors = ((await audit.json()) as { items: Array<{ actor: Record<string, unknown> }> }).items.map((entry) => entry.actor);
      expect(actors).toHaveLength(2);
      for (const actor of actors) expect(actor).toMatchObject({ keyName: 'ops', role: 'admin' });

      expect((await run('key', 'list', 'acme', '--url', url, '--key', 'rk_wrong_wrong_wrong_wrong')).code).toBe(1);
    });
    // The same records as the database has them, in the same shape.
    const local = (await runJson('key', 'list', 'acme')).items as Array<Record<string, unknown>>;
    const withoutUse = (keys: Array<Record<string, unknown>>) => keys.map(({ lastUsedAt: _used, ...key }) => key);
    expect(withoutUse(remoteKeys)).toEqual(withoutUse(local));
    expect(local.find((k) => k.id === createdId)?.revokedAt).toEqual(expect.any(String));
  });

  it('--help says which commands take --url and where the key comes from', async () => {
    const help = await run('--help');
    expect(help.stdout).toContain('every command on a tenant except "tenant create"');
    expect(help.stdout).toContain('RULES_API_KEY');
  });
});
