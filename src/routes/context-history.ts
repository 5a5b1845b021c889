/**
 * A context's history (docs/api.md, "History and diff"): its ruleset
 * versions newest first, the rules of any one of them, and the diff
 * between two rulesets (numbered versions, the live one, or the draft: what
 * a context publish would make live now). Admin keys only; another
 * tenant's context is unknown (404).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { sendAnswerJson } from '../http/json-answer.ts';
import { OPERATIONS } from '../pool/operations.ts';
import type { RulesetRef } from '../storage/types.ts';
import { operation } from '../openapi/operation.ts';
import { contextParamsSchema } from './schemas/context-schemas.ts';
import { diffQuerySchema, versionParamsSchema, versionsQuerySchema } from './schemas/history-schemas.ts';
import { contextOf, tenantOf, pageSizeOf } from './schemas/route-helpers.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

interface ContextParams {
  context: string;
}

const adminOnly = { role: 'admin' } as const;

const UNKNOWN_CONTEXT = 'The context has no rules and no ruleset version (CONTEXT_NOT_FOUND).';

/** A ruleset version number as URLs and queries write it. */
const VERSION_NUMBER = /^[1-9][0-9]{0,9}$/;

/**
 * Registers the history routes. Mounted by buildApp under /api/v1 with `{ deps }`.
 *
 * @example
 * await app.register(contextHistoryRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const contextHistoryRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage } = deps;


  app.get<{ Params: ContextParams; Querystring: { limit?: string; cursor?: string } }>('/contexts/:context/versions', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'listRulesetVersions',
        tag: 'Contexts',
        summary: 'List a context\'s ruleset versions',
        description: 'The context\'s ruleset versions, newest first: what made each (publish, archive of a live rule, rollback, import), '
          + 'the note given, how many rules it has live, when, and the API key that made it. Paged with `limit` and `cursor`.',
        answers: {
          200: 'The versions, newest first.',
          400: '`limit` is not 1 to 500, or `cursor` is not one this list gave (INVALID_BODY).',
          404: UNKNOWN_CONTEXT,
        },
      }),
      params: contextParamsSchema,
      querystring: versionsQuerySchema,
      response: { 200: sharedRef('RulesetVersionList') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    return storage.history.versions(tenantId, context, { limit: pageSizeOf(request.query.limit), cursor: request.query.cursor });
  });

  app.get<{ Params: ContextParams & { n: string } }>('/contexts/:context/versions/:n', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'getRulesetVersion',
        tag: 'Contexts',
        summary: 'Read the rules of a ruleset version',
        description: 'The rules that were live in the ruleset version, as POST /rules takes them, sorted by code.',
        answers: {
          200: 'The version\'s live rules.',
          404: 'The context is unknown (CONTEXT_NOT_FOUND) or has no such version (NOT_FOUND).',
        },
      }),
      params: versionParamsSchema,
      response: { 200: sharedRef('RulesetVersionRules') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const { n } = request.params;
    // A number that cannot be a version is an unknown version, as a malformed id is an unknown rule.
    const version = VERSION_NUMBER.test(n) ? Number(n) : 0;
    const [ruleset] = await storage.history.rulesets(tenantId, context, [version]);
    return { rulesetVersion: version, rules: ruleset.rules };
  });

  app.get<{ Params: ContextParams; Querystring: { from?: string; to?: string } }>('/contexts/:context/diff', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'diffRulesets',
        tag: 'Contexts',
        summary: 'Compare two rulesets of a context',
        description: 'What differs from one ruleset of the context to another, rules matched by code: added, removed, and changed rules with '
          + 'each differing field. `from` is a version number or `live` (default); `to` a version number, `live` or `draft` (default), '
          + 'the ruleset a context publish would make live now.',
        answers: {
          200: 'The differences.',
          400: '`from` or `to` is not a version number, `live` (or, for `to`, `draft`) (INVALID_BODY).',
          404: 'The context is unknown (CONTEXT_NOT_FOUND) or has no such version (NOT_FOUND).',
          409: 'The comparison stopped at its time or memory budget (LIMIT_EXCEEDED).',
          429: 'The tenant already has its most heavy management operations waiting or running, or this one waited its whole time budget for a '
            + 'thread behind them (RATE_LIMITED, with Retry-After).',
          503: 'No management thread was free within the diff\'s time budget, other tenants\' work holding them (SERVICE_UNAVAILABLE, with Retry-After).',
        },
      }),
      params: contextParamsSchema,
      querystring: diffQuerySchema,
      response: { 200: sharedRef('RulesetDiff') },
    },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const from = rulesetRef('from', request.query.from ?? 'live', false);
    const to = rulesetRef('to', request.query.to ?? 'draft', true);
    // Admitted before the read: two rulesets of thousands of rules each, compared on a management thread.
    const answer = await deps.pool.operation(tenantId, OPERATIONS.diff, async (run) => {
      const [before, after] = await storage.history.rulesets(tenantId, context, [from, to]);
      // Answered as the thread wrote it: two rulesets' worth of changed fields, never walked here.
      return run('diff', { before: before.rules, after: after.rules }, undefined, { schema: 'RulesetDiff', lead: { from, to } });
    });
    return sendAnswerJson(reply, answer);
  });
};

/** `from` or `to` of the diff: a version number, `live`, or (for `to`) `draft`; anything else a 400 naming it. */
function rulesetRef(name: 'from' | 'to', raw: string, draftAllowed: boolean): RulesetRef {
  if (raw === 'live' || (draftAllowed && raw === 'draft')) return raw;
  if (VERSION_NUMBER.test(raw)) return Number(raw);
  const allowed = draftAllowed ? 'a ruleset version number, "live" or "draft"' : 'a ruleset version number or "live"';
  throw new ProblemError(PROBLEMS.invalidQuery([{ path: name, message: `must be ${allowed}` }]));
}

