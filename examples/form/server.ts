/**
 * The order form's static server: builds the page (./build.ts) and serves it
 * on its own origin, with `/config.json` telling the page where the rules
 * service is. The page calls the service from another origin, as a shop's
 * page would, so the tenant must allow this origin (PUT /api/v1/tenant/cors).
 *
 *   node --import tsx examples/form/server.ts --service http://127.0.0.1:3000 \
 *     --tenant demo --context orders --key rk_... --public-key <base64>
 *
 * (see README.md). `--port` (default 5173) and `--host` (default 127.0.0.1)
 * say where it listens.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { buildFormPage } from './build.ts';
import { SERVICE_OPTIONS, startedAsScript } from './cli.ts';
import type { FormConfig } from './page/config.ts';

export type { FormConfig };

export interface FormServer {
  /** The page's address, e.g. http://127.0.0.1:5173 (its origin: what the tenant's CORS list must hold). */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The page's content-security policy: its own script, the validator's
 * verified modules (imported from `data:` URLs), and connections to itself
 * and the service only.
 */
function contentSecurityPolicy(serviceUrl: string): string {
  return [
    "default-src 'none'", "script-src 'self' data:", "style-src 'self'", `connect-src 'self' ${new URL(serviceUrl).origin}`,
    "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
  ].join('; ');
}

/** Builds the page and serves it until closed. */
export async function startFormServer(options: { config: FormConfig; port?: number; host?: string }): Promise<FormServer> {
  const files = await buildFormPage();
  const policy = contentSecurityPolicy(options.config.serviceUrl);
  const server: Server = createServer((request, response) => {
    const urlPath = new URL(request.url ?? '/', 'http://page').pathname;
    // Written per request: a caller that learns its key only once the page's origin is known (the port was 0) fills it in after the start.
    const file = urlPath === '/config.json'
      ? { contentType: 'application/json', body: Buffer.from(JSON.stringify(options.config)) }
      : files.get(urlPath);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (file === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
    } else {
      response.writeHead(200, {
        'content-type': file.contentType, 'cache-control': 'no-cache', 'content-security-policy': policy, 'x-content-type-options': 'nosniff',
      }).end(request.method === 'HEAD' ? undefined : file.body);
    }
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 5173, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

if (startedAsScript(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      ...SERVICE_OPTIONS,
      key: { type: 'string' },
      'public-key': { type: 'string' },
      port: { type: 'string', default: '5173' },
      host: { type: 'string', default: '127.0.0.1' },
    },
  });
  if (values.key === undefined || values['public-key'] === undefined) {
    console.error('usage: server.ts --key <client key> --public-key <signing key> [--service URL] [--tenant ID] [--context NAME] [--port N]');
    process.exit(2);
  }
  const page = await startFormServer({
    config: { serviceUrl: values.service, tenantId: values.tenant, context: values.context, clientKey: values.key, publicKey: values['public-key'] },
    port: Number(values.port),
    host: values.host,
  });
  console.log(`order form on ${page.url} (allow this origin: PUT /api/v1/tenant/cors)`);
}
