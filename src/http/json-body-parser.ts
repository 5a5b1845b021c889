/**
 * The body parsers: JSON, under one strictly matched media type (and, for
 * PATCH routes only, JSON merge patches under theirs).
 *
 * Fastify's own matching normalizes the header before comparing, which is
 * where its content-type CVEs came from (SECURITY-NOTES 5.2: casing, a tab
 * before `;`, `application/json whatever`, a leading space). The raw header
 * is therefore matched again here, exactly: `application/json`, optionally
 * `;charset=utf-8`, any letter case. Everything else is 415, including a
 * body without a Content-Type (no parser matches the empty type).
 *
 * Bodies are read as sent: a Content-Encoding other than `identity` (gzip,
 * deflate, br...) is 415 (RFC 9110 15.5.16), so a compressed body is never
 * parsed as JSON text, nor a plain one labelled compressed taken as sent.
 *
 * JSON text must be UTF-8 (RFC 8259 8.1). Decoding invalid bytes would turn
 * them into U+FFFD, so different byte strings would reach the rules as one
 * string; such bodies are refused instead.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PROBLEMS, ProblemError, type ProblemSpec } from '../errors.ts';
import { findPrototypeKey, mayHavePrototypeKeys } from './prototype-keys.ts';

const JSON_MEDIA_TYPE = /^application\/json(?:; *charset=(?:utf-8|"utf-8"))?$/i;

// The last header the pattern accepted. Clients send the same header on
// every request, and comparing it with this string costs less than half of
// the regex. Only exact string equality reuses the answer, so nothing is
// normalized and the match stays as strict as the pattern.
let lastAccepted = 'application/json';

/** True for the Content-Type values the service accepts. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === lastAccepted) return true;
  if (header === undefined || !JSON_MEDIA_TYPE.test(header)) return false;
  lastAccepted = header;
  return true;
}

const IDENTITY_ENCODING = /^identity$/i;
const BYTE_ORDER_MARK = 0xfeff;

/** True when the body is sent as it is: no Content-Encoding, or `identity`. */
export function isIdentityEncoding(header: string | undefined): boolean {
  return header === undefined || IDENTITY_ENCODING.test(header);
}

/**
 * Parses a request body. An empty body is `undefined` (bodyless POSTs such
 * as publish may still send the header); route schemas decide whether a body
 * is required. Throws ProblemError 400 for bad JSON and poisoning keys.
 *
 * One leading byte order mark is skipped, as RFC 8259 8.1 allows a parser
 * to: some clients (.NET, PowerShell) write one, and JSON.parse alone
 * calls such a body invalid.
 */
export function parseJsonBody(body: string): unknown {
  const text = body.charCodeAt(0) === BYTE_ORDER_MARK ? body.slice(1) : body;
  if (text.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProblemError(PROBLEMS.bodyNotJson());
  }
  if (mayHavePrototypeKeys(text)) {
    const path = findPrototypeKey(value);
    if (path !== undefined) {
      throw new ProblemError(PROBLEMS.forbiddenKey(path));
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
  // ASCII bytes read the same as UTF-8 and as latin1, and latin1 decoding
  // is a copy where V8's UTF-8 decoder goes byte by byte; most bodies are
  // ASCII (JSON encoders often escape everything else as \uXXXX).
  if (isAscii(body)) return body.toString('latin1');
  if (!isUtf8(body)) {
    throw new ProblemError(PROBLEMS.bodyNotUtf8());
  }
  return body.toString('utf8');
}

type ParserDone = (error: Error | null, body?: unknown) => void;

/** The 415 of a body sent under another media type (`accepts` matches the raw header) or compressed; undefined when it may be read. */
function transportRefusal(request: FastifyRequest, accepts: (header: string | undefined) => boolean, wrongType: () => ProblemSpec): ProblemError | undefined {
  if (!accepts(request.headers['content-type'])) return new ProblemError(wrongType());
  if (!isIdentityEncoding(request.headers['content-encoding'])) return new ProblemError(PROBLEMS.encodedBody());
  return undefined;
}

/**
 * The parser of one strictly matched JSON media type: `accepts` matches the
 * raw header again, `wrongType` is the 415 for everything else. Body limit
 * (the instance's bodyLimit), encoding, UTF-8 and prototype-poisoning rules
 * are the same for every JSON media type.
 */
function strictJsonParser(accepts: (header: string | undefined) => boolean, wrongType: () => ProblemSpec) {
  return (request: FastifyRequest, body: string | Buffer, done: ParserDone): void => {
    const refusal = transportRefusal(request, accepts, wrongType);
    if (refusal !== undefined) {
      done(refusal);
      return;
    }
    try {
      done(null, parseJsonBody(typeof body === 'string' ? body : decodeUtf8Body(body)));
    } catch (error) {
      done(error as Error);
    }
  };
}

/**
 * A JSON body kept as the bytes sent, for a route that reads it on a
 * management thread (an import's rules file: src/pool/tasks/import-body.ts
 * parses it there with parseJsonBody and the same checks). Its only field is
 * private, so hooks that walk a parsed body (storable-text.ts) find nothing
 * to walk.
 */
export class RawJsonBody {
  readonly #bytes: Buffer;

  constructor(bytes: Buffer) {
    this.#bytes = bytes;
  }

  /** The body as sent (at most the body limit). */
  get bytes(): Buffer {
    return this.#bytes;
  }
}

/**
 * Makes `scope` (an encapsulated plugin) keep JSON bodies as their bytes
 * (RawJsonBody) instead of parsing them: the same strict media type,
 * encoding and body limit as every JSON body; UTF-8, JSON and poisoning
 * keys are then checked where the body is read.
 */
export function registerRawJsonBodyParser(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request: FastifyRequest, body: string | Buffer, done: ParserDone) => {
    const refusal = transportRefusal(request, isJsonContentType, PROBLEMS.notJson);
    if (refusal !== undefined) done(refusal);
    else done(null, new RawJsonBody(typeof body === 'string' ? Buffer.from(body) : body));
  });
}

/** Replaces Fastify's parsers (JSON and text/plain) with the strict JSON parser. */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, strictJsonParser(isJsonContentType, PROBLEMS.notJson));
}

const MERGE_PATCH_MEDIA_TYPE = /^application\/merge-patch\+json(?:; *charset=(?:utf-8|"utf-8"))?$/i;

/** True for the Content-Type values of a JSON merge patch (RFC 7396), matched as strictly as JSON's. */
export function isMergePatchContentType(header: string | undefined): boolean {
  return header !== undefined && MERGE_PATCH_MEDIA_TYPE.test(header);
}

/**
 * Makes `scope` (an encapsulated plugin holding PATCH routes) take JSON
 * merge patches (RFC 7396) only: `application/merge-patch+json`, parsed
 * exactly as JSON bodies are. Any other type, application/json included,
 * is 415 naming the type to send; the rest of the service never accepts a
 * merge patch.
 */
export function registerMergePatchBodyParser(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    'application/merge-patch+json',
    { parseAs: 'buffer' },
    strictJsonParser(isMergePatchContentType, PROBLEMS.notMergePatch),
  );
  // Everything else, a body without a type included: refused before it is read.
  scope.addContentTypeParser('*', (_request: FastifyRequest, _payload: unknown, done: ParserDone) => {
    done(new ProblemError(PROBLEMS.notMergePatch()));
  });
  // A Content-Type Fastify cannot even parse is refused before any parser
  // runs, with the error the root handler answers as "send JSON": here it
  // names the merge-patch type. Anything else goes on to the root handler.
  scope.setErrorHandler((error) => {
    throw (error as { code?: unknown }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? new ProblemError(PROBLEMS.notMergePatch()) : error;
  });
}
