/**
 * API key routes (docs/api.md): create (the secret is shown
 * once), list without secrets, revoke (effective at once through
 * deps.keys, which also evicts the key from the auth cache). Admin keys
 * only; another tenant's key is unknown (404).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import type { Role } from '../storage/types.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { operation } from '../openapi/operation.ts';
import { idParamsSchema, isUuid, originOf, tenantOf } from './schemas/route-helpers.ts';
import { createApiKeyBodySchema } from './schemas/api-key-schemas.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

const adminOnly = { role: 'admin' } as const;

/**
 * Registers the /api-keys routes. Mounted by buildApp under /api/v1 with
 * `{ deps }`.
 *
 * @example
 * await app.register(apiKeysRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const apiKeysRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, keys } = deps;

  app.post<{ Body: { name: string; role: Role } }>('/api-keys', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'createApiKey',
        tag: 'API keys',
        summary: 'Create an API key',
        description: 'Creates a key of the tenant. Its secret is in this answer only: the service keeps a hash.',
        answers: { 201: 'The new key, with its secret.' },
      }),
      body: createApiKeyBodySchema,
      response: { 201: sharedRef('CreatedApiKey') },
    },
  }, async (request, reply) => {
    const { record, key } = await keys.create(tenantOf(request), request.body.name, request.body.role, originOf(request));
    return reply.code(201).send({
      id: record.id,
      name: record.name,
      role: record.role,
      key,
      createdAt: record.createdAt,
    });
  });

  app.get('/api-keys', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'listApiKeys',
        tag: 'API keys',
        summary: 'List API keys',
        description: 'Every key of the tenant, without secrets; revoked ones with revokedAt.',
        answers: { 200: 'The keys.' },
      }),
      response: { 200: sharedRef('ApiKeyList') },
    },
  }, async (request) => ({ items: await storage.apiKeys.list(tenantOf(request)) }));

  app.delete<{ Params: { id: string } }>('/api-keys/:id', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'revokeApiKey',
        tag: 'API keys',
        summary: 'Revoke an API key',
        description: 'Revokes the key, effective at once. Revoking a revoked key changes nothing.',
        answers: {
          204: 'Revoked.',
          404: 'No key with this id in the tenant.',
          409: 'It is the tenant\'s last active admin key.',
        },
      }),
      params: idParamsSchema,
      response: { 204: { type: 'null' } },
    },
  }, async (request, reply) => {
    if (!isUuid(request.params.id)) throw new ProblemError(PROBLEMS.apiKeyNotFound());
    await keys.revoke(tenantOf(request), request.params.id, originOf(request));
    return reply.code(204).send();
  });
};
