/**
 * The payload schema of a context (docs/api.md, "Payload schemas"): set,
 * read, remove. Admin keys only; the schema is the tenant's, so another
 * tenant's is simply none (404). It feeds the save-time warnings and
 * nothing else: no validation answer depends on it.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { operation } from '../openapi/operation.ts';
import { contextParamsSchema } from './schemas/context-schemas.ts';
import { payloadSchemaBodySchema } from './schemas/payload-schema-schemas.ts';
import { originOf, contextOf, tenantOf } from './schemas/route-helpers.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

interface ContextParams {
  context: string;
}

const adminOnly = { role: 'admin' } as const;

const NO_SCHEMA = 'The context has no payload schema (NOT_FOUND), or its name is one no context can have (CONTEXT_NOT_FOUND).';

/**
 * Registers /contexts/{context}/payload-schema. Mounted by buildApp under
 * /api/v1 with `{ deps }`, among the routes whose bodies are stored.
 *
 * @example
 * await app.register(payloadSchemaRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const payloadSchemaRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { payloadSchemas } = deps;


  app.put<{ Params: ContextParams; Body: Record<string, unknown> }>('/contexts/:context/payload-schema', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'setPayloadSchema',
        tag: 'Contexts',
        summary: 'Set a context\'s payload schema',
        description: 'Declares what the context\'s payloads look like, as a JSON Schema (draft 2020-12) within the limits of a schema rule\'s '
          + '`schema`. Rules of the context are then warned about paths it does not declare (UNKNOWN_FIELD), bare names (BARE_NAME) and '
          + 'comparisons with the wrong type (TYPE_MISMATCH). It is used for warnings only: it never changes a validation answer. '
          + 'The context need not have rules yet.',
        answers: {
          200: 'The schema, as set.',
          400: 'The body is not a JSON Schema the service accepts; `errors` say where (`properties.total.minimum`).',
          404: 'The name is one no context can have (CONTEXT_NOT_FOUND).',
        },
      }),
      params: contextParamsSchema,
      body: payloadSchemaBodySchema,
      response: { 200: sharedRef('PayloadSchema') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    return payloadSchemas.put(tenantId, context, request.body, originOf(request));
  });

  app.get<{ Params: ContextParams }>('/contexts/:context/payload-schema', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'getPayloadSchema',
        tag: 'Contexts',
        summary: 'Read a context\'s payload schema',
        description: 'The context\'s payload schema, as it was set.',
        answers: { 200: 'The schema.', 404: NO_SCHEMA },
      }),
      params: contextParamsSchema,
      response: { 200: sharedRef('PayloadSchema') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const schema = await payloadSchemas.get(tenantId, context);
    if (schema === null) throw new ProblemError(PROBLEMS.noPayloadSchema(context));
    return schema;
  });

  app.delete<{ Params: ContextParams }>('/contexts/:context/payload-schema', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'deletePayloadSchema',
        tag: 'Contexts',
        summary: 'Remove a context\'s payload schema',
        description: 'Removes the context\'s payload schema: its rules are no longer checked against one (no UNKNOWN_FIELD or BARE_NAME warnings).',
        answers: { 204: 'Removed.', 404: NO_SCHEMA },
      }),
      params: contextParamsSchema,
      response: { 204: { type: 'null' } },
    },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    if (!(await payloadSchemas.delete(tenantId, context, originOf(request)))) throw new ProblemError(PROBLEMS.noPayloadSchema(context));
    return reply.code(204).send();
  });
};
