/**
 * JSON Schemas of the payload-schema routes (docs/api.md, "Payload
 * schemas"). The body and the answer are a JSON Schema, kept as it was
 * sent: described, not constrained, here (the schema policy checks it in
 * the handler, where a refusal can say where), and serialized as any JSON
 * value (a bare `type: object` would let fast-json-stringify drop its keys).
 */

const example = {
  type: 'object',
  properties: {
    total: { type: 'number' },
    customer: {
      type: 'object',
      properties: { type: { enum: ['person', 'business'] }, email: { type: 'string' } },
    },
  },
} as const;

/** PUT /contexts/{context}/payload-schema. */
export const payloadSchemaBodySchema = {
  type: 'object',
  description: 'A JSON Schema (draft 2020-12) of the context\'s payloads, within the limits of a schema rule\'s `schema` '
    + '(docs/rule-language.md): at most 64 KiB of JSON, 32 levels, local references only, patterns under the regex policy.',
  examples: [example],
} as const;

/** What PUT and GET answer: the schema itself. */
export const payloadSchemaResponseSchema = {
  $id: 'PayloadSchema',
  description: 'The context\'s payload schema, as it was set.',
  examples: [example],
} as const;

/** The shared schemas of this module. */
export const payloadSchemaSchemas = [payloadSchemaResponseSchema] as const;
