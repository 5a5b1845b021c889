/**
 * A management answer written as JSON on the management thread that
 * produced it, so the event loop that answers validations never walks it:
 * a stored-test run with explain is up to OPERATION_ANSWER_MAX_BYTES of
 * results, which the main thread would otherwise receive as an object
 * graph (structured clone) and serialize itself. The bytes are what
 * Fastify's serializer writes from the route's response schema (the same
 * fast-json-stringify, the same shared schemas), and they move to the main
 * thread without a copy (their ArrayBuffer is transferred).
 */
import fastJsonStringify, { type Schema } from 'fast-json-stringify';
import type { AnswerJson } from '../http/json-answer.ts';
import { SHARED_SCHEMAS_BY_ID, type SharedSchemaId } from '../routes/schemas/shared-schemas.ts';

export type { AnswerJson } from '../http/json-answer.ts';

/** What a task's answer is written as: the route's response schema, and the fields it adds before the task's output. */
export interface AnswerForm {
  schema: SharedSchemaId;
  /** Written first, as the route's answer has them: `{ target }` before a run's counts. */
  lead: Record<string, unknown>;
}


// One serializer per schema and thread, compiled when first needed.
const serializers = new Map<SharedSchemaId, (value: unknown) => string>();
const listSerializers = new Map<SharedSchemaId, (value: unknown) => string>();

/**
 * The answer `{ ...lead, ...output }` as the route's serializer writes it.
 *
 * @example
 * answerJson({ schema: 'RulesetDiff', lead: { from: 'live', to: 'draft' } }, diff).json; // Uint8Array of '{"from":"live",...}'
 */
export function answerJson(form: AnswerForm, output: object): AnswerJson {
  let serialize = serializers.get(form.schema);
  if (serialize === undefined) {
    // As a route refers to it (`response: { 200: sharedRef(id) }`), its references resolved the same way.
    // `as const` makes the schemas' arrays readonly, which fast-json-stringify's types do not take.
    serialize = fastJsonStringify({ $ref: `${form.schema}#` } as Schema, { schema: SHARED_SCHEMAS_BY_ID as unknown as Record<string, Schema> });
    serializers.set(form.schema, serialize);
  }
  // Its own ArrayBuffer (never Buffer's shared pool), so it can be transferred.
  return { json: new TextEncoder().encode(serialize({ ...form.lead, ...output })) };
}

/**
 * A list of one shared schema's items as the route's serializer writes it
 * inside an answer, for a route that writes the rest of the answer itself.
 *
 * @example
 * new TextDecoder().decode(listJson('RuleWarning', warnings)); // '[{"code":"UNKNOWN_FIELD",...}]'
 */
export function listJson(itemSchema: SharedSchemaId, items: readonly object[]): Uint8Array {
  let serialize = listSerializers.get(itemSchema);
  if (serialize === undefined) {
    serialize = fastJsonStringify(
      { type: 'array', items: { $ref: `${itemSchema}#` } } as Schema, { schema: SHARED_SCHEMAS_BY_ID as unknown as Record<string, Schema> },
    );
    listSerializers.set(itemSchema, serialize);
  }
  return new TextEncoder().encode(serialize(items));
}
