/**
 * What a route schema says about its operation for the OpenAPI document
 * only: its id, tag, summary and description, and what each status it
 * answers means for it. Fastify ignores these keys; the document's
 * transform (register-openapi.ts) reads them.
 */
import type { FastifySchema } from 'fastify';

/** The groups of the document, in the order a reader meets them. */
export const OPERATION_TAGS = [
  { name: 'Validation', description: 'The three validation operations: one payload, a batch, a transaction over several contexts.' },
  { name: 'Rules', description: 'The rule lifecycle: create, edit, test, publish, archive (admin keys).' },
  { name: 'Contexts', description: 'Contexts: publish, roll back, history and diffs, recompile, read the generated validator (admin keys).' },
  { name: 'Local evaluation', description: 'Validator modules signed for callers to run in their own process, their change feed, and samples sent back.' },
  { name: 'API keys', description: 'The tenant\'s API keys (admin keys).' },
  { name: 'Tenant', description: 'The tenant\'s settings and its audit trail (admin keys).' },
  { name: 'Health', description: 'Liveness and readiness, without authentication.' },
  { name: 'Metrics', description: 'Prometheus metrics, without authentication.' },
] as const;

export type OperationTag = (typeof OPERATION_TAGS)[number]['name'];

/** Descriptions of the statuses a route answers, by status. */
export type StatusDescriptions = Readonly<Record<number, string>>;

declare module 'fastify' {
  interface FastifySchema {
    /**
     * Documentation only: what the statuses of this route mean here. Its
     * success statuses, and the errors particular to it (404, 409...); the
     * errors every operation of its kind can answer are added by the
     * document's transform.
     */
    answers?: StatusDescriptions;
  }
}

export interface OperationDoc {
  /** camelCase, stable: generated clients name their methods after it. */
  id: string;
  tag: OperationTag;
  summary: string;
  description: string;
  answers: StatusDescriptions;
}

/**
 * The documentation keys of a route schema.
 *
 * @example
 * schema: {
 *   ...operation({ id: 'getRule', tag: 'Rules', summary: 'Read a rule', description: '...', answers: { 200: 'The rule.', 404: 'No such rule.' } }),
 *   params: idParamsSchema,
 *   response: { 200: sharedRef('Rule') },
 * }
 */
export function operation(doc: OperationDoc): Pick<FastifySchema, 'operationId' | 'tags' | 'summary' | 'description' | 'answers'> {
  return { operationId: doc.id, tags: [doc.tag], summary: doc.summary, description: doc.description, answers: doc.answers };
}
