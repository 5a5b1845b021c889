/**
 * The operator CLI as operators run it: a child process
 * (`node --import tsx src/cli.ts`) against a fresh database, then the
 * service (buildApp) on the same database uses what the CLI made. The
 * embedded database belongs to one process, so the CLI and the service
 * take turns; while the service holds it, the CLI refuses (exit 1).
 * Command-line mistakes are checked in process: they exit 2 before any
 * database is opened.
 */
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { loadConfig } from '../../src/config.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import type { Storage } from '../../src/storage/types.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

let db: FreshDatabase;

function databaseEnv(): Record<string, string> {
  return { RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' };
}

/** Runs the CLI in a child process with the test database's configuration, and `stdin` on its standard input when given. */
function cli(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<CliRun> {
  const inherited = { ...process.env };
  for (const name of ['DATABASE_URL', 'RULES_DATA_DIR', 'RULES_BOOTSTRAP_TENANTS', 'RATE_LIMIT_MAX', 'RATE_LIMIT_WINDOW_MS', 'RULES_API_KEY']) {
    delete inherited[name];
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: ROOT,
    env: { ...inherited, ...databaseEnv(), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end(stdin ?? '');
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

/** Runs a command that must succeed with --json and returns its JSON. */
async function cliJson(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<any> {
  const run = await cli([...args, '--json'], env, stdin);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

interface Service {
  app: FastifyInstance;
  storage: Storage;
  baseUrl: string;
  close(): Promise<void>;
}

/** The service on the CLI's database, as `npm start` would build it. */
async function startService(): Promise<Service> {
  const config = loadConfig({ ...databaseEnv(), LOG_LEVEL: 'silent', PORT: '0' });
  const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const app = await buildApp({ config, storage });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app,
    storage,
    baseUrl,
    async close() {
      await app.close();
      await storage.close();
    },
  };
}

function call(service: Service, method: string, path: string, key: string, body?: unknown): Promise<Response> {
  return fetch(service.baseUrl + path, {
    method,
    headers: {
      'x-api-key': key,
      'x-tenant-id': 'acme',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('command-line mistakes (exit 2, nothing opened)', () => {
  it.each([
    [[], 'Usage:'],
    [['bogus'], 'unknown command "bogus"'],
    [['--verbose'], "Unknown option '--verbose'"],
    [['migrate', 'now'], 'expected: migrate'],
    [['tenant', 'create', 'Not-Lower'], 'is not a tenant id'],
    [['tenant', 'delete', 'acme'], 'unknown tenant command "delete"'],
    [['tenant', 'rate-limit', 'acme', '0', '60000'], '<max> must be between 1 and'],
    [['tenant', 'rate-limit', 'acme', '10', '50'], '<windowMs> must be between 100 and'],
    [['tenant', 'rate-limit', 'acme', '10'], 'expected: tenant rate-limit'],
    [['key', 'create', 'acme', 'ci'], 'needs --role admin or --role validator'],
    [['key', 'create', 'acme', 'ci', '--role', 'root'], '--role must be admin or validator'],
    [['key', 'create', 'acme', '', '--role', 'admin'], 'the key name must be 1-200 characters'],
    [['key', 'list', 'acme', '--role', 'admin'], '--role applies only to "key create"'],
    [['key', 'revoke', 'acme'], 'expected: key revoke <tenant> <keyId>'],
    [['contexts'], 'expected: contexts <tenant>'],
    [['export', 'acme', 'orders', '--key-stdin'], '--key and --key-stdin go with --url'],
    [['export', 'acme', 'orders', '--url', 'http://127.0.0.1:1', '--key', 'k', '--key-stdin'], 'give the key one way'],
    [['tenant', 'create', 'acme', '--url', 'http://127.0.0.1:1'], '--url does not apply to "tenant create"'],
    [['migrate', '--url', 'http://127.0.0.1:1'], '--url does not apply to "migrate"'],
    [['test', 'acme', 'orders'], 'test-drafts <tenant> <context> [FILE]'],
  ])('%j', async (args, message) => {
    let stderr = '';
    let stdout = '';
    // A database that cannot exist: reaching it would fail with exit 1, not 2.
    const code = await runCli(args, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(message);
  });

  it('prints the usage on --help with exit 0', async () => {
    let stdout = '';
    const code = await runCli(['--help'], {}, { stdout: (text) => (stdout += text), stderr: () => {} });
    expect(code).toBe(0);
    for (const command of ['migrate', 'tenant create', 'tenant rate-limit', 'key create', 'key revoke', 'key list', 'contexts']) {
      expect(stdout).toContain(command);
    }
  });

  it('names the variable of a bad configuration, exit 1', async () => {
    let stderr = '';
    const code = await runCli(['migrate'], { DATABASE_URL: 'mysql://x' }, { stdout: () => {}, stderr: (text) => (stderr += text) });
    expect(code).toBe(1);
    expect(stderr).toContain('DATABASE_URL');
  });
});

describe('operating a tenant with the CLI and the service in turns', () => {
  let adminKey: string;
  let adminKeyId: string;
  let validatorKey: string;
  let validatorKeyId: string;

  it('migrates, creates a tenant and keys (each key printed once), stores a rate limit', async () => {
    const migrated = await cli(['migrate']);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/^Applied \d+ migration/);
    expect(await cliJson(['tenant', 'create', 'acme'])).toEqual({ tenantId: 'acme', created: true });

    const admin = await cli(['key', 'create', 'acme', 'ops admin', '--role', 'admin']);
    expect(admin.code, admin.stderr).toBe(0);
    const printedKey = admin.stdout.trim().split('\n').at(-1)!;
    expect(printedKey).toMatch(/^rk_[A-Za-z0-9_-]{43}$/);
    adminKey = printedKey;
    const validator = await cliJson(['key', 'create', 'acme', 'checkout', '--role', 'validator']);
    expect(validator).toMatchObject({ tenantId: 'acme', name: 'checkout', role: 'validator', key: expect.stringMatching(/^rk_/) });
    validatorKey = validator.key;
    validatorKeyId = validator.id;

    expect(await cliJson(['tenant', 'rate-limit', 'acme', '4', '60000'])).toEqual({ tenantId: 'acme', max: 4, windowMs: 60000, override: true });

    const listed = await cliJson(['key', 'list', 'acme']);
    expect(listed.items.map((k: any) => [k.name, k.role, k.revokedAt])).toEqual([
      ['ops admin', 'admin', null],
      ['checkout', 'validator', null],
    ]);
    adminKeyId = listed.items[0].id;
    // No secret and no hash in any listing.
    expect(JSON.stringify(listed)).not.toContain(adminKey);
    expect(JSON.stringify(listed)).not.toContain(validatorKey);
    expect(Object.keys(listed.items[0]).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'name', 'revokedAt', 'role', 'tenantId']);
  }, 120_000);

  it('answers again-and-unknown cases the same way in process (exit 0 or 1)', async () => {
    const run = async (args: string[], env: Record<string, string> = {}): Promise<CliRun> => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(args, { ...databaseEnv(), ...env }, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
      return { code, stdout, stderr };
    };
    expect(await run(['migrate'])).toMatchObject({ code: 0, stdout: 'The database is up to date.\n' });
    expect(await run(['tenant', 'create', 'acme'])).toMatchObject({ code: 0, stdout: 'Tenant acme already exists.\n' });
    expect(await run(['key', 'create', 'ghost', 'x', '--role', 'admin'])).toMatchObject({
      code: 1,
      stderr: 'error: tenant ghost does not exist (create it with: tenant create ghost)\n',
    });
    expect(await run(['tenant', 'rate-limit', 'acme'])).toMatchObject({
      code: 0,
      stdout: 'Tenant acme: 4 requests per 60000 ms (set for this tenant).\n',
    });
  }, 60_000);

  it('the service accepts the CLI\'s keys with their roles and applies the stored limit', async () => {
    const service = await startService();
    try {
      expect(await service.storage.tenants.getRateLimit('acme')).toEqual({ max: 4, windowMs: 60000 });
      const created = await call(service, 'POST', '/api/v1/rules', adminKey, {
        context: 'orders', code: 'QTY', name: 'Quantity', fieldPath: 'qty', expression: '$value > 0',
      });
      expect(created.status).toBe(201);
      expect((await call(service, 'POST', '/api/v1/contexts/orders/publish', adminKey)).status).toBe(200);
      const validated = await call(service, 'POST', '/api/v1/validation/validate', validatorKey, { context: 'orders', payload: { qty: 0 } });
      expect(validated.status).toBe(200);
      expect(((await validated.json()) as any).failures.map((f: any) => f.ruleCode)).toEqual(['QTY']);
      // A validator key cannot manage rules.
      expect((await call(service, 'GET', '/api/v1/rules', validatorKey)).status).toBe(403);
      // That was the tenant's fourth request: the stored budget of 4 is spent.
      const limited = await call(service, 'GET', '/api/v1/rules', adminKey);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('ratelimit-limit')).toBe('4');

      // The embedded database is the service's while it runs.
      if (db.databaseUrl === undefined) {
        const refused = await cli(['key', 'list', 'acme']);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('is in use by process');
        expect(refused.stderr).toContain('stop that process first');
      }
    } finally {
      await service.close();
    }
  }, 60_000);

  it('lists contexts, resets the limit, and revokes keys (never the last admin key)', async () => {
    const contexts = await cliJson(['contexts', 'acme']);
    expect(contexts.items).toEqual([{ context: 'orders', rulesetVersion: 1, rules: { draft: 0, published: 1, archived: 0 } }]);

    expect(await cliJson(['tenant', 'rate-limit', 'acme', 'default'], { RATE_LIMIT_MAX: '1234' }))
      .toEqual({ tenantId: 'acme', max: 1234, windowMs: 60000, override: false });

    const revoked = await cliJson(['key', 'revoke', 'acme', validatorKeyId]);
    expect(revoked).toMatchObject({ id: validatorKeyId, revokedAt: expect.any(String) });

    const lastAdmin = await cli(['key', 'revoke', 'acme', adminKeyId]);
    expect(lastAdmin.code).toBe(1);
    expect(lastAdmin.stderr).toContain('last active admin key');
  }, 120_000);

  it('in process: the contexts table, repeated and unknown revocations', async () => {
    const run = async (args: string[]): Promise<CliRun> => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(args, databaseEnv(), { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
      return { code, stdout, stderr };
    };
    const table = await run(['contexts', 'acme']);
    expect(table.stdout.split('\n')[0]).toMatch(/^CONTEXT\s+RULESET VERSION\s+DRAFT\s+PUBLISHED\s+ARCHIVED$/);
    expect(table.stdout.split('\n')[1]).toMatch(/^orders\s+1\s+0\s+1\s+0$/);
    expect((await run(['key', 'revoke', 'acme', validatorKeyId])).code).toBe(0);
    for (const unknown of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect(await run(['key', 'revoke', 'acme', unknown])).toMatchObject({ code: 1, stderr: `error: tenant acme has no key ${unknown}\n` });
    }
  }, 60_000);

  it('against the service, takes the admin key from RULES_API_KEY or from stdin (--key-stdin), off the command line', async () => {
    const service = await startService();
    try {
      const remote = ['export', 'acme', 'orders', '--url', service.baseUrl];
      const expected = await cliJson([...remote, '--key', adminKey]);
      expect(expected.rules.map((rule: { code: string }) => rule.code)).toEqual(['QTY']);
      expect(await cliJson(remote, { RULES_API_KEY: adminKey })).toEqual(expected);
      expect(await cliJson([...remote, '--key-stdin'], {}, `${adminKey}\n`)).toEqual(expected);
      // The command line wins over the environment.
      expect(await cliJson([...remote, '--key-stdin'], { RULES_API_KEY: 'rk_wrong' }, adminKey)).toEqual(expected);
      expect(await cliJson([...remote, '--key', adminKey], { RULES_API_KEY: 'rk_wrong' })).toEqual(expected);
      const wrong = await cli(remote, { RULES_API_KEY: 'rk_wrong' });
      expect(wrong.code).toBe(1);
      const none = await cli(remote);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('RULES_API_KEY');
      expect(none.stderr).toContain('--key-stdin');
      const empty = await cli([...remote, '--key-stdin'], {}, '\n');
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain('no key on stdin');
    } finally {
      await service.close();
    }
  }, 120_000);

  it('the service refuses the revoked key and still accepts the admin key', async () => {
    const service = await startService();
    try {
      const refused = await call(service, 'POST', '/api/v1/validation/validate', validatorKey, { context: 'orders', payload: { qty: 1 } });
      expect(refused.status).toBe(401);
      expect((await call(service, 'GET', '/api/v1/rules', adminKey)).status).toBe(200);
    } finally {
      await service.close();
    }
  }, 60_000);
});
