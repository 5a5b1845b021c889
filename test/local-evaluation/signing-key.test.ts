/**
 * The module signing key (docs/operations.md, "Signing keys"): made at the
 * first start and kept in the database, the same after a restart and for
 * the CLI (`signing-key`, on the database and with --url); or the
 * operators' own from SIGNING_PRIVATE_KEY_FILE, checked at start.
 */
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { cliRunner } from '../support/cli.ts';
import { ok } from '../support/expect-response.ts';

describe('the stored signing key', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is the same after a restart, and the CLI prints it on the database and through the service', async () => {
    const served = await ok(t.request('GET', '/api/v1/signing-key'));
    expect(served).toMatchObject({ algorithm: 'Ed25519', keyId: expect.stringMatching(/^ed25519:[0-9a-f]{16}$/) });
    expect(served.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(Buffer.from(served.publicKey, 'base64')).toHaveLength(32);

    const { run, runJson } = cliRunner(() => ({ RULES_DATA_DIR: t.database.dataDir, DATABASE_URL: t.database.databaseUrl ?? '' }));
    let local: unknown;
    let text = '';
    await t.restart(async () => {
      local = await runJson('signing-key');
      text = (await run('signing-key')).stdout;
    });
    expect(local).toEqual(served);
    expect(text).toContain(`Key id: ${served.keyId}`);
    expect(text).toContain(served.publicKeyPem.trimEnd());
    expect(await ok(t.request('GET', '/api/v1/signing-key'))).toEqual(served);
    expect(await runJson('signing-key', t.tenantId, '--url', t.baseUrl, '--key', t.adminKey)).toEqual(served);
    expect((await run('signing-key', '--url', t.baseUrl, '--key', t.adminKey)).code).toBe(2);
  });
});

describe('a configured signing key', () => {
  let t: TestApp;
  let dir: string;
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'signing-'));
    await writeFile(join(dir, 'signing.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    t = await startTestApp({ env: { SIGNING_PRIVATE_KEY_FILE: join(dir, 'signing.pem') } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('signs the modules and is the one served', async () => {
    const served = await ok(t.request('GET', '/api/v1/signing-key'));
    expect(served.publicKeyPem).toBe(publicKey.export({ type: 'spki', format: 'pem' }));
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'orders', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' } }), 201);
    await ok(t.request('POST', '/api/v1/contexts/orders/publish'));
    const module = await t.request('GET', '/api/v1/contexts/orders/validator?format=module');
    expect(module.status).toBe(200);
    expect(module.headers.get('x-rules-signing-key-id')).toBe(served.keyId);
    const signature = Buffer.from(module.headers.get('x-rules-signature')!, 'base64');
    expect(verify(null, Buffer.from(module.text), createPublicKey(served.publicKeyPem), signature)).toBe(true);
  });

  it('stops the start when the file is missing or holds another kind of key', async () => {
    expect(() => loadConfig({ SIGNING_PRIVATE_KEY_FILE: join(dir, 'missing.pem') })).toThrow(ConfigError);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    await writeFile(join(dir, 'rsa.pem'), rsa);
    expect(() => loadConfig({ SIGNING_PRIVATE_KEY_FILE: join(dir, 'rsa.pem') })).toThrow(/must hold an Ed25519 private key, got rsa/);
    await writeFile(join(dir, 'junk.pem'), 'not a key');
    expect(() => loadConfig({ SIGNING_PRIVATE_KEY_FILE: join(dir, 'junk.pem') })).toThrow(/PEM/);
  });
});
