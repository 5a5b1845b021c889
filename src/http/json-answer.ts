/**
 * Sends an answer a management thread already wrote as JSON
 * (src/pool/answer-json.ts), as it is: the same body and Content-Type as
 * Fastify's serializer would give, without the event loop parsing or
 * serializing it. The route's response schema still describes the answer
 * (the OpenAPI document); Fastify does not serialize a Buffer.
 */
import type { FastifyReply } from 'fastify';

/** An answer as JSON text in UTF-8, ready to send. */
export interface AnswerJson {
  json: Uint8Array;
}

/** Fastify's Content-Type for what it serializes as JSON. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Sends the bytes with the JSON Content-Type; return its result from the handler.
 *
 * @example
 * return sendAnswerJson(reply, await pool.operation(tenantId, OPERATIONS.diff, (run) => run('diff', input, undefined, form)));
 */
export function sendAnswerJson(reply: FastifyReply, answer: AnswerJson): FastifyReply {
  const { json } = answer;
  return reply.type(JSON_CONTENT_TYPE).send(Buffer.from(json.buffer, json.byteOffset, json.byteLength));
}
