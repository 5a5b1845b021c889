/**
 * One error handler and one not-found handler for the whole service: every
 * error leaves as problem+json (product.md 7) from here. Unknown errors are
 * logged and answered with a generic 500, never with their message, stack,
 * SQL or anything else they might carry.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ERRORS,
  PROBLEM_CONTENT_TYPE,
  ProblemError,
  problemBody,
  type ErrorCode,
  type FieldError,
} from '../errors.ts';
import {
  ConflictError,
  InvalidInputError,
  LimitExceededError,
  NotFoundError,
  UnavailableError,
} from '../storage/types.ts';
import { nextRequestId } from './request-id.ts';
import { serverTiming } from './request-timing.ts';
import { schemaErrorsToFieldErrors, type SchemaErrorLike } from './schema-errors.ts';

/** Seconds a client should wait after a 503 (product.md 9: the database recovers within 10 s). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** A problem ready to send. */
export interface ProblemReply {
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
}

const VALIDATION_DETAIL: Record<string, string> = {
  body: 'The request body is invalid.',
  querystring: 'The query string is invalid.',
  params: 'The path parameters are invalid.',
  headers: 'The request headers are invalid.',
};

// Fastify's own errors that reach the handler, by code.
const FASTIFY_CODES: Record<string, ProblemReply> = {
  FST_ERR_BAD_URL: {
    code: 'INVALID_BODY',
    detail: 'The URL is malformed: a path segment is not valid percent-encoded UTF-8.',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', detail: 'The request body is larger than the limit.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    detail: 'Send the body as Content-Type: application/json.',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'INVALID_BODY',
    detail: 'The Content-Length header does not match the body.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: 'INVALID_BODY',
    detail: 'The request body is empty.',
    errors: [{ path: '', message: 'is required' }],
  },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    code: 'INVALID_BODY',
    detail: 'The request body is not valid JSON.',
    errors: [{ path: '', message: 'must be valid JSON' }],
  },
};

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

/** Maps any thrown value to the problem it is answered with; undefined means an unexpected error (500). */
export function toProblem(error: unknown): ProblemReply | undefined {
  if (error instanceof ProblemError) {
    return { code: error.code, detail: error.detail, errors: error.errors, headers: error.headers };
  }
  if (error instanceof UnavailableError) return unavailable();
  if (error instanceof NotFoundError) return { code: 'NOT_FOUND', detail: error.message };
  if (error instanceof ConflictError) return { code: 'CONFLICT', detail: error.message };
  if (error instanceof LimitExceededError) return { code: 'LIMIT_EXCEEDED', detail: error.message };
  if (error instanceof InvalidInputError) {
    return { code: 'INVALID_BODY', detail: error.message, errors: [{ path: error.path, message: error.message }] };
  }
  if (typeof error !== 'object' || error === null) return undefined;

  const fastifyError = error as Partial<FastifyError> & { validation?: SchemaErrorLike[] };
  if (Array.isArray(fastifyError.validation)) {
    return {
      code: 'INVALID_BODY',
      detail: VALIDATION_DETAIL[fastifyError.validationContext ?? 'body'] ?? VALIDATION_DETAIL.body,
      errors: schemaErrorsToFieldErrors(fastifyError.validation),
    };
  }
  if (typeof fastifyError.code === 'string' && Object.hasOwn(FASTIFY_CODES, fastifyError.code)) {
    return FASTIFY_CODES[fastifyError.code];
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Other client errors raised by Fastify or Node (bad headers, aborted
    // bodies): their messages are generic, but the registry's own titles are
    // used instead so nothing unreviewed reaches a client.
    const code = CODE_BY_STATUS[status] ?? 'INVALID_BODY';
    return { code, detail: `${ERRORS[code].title}.` };
  }
  return undefined;
}

/** The 503 answer for an unreachable database. */
export function unavailable(): ProblemReply {
  return {
    code: 'SERVICE_UNAVAILABLE',
    detail: 'The database is unavailable; retry shortly.',
    headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
  };
}

/** Sends a problem+json response. Hooks use it directly to avoid throwing on hot failure paths. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: ProblemReply): FastifyReply {
  if (problem.headers !== undefined) reply.headers(problem.headers);
  return reply
    .code(ERRORS[problem.code].status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemBody(problem.code, problem.detail, request.id, problem.errors));
}

const INTERNAL: ProblemReply = { code: 'INTERNAL', detail: 'An internal error occurred; it has been logged.' };

/** Installs the error and not-found handlers on the root instance. */
export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const problem = toProblem(error);
    if (problem === undefined) {
      request.log.error({ err: error }, 'unexpected error');
      return sendProblem(request, reply, INTERNAL);
    }
    if (problem.code === 'SERVICE_UNAVAILABLE') request.log.warn({ err: error }, 'database unavailable');
    return sendProblem(request, reply, problem);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, { code: 'NOT_FOUND', detail: 'No such route.' }),
  );
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a
 * malformed URL), answered in the same shape. `request.id` exists already.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const problem = toProblem(error) ?? { code: 'INVALID_BODY', detail: 'The request is malformed.' };
  // Hooks do not run for these requests, so the timing header is set here.
  reply.header('server-timing', serverTiming(0));
  sendProblem(request, reply, problem);
}

const CLIENT_ERROR_DETAIL: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request headers are too large.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request took too long to arrive.',
};

/**
 * Fastify's `clientErrorHandler` option: requests Node's HTTP parser
 * refuses (bad framing, oversized headers, too slow), which never become
 * Fastify requests. Answered as a problem on the raw socket, then closed.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const detail = CLIENT_ERROR_DETAIL[error.code ?? ''] ?? 'The request is malformed.';
    const body = JSON.stringify(problemBody('INVALID_BODY', detail, nextRequestId()));
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Server-Timing: ${serverTiming(0)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
