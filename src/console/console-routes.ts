/**
 * The console at /console: the static files `npm run build` writes
 * (console/build.ts), served by @fastify/static. Nothing here is under
 * /api/v1, so no key is needed for the page itself: everything the page
 * does, it does through the API with the key the user types in.
 *
 * - `GET /console` (and `/console/`): `index.html`, read at each request
 *   (so a rebuild is served without a restart) and never cached, since it
 *   names the current assets.
 * - `GET /console/assets/<name>-<hash>.js|css`: cached for a year and
 *   immutable (the name changes with the content), gzipped when the
 *   browser accepts it.
 * - Every answer of this plugin carries CONSOLE_HEADERS: a content
 *   security policy that lets the page run only scripts from the service
 *   (no inline script, no eval), and no framing. The hook is this plugin's
 *   own, so no other route (the validation route and its fast lane
 *   included) sees it.
 *
 * When the console was not built, /console is a 404 problem saying so.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sourceRoot } from '../../compiler/source-files.ts';
import { PROBLEMS } from '../errors.ts';
import { sendProblem } from '../http/error-handler.ts';

/**
 * The console's content security policy. Styles allow 'unsafe-inline'
 * because the code editor sets style attributes and style elements;
 * nothing allows inline or evaluated script.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

/** Headers on every answer under /console. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
});

/**
 * Where the console is when CONSOLE_DIR is unset: `dist/console` of the
 * checkout, where `npm run build` writes it (or of the working directory,
 * when the service runs without its sources; /console then says whether
 * it finds a console there).
 */
export function defaultConsoleDir(): string {
  try {
    return path.join(sourceRoot(), 'dist', 'console');
  } catch {
    return path.resolve('dist', 'console');
  }
}

export interface ConsoleRoutesOptions {
  /** The built console's folder (holding index.html and assets/). */
  dir: string;
}

const HIDDEN = { schema: { hide: true } } as const;

/**
 * Registers GET /console, /console/ and /console/assets/*.
 *
 * @example
 * await app.register(consoleRoutes, { dir: config.consoleDir ?? defaultConsoleDir() });
 */
export const consoleRoutes: FastifyPluginAsync<ConsoleRoutesOptions> = async (app, { dir }) => {
  const indexFile = path.join(dir, 'index.html');

  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(CONSOLE_HEADERS);
    done();
  });

  const sendPage = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    let page: Buffer;
    try {
      page = await readFile(indexFile);
    } catch {
      return sendProblem(request, reply, PROBLEMS.consoleNotBuilt());
    }
    return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(page);
  };
  app.get('/console', HIDDEN, sendPage);
  app.get('/console/', HIDDEN, sendPage);

  await app.register(fastifyStatic, {
    root: path.join(dir, 'assets'),
    prefix: '/console/assets/',
    decorateReply: false,
    index: false,
    list: false,
    redirect: false,
    preCompressed: true,
    cacheControl: true,
    immutable: true,
    maxAge: 365 * 24 * 60 * 60 * 1000,
    // A missing folder is the "not built" case above, not a warning at every start.
    suppressWarning: true,
  });
};
