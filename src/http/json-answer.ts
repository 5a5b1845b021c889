/**
 * Sends an answer a management thread already wrote as JSON
 * (src/pool/answer-json.ts), as it is: the same body and Content-Type as
 * Fastify's serializer would give, without the event loop parsing or
 * serializing it. The route's response schema still describes the answer
 * (the OpenAPI document); Fastify does not serialize a Buffer.
 *
 * A large answer (a stored-test run with explain is up to
 * OPERATION_ANSWER_MAX_BYTES, 4 MiB by default) goes out in pieces, each
 * written when the socket has taken the one before, with its
 * Content-Length as for any other answer: one write of megabytes held the
 * event loop in the kernel for as long as the copy took (tens of
 * milliseconds on a busy machine), and every validation waited.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** An answer as JSON text in UTF-8, ready to send. */
export interface AnswerJson {
  json: Uint8Array;
}

/** Fastify's Content-Type for what it serializes as JSON. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Answers up to this size go out in one write; larger ones in pieces of this size. */
export const ANSWER_PIECE_BYTES = 64 * 1024;

/**
 * Sends the bytes with the JSON Content-Type; return its result from the handler.
 *
 * @example
 * return sendAnswerJson(reply, await pool.operation(tenantId, OPERATIONS.diff, (run) => run('diff', input, undefined, form)));
 */
export function sendAnswerJson(reply: FastifyReply, answer: AnswerJson): FastifyReply {
  const { json } = answer;
  const bytes = Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  reply.type(JSON_CONTENT_TYPE);
  if (bytes.byteLength <= ANSWER_PIECE_BYTES) return reply.send(bytes);
  // Fastify keeps a Content-Length set for a stream (and then sends no chunked encoding).
  return reply.header('content-length', String(bytes.byteLength)).send(Readable.from(pieces(bytes), { objectMode: false }));
}

function* pieces(bytes: Buffer): Generator<Buffer> {
  for (let at = 0; at < bytes.byteLength; at += ANSWER_PIECE_BYTES) yield bytes.subarray(at, at + ANSWER_PIECE_BYTES);
}
