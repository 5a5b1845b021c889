/**
 * The real process (the bundle `npm start` runs: `node --enable-source-maps
 * dist/server.js`), as an operator runs it: the first run on an empty
 * database prints a curl command that works when pasted into a shell,
 * later runs do not, bootstrap keys work (and one revoked stays revoked
 * across restarts), a bad configuration stops the start naming the
 * variable, serving leaves the bundle's source map unparsed (its parsed
 * form would stay on the main thread's heap), and SIGTERM drains
 * requests in flight (answered with Connection: close) before exiting 0.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { serviceArgs } from '../support/service-bundle.ts';
import { TEST_SERVICE_ENV } from '../support/test-service-env.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BOOTSTRAP_KEY = 'bootstrap_key_0123456789abcdef';

interface Server {
  child: ChildProcess;
  port: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

function databaseEnv(db: FreshDatabase): Record<string, string> {
  return { RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' };
}

/** Starts the server process; env replaces the variables the service reads; `nodeFlags` go before npm start's own. */
async function startServer(env: Record<string, string>, nodeFlags: string[] = []): Promise<Server> {
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT);
  const inherited = { ...process.env };
  for (const name of ['RULES_BOOTSTRAP_TENANTS', 'DATABASE_URL', 'RULES_DATA_DIR', 'LOG_LEVEL', 'WORKERS']) delete inherited[name];
  const child = spawn(process.execPath, [...nodeFlags, ...serviceArgs()], {
    cwd: ROOT,
    env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', ...TEST_SERVICE_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, port, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Resolves once the server answers /health/live; fails if it exits first. */
async function untilListening(server: Server): Promise<void> {
  let exited = false;
  void server.exited.then(() => (exited = true));
  for (;;) {
    if (exited) throw new Error(`server exited early:\n${server.stdout()}\n${server.stderr()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/health/live`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** The heap snapshot a signal had the server write into `dir`, once it is written whole. */
async function completeHeapSnapshot(dir: string): Promise<HeapSnapshot> {
  for (;;) {
    await new Promise((done) => setTimeout(done, 500));
    const [file] = (await readdir(dir)).filter((name) => name.endsWith('.heapsnapshot'));
    if (file === undefined) continue;
    try {
      return JSON.parse(await readFile(join(dir, file), 'utf8')) as HeapSnapshot;
    } catch {
      // Still being written.
    }
  }
}

/** Objects of the snapshot whose constructor is `name`. */
function objectsNamed(heap: HeapSnapshot, name: string): number {
  const fields = heap.snapshot.meta.node_fields;
  const [type, nameField] = [fields.indexOf('type'), fields.indexOf('name')];
  const objectType = heap.snapshot.meta.node_types[0].indexOf('object');
  let count = 0;
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    if (heap.nodes[i + type] === objectType && heap.strings[heap.nodes[i + nameField]] === name) count++;
  }
  return count;
}

async function stop(server: Server): Promise<number | null> {
  if (server.child.exitCode === null) server.child.kill('SIGTERM');
  return server.exited;
}

describe('first run on an empty database', () => {
  let db: FreshDatabase;
  let server: Server;

  beforeAll(async () => {
    db = await freshDatabase();
    server = await startServer({ ...databaseEnv(db), LOG_LEVEL: 'silent' });
    await untilListening(server);
  });
  afterAll(async () => {
    if (server) await stop(server);
    await db?.drop();
  });

  it('prints one curl command on a line of its own that works in bash as printed', async () => {
    const lines = server.stdout().split('\n').filter((line) => line.includes('curl'));
    expect(lines).toHaveLength(1);
    const [command] = lines;
    expect(command.startsWith('curl ')).toBe(true);
    expect(command).toContain(`http://127.0.0.1:${server.port}/api/v1/validation/validate`);
    expect(command).toContain('X-Tenant-Id: demo');

    const { stdout } = await promisify(execFile)('bash', ['-c', command]);
    const result = JSON.parse(stdout);
    expect(Object.keys(result)).toEqual(['isValid', 'totalRulesEvaluated', 'failures', 'executionTimeMs']);
    expect(result.isValid).toBe(false);
    expect(result.totalRulesEvaluated).toBeGreaterThanOrEqual(4);
    expect(result.failures.map((f: { ruleCode: string }) => f.ruleCode)).toEqual(['INCOME_CHECK']);
  });

  it('the demo\'s decision table limits by product and country', async () => {
    const command = server.stdout().split('\n').find((line) => line.includes('curl'))!;
    const key = /X-Api-Key: ([A-Za-z0-9_-]+)/.exec(command)![1];
    const validate = async (payload: unknown) => {
      const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/validation/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-tenant-id': 'demo' },
        body: JSON.stringify({ context: 'loan-application', payload }),
      });
      return ((await res.json()) as { failures: Array<{ ruleCode: string; message: string }> }).failures;
    };
    const applicant = { name: 'Jane Doe', income: 10000, email: 'jane@example.com' };
    expect(await validate({ amount: 20000, product: 'personal', applicant: { ...applicant, country: 'FR' } })).toEqual([
      expect.objectContaining({ ruleCode: 'PRODUCT_COUNTRY_LIMIT', message: 'Amount 20000 is over the limit of 15000 for this product and country' }),
    ]);
    expect(await validate({ amount: 20000, product: 'personal', applicant: { ...applicant, country: 'US' } })).toEqual([]);
  });

  it('exits 0 on SIGTERM', async () => {
    expect(await stop(server)).toBe(0);
  });

  it('does not seed or print again on the next start', async () => {
    const again = await startServer({ ...databaseEnv(db), LOG_LEVEL: 'info' });
    try {
      await untilListening(again);
      expect(again.stdout()).not.toContain('curl');
      // The demo rules are still there: the demo tenant's data persisted.
      for (const line of again.stdout().split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      expect(await stop(again)).toBe(0);
    }
  });
});

describe('configured starts', () => {
  let db: FreshDatabase;

  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('stops with exit 1 naming the variable when the configuration is bad', async () => {
    const server = await startServer({ ...databaseEnv(db), PORT: 'abc' });
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain('PORT');
  });

  it('refuses a short bootstrap key naming RULES_BOOTSTRAP_TENANTS', async () => {
    const server = await startServer({ ...databaseEnv(db), RULES_BOOTSTRAP_TENANTS: 'acme:short' });
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain('RULES_BOOTSTRAP_TENANTS');
  });

  it('stops with exit 1 naming RULES_BOOTSTRAP_TENANTS when a configured key is another tenant\'s', async () => {
    const first = await startServer({ ...databaseEnv(db), LOG_LEVEL: 'silent', RULES_BOOTSTRAP_TENANTS: `acme:${BOOTSTRAP_KEY}` });
    await untilListening(first);
    expect(await stop(first)).toBe(0);
    const second = await startServer({ ...databaseEnv(db), RULES_BOOTSTRAP_TENANTS: `globex:${BOOTSTRAP_KEY}` });
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain('RULES_BOOTSTRAP_TENANTS: the key of tenant globex is already registered for another tenant');
  });

  it('seeds as many demo rules as MAX_RULES_PER_CONTEXT allows, and the printed command still works', async () => {
    const small = await freshDatabase();
    const server = await startServer({ ...databaseEnv(small), LOG_LEVEL: 'silent', MAX_RULES_PER_CONTEXT: '3' });
    try {
      await untilListening(server);
      const [command] = server.stdout().split('\n').filter((line) => line.includes('curl'));
      const { stdout } = await promisify(execFile)('bash', ['-c', command]);
      const result = JSON.parse(stdout);
      expect(result.totalRulesEvaluated).toBe(3);
      expect(result.failures.map((f: { ruleCode: string }) => f.ruleCode)).toEqual(['INCOME_CHECK']);
    } finally {
      expect(await stop(server)).toBe(0);
      await small.drop();
    }
  });

  it('creates bootstrap tenants with working admin keys, no demo, and logs no secrets', async () => {
    const server = await startServer({ ...databaseEnv(db), LOG_LEVEL: 'trace', RULES_BOOTSTRAP_TENANTS: `acme:${BOOTSTRAP_KEY}` });
    try {
      await untilListening(server);
      expect(server.stdout()).not.toContain('curl');
      const validated = await fetch(`http://127.0.0.1:${server.port}/api/v1/validation/validate`, {
        method: 'POST',
        headers: { 'x-api-key': BOOTSTRAP_KEY, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
        body: JSON.stringify({ context: 'none', payload: { ssn: 'PAYLOAD-MARKER-123' } }),
      });
      expect(validated.status).toBe(404);
      const response = await fetch(`http://127.0.0.1:${server.port}/api/v1/rules`, {
        headers: { 'x-api-key': BOOTSTRAP_KEY, 'x-tenant-id': 'acme' },
      });
      expect(response.status).toBe(200);
      const demo = await fetch(`http://127.0.0.1:${server.port}/api/v1/rules`, {
        headers: { 'x-api-key': BOOTSTRAP_KEY, 'x-tenant-id': 'demo' },
      });
      expect(demo.status).toBe(401);
      // Even at trace level, requests are logged without keys or bodies.
      expect(server.stdout()).toContain('/api/v1/validation/validate');
      expect(server.stdout()).not.toContain(BOOTSTRAP_KEY);
      expect(server.stdout()).not.toContain('PAYLOAD-MARKER-123');
    } finally {
      expect(await stop(server)).toBe(0);
    }
  });

  it('serves a published context without parsing the bundle\'s source map, which would stay on the main thread\'s heap', async () => {
    const own = await freshDatabase();
    const snapshots = await mkdtemp(join(tmpdir(), 'rules-heap-'));
    const server = await startServer(
      { ...databaseEnv(own), LOG_LEVEL: 'info', RULES_BOOTSTRAP_TENANTS: `acme:${BOOTSTRAP_KEY}` },
      ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`],
    );
    try {
      await untilListening(server);
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`http://127.0.0.1:${server.port}/api/v1${path}`, {
          method,
          headers: { 'x-api-key': BOOTSTRAP_KEY, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: response.status, body: await response.json() as Record<string, unknown> };
      };
      const rules = [{ code: 'LIMIT', name: 'Limit', expression: 'amount <= 10', message: 'Too much' }];
      expect((await call('POST', '/contexts/orders/import?publish=true', { format: 'rules/v1', rules })).status).toBe(200);
      expect((await call('POST', '/validation/validate', { context: 'orders', payload: { amount: 20 } })).body.isValid).toBe(false);
      expect((await call('POST', '/validation/validate', { context: 'unknown', payload: {} })).status).toBe(404);
      server.child.kill('SIGUSR2');
      const snapshot = await completeHeapSnapshot(snapshots);
      // Node's SourceMap: the parsed map, about 12 MB of small objects marked by every full collection.
      expect(objectsNamed(snapshot, 'SourceMap')).toBe(0);
      // The map itself is loaded, only not parsed: a stack trace would still name the TypeScript sources.
      expect(snapshot.strings).toContain(pathToFileURL(join(ROOT, 'src', 'server.ts')).href);
    } finally {
      expect(await stop(server)).toBe(0);
      await rm(snapshots, { recursive: true, force: true });
      await own.drop();
    }
  });

  it('keeps a bootstrap key revoked through the API revoked after a restart, and logs that it left it alone', async () => {
    const own = await freshDatabase();
    const env = { ...databaseEnv(own), LOG_LEVEL: 'info', RULES_BOOTSTRAP_TENANTS: `alpha:${BOOTSTRAP_KEY}` };
    const call = (server: Server, method: string, path: string, key: string, body?: unknown) => fetch(`http://127.0.0.1:${server.port}/api/v1${path}`, {
      method,
      headers: { 'x-api-key': key, 'x-tenant-id': 'alpha', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const first = await startServer(env);
    let second: Server | undefined;
    try {
      await untilListening(first);
      const created = await call(first, 'POST', '/api-keys', BOOTSTRAP_KEY, { name: 'second admin', role: 'admin' });
      expect(created.status).toBe(201);
      const secondKey = ((await created.json()) as { key: string }).key;
      const keys = (await (await call(first, 'GET', '/api-keys', secondKey)).json()) as { items: Array<{ id: string; name: string }> };
      const bootstrap = keys.items.find((key) => key.name === 'bootstrap admin')!;
      expect((await call(first, 'DELETE', `/api-keys/${bootstrap.id}`, secondKey)).status).toBe(204);
      expect((await call(first, 'GET', '/rules', BOOTSTRAP_KEY)).status).toBe(401);
      const auditBefore = await (await call(first, 'GET', '/audit', secondKey)).json() as { items: Array<{ action: string; target: string }> };
      expect(auditBefore.items[0]).toMatchObject({ action: 'key.revoke', target: bootstrap.id });
      expect(await stop(first)).toBe(0);

      second = await startServer(env);
      await untilListening(second);
      expect((await call(second, 'GET', '/rules', BOOTSTRAP_KEY)).status).toBe(401);
      const after = (await (await call(second, 'GET', '/api-keys', secondKey)).json()) as { items: Array<{ id: string; revokedAt: string | null }> };
      expect(after.items.find((key) => key.id === bootstrap.id)!.revokedAt).not.toBeNull();
      expect(await (await call(second, 'GET', '/audit', secondKey)).json()).toEqual(auditBefore);
      const leftAlone = second.stdout().split('\n').filter((line) => line.includes('left revoked')).map((line) => JSON.parse(line));
      expect(leftAlone).toEqual([expect.objectContaining({ level: 40, tenant: 'alpha', keyId: bootstrap.id })]);
      expect(second.stdout()).not.toContain(BOOTSTRAP_KEY);
    } finally {
      await stop(first);
      if (second !== undefined) expect(await stop(second)).toBe(0);
      await own.drop();
    }
  });

  // The bundle shares one import.meta.url among all its modules: what finds
  // files from it (the compiler's sources for standalone modules, the package
  // version) must still find them.
  it('serves from the bundle the standalone module of a context with patterns, and the package version in its OpenAPI document', async () => {
    const server = await startServer({ ...databaseEnv(db), LOG_LEVEL: 'warn', RULES_BOOTSTRAP_TENANTS: `acme:${BOOTSTRAP_KEY}` });
    const dir = await mkdtemp(join(tmpdir(), 'rules-bundle-'));
    try {
      await untilListening(server);
      const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> => {
        const response = await fetch(`http://127.0.0.1:${server.port}/api/v1${path}`, {
          method,
          headers: { 'x-api-key': BOOTSTRAP_KEY, 'x-tenant-id': 'acme', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: response.status, text: await response.text() };
      };
      const rules = [
        // A schema pattern (Ajv's regex engine) and a matches() on the linear-time engine (not provably linear natively).
        { code: 'ZIP', name: 'Zip', fieldPath: 'zip', schema: { type: 'string', pattern: '^[0-9]{5}$' } },
        { code: 'SLUG', name: 'Slug', fieldPath: 'slug', expression: 'matches($value, "^(?:[a-z0-9]+-?)*[a-z0-9]$")' },
      ];
      for (const rule of rules) {
        const created = await api('POST', '/rules', { context: 'bundle', ...rule });
        expect(created.status, created.text).toBe(201);
      }
      expect((await api('POST', '/contexts/bundle/publish')).status).toBe(200);
      const module = await api('GET', '/contexts/bundle/validator?format=module');
      expect(module.status, module.text).toBe(200);
      const file = join(dir, 'validator.mjs');
      await writeFile(file, module.text);
      const { validate } = (await import(pathToFileURL(file).href)) as { validate: (payload: unknown) => unknown };
      const payloads = [{ zip: '12345', slug: 'a-b' }, { zip: '1234x', slug: 'a--b' }, { zip: 12345, slug: '-a' }];
      const failing = [];
      for (const payload of payloads) {
        const answered = await api('POST', '/validation/validate', { context: 'bundle', payload });
        expect(answered.status, answered.text).toBe(200);
        const { executionTimeMs, ...result } = JSON.parse(answered.text) as Record<string, unknown>;
        expect(typeof executionTimeMs).toBe('number');
        expect(JSON.stringify(validate(payload))).toBe(JSON.stringify(result));
        failing.push((result.failures as { ruleCode: string }[]).map((f) => f.ruleCode));
      }
      // Equal priorities run in code order.
      expect(failing).toEqual([[], ['SLUG', 'ZIP'], ['SLUG', 'ZIP']]);

      const docs = await fetch(`http://127.0.0.1:${server.port}/docs/json`);
      const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
      expect(((await docs.json()) as { info: { version: string } }).info.version).toBe(version);
    } finally {
      expect(await stop(server)).toBe(0);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('finishes a request in flight on SIGTERM with Connection: close, ignores a second SIGTERM, then exits 0', async () => {
    const server = await startServer({ ...databaseEnv(db), LOG_LEVEL: 'silent', RULES_BOOTSTRAP_TENANTS: `acme:${BOOTSTRAP_KEY}` });
    await untilListening(server);
    const body = JSON.stringify({ context: 'none', payload: { a: 1 } });
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += String(chunk)));
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    await new Promise<void>((done) => socket.once('connect', () => done()));
    // Half a request: the server has it in flight until the body completes.
    socket.write(
      [
        'POST /api/v1/validation/validate HTTP/1.1',
        'Host: 127.0.0.1',
        `X-Api-Key: ${BOOTSTRAP_KEY}`,
        'X-Tenant-Id: acme',
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        '',
        body.slice(0, 10),
      ].join('\r\n'),
    );
    await new Promise((done) => setTimeout(done, 200));
    server.child.kill('SIGTERM');
    await untilRefused(server.port);
    server.child.kill('SIGTERM');
    expect(server.child.exitCode).toBeNull();

    socket.write(body.slice(10));
    await closed;
    const [head, answer] = received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 404/);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(answer).code).toBe('CONTEXT_NOT_FOUND');
    expect(await server.exited).toBe(0);
  });

  it('stops anyway after SHUTDOWN_TIMEOUT_MS when a request never completes', async () => {
    const server = await startServer({
      ...databaseEnv(db),
      LOG_LEVEL: 'silent',
      SHUTDOWN_TIMEOUT_MS: '300',
      RULES_BOOTSTRAP_TENANTS: `acme:${BOOTSTRAP_KEY}`,
    });
    await untilListening(server);
    const socket: Socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise<void>((done) => socket.once('connect', () => done()));
    socket.write('POST /api/v1/validation/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    await new Promise((done) => setTimeout(done, 200));
    server.child.kill('SIGTERM');
    expect(await server.exited).not.toBeNull();
    socket.destroy();
  });
});

/** Resolves once new connections to the port are refused (the server stopped accepting). */
async function untilRefused(port: number): Promise<void> {
  for (;;) {
    const refused = await new Promise<boolean>((done) => {
      const probe = connect(port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        done(false);
      });
      probe.once('error', () => done(true));
    });
    if (refused) return;
    await new Promise((done) => setTimeout(done, 50));
  }
}
