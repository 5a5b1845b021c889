/**
 * The client package as users get it: `npm pack` in clients/typescript
 * builds it and packs JavaScript with declarations and its README; the
 * built JavaScript, imported by plain Node (no TypeScript loader), talks to
 * the real server; and nothing in it imports a Node built-in, so the same
 * files run in browsers.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ok } from '../support/expect-response.ts';

const run = promisify(execFile);
const PACKAGE_DIR = fileURLToPath(new URL('../../clients/typescript/', import.meta.url));

let t: TestApp;
let packDir: string;
let packed: { filename: string; files: Array<{ path: string }> };

beforeAll(async () => {
  packDir = mkdtempSync(join(tmpdir(), 'rules-client-pack-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: PACKAGE_DIR });
  // npm prints the prepack build's output before the JSON.
  packed = JSON.parse(stdout.slice(stdout.indexOf('[')))[0];
  t = await startTestApp();
  await ok(t.request('POST', '/api/v1/rules', { body: { context: 'orders', code: 'MAX', name: 'Max', fieldPath: 'total', expression: '$value <= 100' } }), 201);
  await ok(t.request('POST', '/api/v1/contexts/orders/publish'));
}, 180_000);
afterAll(async () => {
  rmSync(packDir, { recursive: true, force: true });
  await t?.close();
});

describe('npm pack of clients/typescript', () => {
  it('packs built JavaScript with declarations and the README, and no sources', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/local/local-validator.js']));
    expect(paths.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))).toEqual([]);
    expect(readdirSync(packDir)).toEqual([packed.filename]);
  });

  it('imports no Node built-in anywhere in the built JavaScript', () => {
    const js = packed.files.map((file) => file.path).filter((path) => path.endsWith('.js'));
    for (const path of js) {
      const text = readFileSync(join(PACKAGE_DIR, path), 'utf8');
      expect(text, path).not.toMatch(/from ['"]node:|require\(|from ['"](fs|path|http|https|net|crypto|url|os)['"]/);
    }
  });

  it('validates against the live server from the built JavaScript in plain Node', async () => {
    const script = `
      const { createRulesClient, RulesApiError } = await import(${JSON.stringify(join(PACKAGE_DIR, 'dist', 'index.js'))});
      const client = createRulesClient({ baseUrl: process.env.BASE, tenantId: process.env.TENANT, apiKey: process.env.KEY });
      const answer = await client.validate({ context: 'orders', payload: { total: 500 } });
      const error = await client.validate({ context: 'nowhere', payload: {} }).catch((e) => e);
      console.log(JSON.stringify({ isValid: answer.isValid, codes: answer.failures.map((f) => f.ruleCode), error: error instanceof RulesApiError ? error.code : String(error) }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, BASE: t.baseUrl, TENANT: t.tenantId, KEY: t.adminKey },
    });
    expect(JSON.parse(stdout)).toEqual({ isValid: false, codes: ['MAX'], error: 'CONTEXT_NOT_FOUND' });
  });
});
