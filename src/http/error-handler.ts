/**
 * One error handler and one not-found handler for the whole service: every
 * error leaves as problem+json (docs/api.md) from here. Unknown errors are
 * logged and answered with a generic 500, never with their message, stack,
 * SQL or anything else they might carry.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ERRORS,
  PROBLEM_CONTENT_TYPE,
  PROBLEMS,
  ProblemError,
  problemBody,
  type ErrorCode,
  type ProblemSpec,
} from '../errors.ts';
import { domainProblem } from './problem-mapping.ts';
import { nextRequestId } from './request-id.ts';
import { serverTiming } from './request-timing.ts';
import { schemaErrorsToFieldErrors, type SchemaErrorLike } from './schema-errors.ts';

/** The problem of a failed schema validation, by the part of the request it checked. */
const SCHEMA_PROBLEMS: Record<string, typeof PROBLEMS.invalidBody> = {
  body: PROBLEMS.invalidBody,
  querystring: PROBLEMS.invalidQuery,
  params: PROBLEMS.invalidParams,
  headers: PROBLEMS.invalidHeaders,
};

// Fastify's own errors that reach the handler, by code.
const FASTIFY_CODES: Record<string, ProblemSpec> = {
  FST_ERR_BAD_URL: PROBLEMS.malformedUrl(),
  FST_ERR_CTP_BODY_TOO_LARGE: PROBLEMS.bodyTooLarge(),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: PROBLEMS.notJson(),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: PROBLEMS.contentLengthMismatch(),
  FST_ERR_CTP_EMPTY_JSON_BODY: PROBLEMS.bodyEmpty(),
  FST_ERR_CTP_INVALID_JSON_BODY: PROBLEMS.bodyNotJson(),
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
export function toProblem(error: unknown): ProblemSpec | undefined {
  if (error instanceof ProblemError) return error;
  const domain = domainProblem(error);
  if (domain !== undefined) return domain;
  if (typeof error !== 'object' || error === null) return undefined;

  const fastifyError = error as Partial<FastifyError> & { validation?: SchemaErrorLike[] };
  if (Array.isArray(fastifyError.validation)) {
    const problem = SCHEMA_PROBLEMS[fastifyError.validationContext ?? 'body'] ?? SCHEMA_PROBLEMS.body;
    return problem(schemaErrorsToFieldErrors(fastifyError.validation));
  }
  if (typeof fastifyError.code === 'string' && Object.hasOwn(FASTIFY_CODES, fastifyError.code)) {
    return FASTIFY_CODES[fastifyError.code];
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Other client errors raised by Fastify or Node (bad headers, aborted
    // bodies): their messages are generic, but the catalogue's default
    // details are used instead so nothing unreviewed reaches a client.
    return PROBLEMS.clientError(CODE_BY_STATUS[status] ?? 'INVALID_BODY');
  }
  return undefined;
}

/** Sends a problem+json response. Hooks use it directly to avoid throwing on hot failure paths. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: ProblemSpec): FastifyReply {
  if (problem.headers !== undefined) reply.headers(problem.headers);
  return reply
    .code(ERRORS[problem.code].status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemBody(problem.code, problem.detail, request.id, problem.errors, problem.currentVersion));
}

const INTERNAL = PROBLEMS.internal();
const NO_SUCH_ROUTE = PROBLEMS.noSuchRoute();

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
    sendProblem(request, reply, NO_SUCH_ROUTE),
  );
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a
 * malformed URL), answered in the same shape. `request.id` exists already.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const problem = toProblem(error) ?? PROBLEMS.malformedRequest();
  // Hooks do not run for these requests, so the timing header is set here.
  reply.header('server-timing', serverTiming(0));
  sendProblem(request, reply, problem);
}

// Requests Node's HTTP parser refused, by the code of its error.
const CLIENT_ERRORS: Record<string, ProblemSpec> = {
  HPE_HEADER_OVERFLOW: PROBLEMS.headersTooLarge(),
  ERR_HTTP_REQUEST_TIMEOUT: PROBLEMS.requestTooSlow(),
};
const MALFORMED_REQUEST = PROBLEMS.malformedRequest();

/**
 * Fastify's `clientErrorHandler` option: requests Node's HTTP parser
 * refuses (bad framing, oversized headers, too slow), which never become
 * Fastify requests. Answered as a problem on the raw socket, then closed.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const problem = error.code !== undefined && Object.hasOwn(CLIENT_ERRORS, error.code) ? CLIENT_ERRORS[error.code] : MALFORMED_REQUEST;
    const body = JSON.stringify(problemBody(problem.code, problem.detail, nextRequestId()));
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Server-Timing: ${serverTiming(0)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
