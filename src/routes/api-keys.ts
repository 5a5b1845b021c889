import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';

/** Stub until the real routes land. */
export const apiKeysRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async () => {};
