/**
 * The only body parser: JSON, under one strictly matched media type.
 *
 * Fastify's own matching normalizes the header before comparing, which is
 * where its content-type CVEs came from (SECURITY-NOTES 5.2: casing, a tab
 * before `;`, `application/json whatever`, a leading space). The raw header
 * is therefore matched again here, exactly: `application/json`, optionally
 * `;charset=utf-8`, any letter case. Everything else is 415, including a
 * body without a Content-Type (no parser matches the empty type).
 *
 * JSON text must be UTF-8 (RFC 8259 8.1). Decoding invalid bytes would turn
 * them into U+FFFD, so different byte strings would reach the rules as one
 * string; such bodies are refused instead.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../errors.ts';
import { findPrototypeKey, mayHavePrototypeKeys } from './prototype-keys.ts';

const JSON_MEDIA_TYPE = /^application\/json(?:; *charset=(?:utf-8|"utf-8"))?$/i;

/** True for the Content-Type values the service accepts. */
export function isJsonContentType(header: string | undefined): boolean {
  return header !== undefined && JSON_MEDIA_TYPE.test(header);
}

/**
 * Parses a request body. An empty body is `undefined` (bodyless POSTs such
 * as publish may still send the header); route schemas decide whether a body
 * is required. Throws ProblemError 400 for bad JSON and poisoning keys.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProblemError('INVALID_BODY', 'The request body is not valid JSON.', [
      { path: '', message: 'must be valid JSON' },
    ]);
  }
  if (mayHavePrototypeKeys(text)) {
    const path = findPrototypeKey(value);
    if (path !== undefined) {
      throw new ProblemError('INVALID_BODY', 'The request body holds a forbidden key.', [
        { path, message: 'is a forbidden key (prototype poisoning)' },
      ]);
    }
  }
  return value;
}

/**
 * Decodes a request body, refusing bytes that are not UTF-8 with a 400.
 *
 * @example
 * decodeUtf8Body(Buffer.from([0x7b, 0x7d])); // '{}'
 */
export function decodeUtf8Body(body: Buffer): string {
  if (!isUtf8(body)) {
    throw new ProblemError('INVALID_BODY', 'The request body is not valid UTF-8.', [
      { path: '', message: 'must be valid UTF-8' },
    ]);
  }
  return body.toString('utf8');
}

/** Replaces Fastify's parsers (JSON and text/plain) with the strict JSON parser. */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) => {
      if (!isJsonContentType(request.headers['content-type'])) {
        done(new ProblemError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as Content-Type: application/json.'));
        return;
      }
      try {
        done(null, parseJsonBody(typeof body === 'string' ? body : decodeUtf8Body(body)));
      } catch (error) {
        done(error as Error);
      }
    },
  );
}
