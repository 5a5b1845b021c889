/**
 * Stored test cases of a context (docs/api.md): replace and read them, and
 * run them against the draft or the live rules. The same tests run before
 * every publish and rollback of the context (src/rules/stored-tests.ts),
 * which they refuse when one fails. Admin keys only; another tenant's
 * context is unknown (its tests are its own).
 *
 * A context may have tests before it has rules: tests can be written first.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { sendAnswerJson } from '../http/json-answer.ts';
import { operation } from '../openapi/operation.ts';
import { OPERATIONS } from '../pool/operations.ts';
import { optionalBody } from './change-info.ts';
import { rulesetOfVersion } from '../rules/ruleset-version.ts';
import { storedTestsProblems } from '../rules/stored-tests.ts';
import type { StoredTest } from '../storage/types.ts';
import { contextParamsSchema } from './schemas/context-schemas.ts';
import { storedTestsBodySchema, testRunBodySchema } from './schemas/context-test-schemas.ts';
import { originOf, contextOf, tenantOf } from './schemas/route-helpers.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

interface ContextParams {
  context: string;
}

/** What a test run runs against: the draft, the live rules, or a ruleset version number. */
type TestTarget = 'draft' | 'live' | number;

const adminOnly = { role: 'admin' } as const;

const IMPOSSIBLE_NAME = 'The URL names a context no context can be called (CONTEXT_NOT_FOUND).';

/**
 * Registers /contexts/{context}/tests and /contexts/{context}/tests/run.
 * Mounted by buildApp under /api/v1 with `{ deps }`.
 *
 * @example
 * await app.register(contextTestsRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const contextTestsRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, pool, config } = deps;
  const compilerLimits = { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows };

  app.put<{ Params: ContextParams; Body: { tests: StoredTest[] } }>('/contexts/:context/tests', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'replaceContextTests',
        tag: 'Contexts',
        summary: 'Replace the stored tests of a context',
        description: 'Stores the context\'s test cases, replacing any before (an empty list removes them). Each is a payload and the answer '
          + 'it must get: `isValid`, and with `failures` exactly that set of failing rule codes. Names are unique. The tests run on demand '
          + 'and before every publish and rollback of the context, which a failing test refuses (409 TESTS_FAILED) unless forced.',
        answers: { 200: 'The tests now stored.', 404: IMPOSSIBLE_NAME },
      }),
      params: contextParamsSchema,
      body: storedTestsBodySchema,
      response: { 200: sharedRef('StoredTests') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const { tests } = request.body;
    const problems = storedTestsProblems(tests, config.maxPayloadDepth);
    if (problems.length > 0) throw new ProblemError(PROBLEMS.invalidBody(problems));
    await storage.tests.replace(tenantId, context, tests, originOf(request));
    return { tests };
  });

  app.get<{ Params: ContextParams }>('/contexts/:context/tests', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'getContextTests',
        tag: 'Contexts',
        summary: 'Read the stored tests of a context',
        description: 'The context\'s test cases, in the order they run; an empty list when it has none.',
        answers: { 200: 'The stored tests.', 404: IMPOSSIBLE_NAME },
      }),
      params: contextParamsSchema,
      response: { 200: sharedRef('StoredTests') },
    },
  }, async (request) => ({ tests: await storage.tests.list(tenantOf(request), contextOf(request.params)) }));

  app.post<{ Params: ContextParams; Body: { target?: TestTarget; explain?: boolean } | undefined }>('/contexts/:context/tests/run', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'runContextTests',
        tag: 'Contexts',
        summary: 'Run the stored tests of a context',
        description: 'Runs every stored test against the rules a context publish would make live now (`target: "draft"`, the default), '
          + 'against the live rules (`"live"`) or against a ruleset version of the context (its number), and says how each fared. Changes nothing. With `explain: true` each result adds '
          + '`trace`: what became of each rule on that test\'s payload. The run has a time budget (OPERATION_TIME_BUDGET_MS) and its `results` '
          + 'a size budget (OPERATION_ANSWER_MAX_BYTES): past the size, the first results are answered with `truncated: true`.',
        answers: {
          200: 'Each test\'s outcome.',
          404: 'The context has no rules (draft) or no published ruleset (live) (CONTEXT_NOT_FOUND), or no such ruleset version (NOT_FOUND).',
          409: 'The context\'s draft ruleset is over a limit, or the run stopped at its time or memory budget, saying at which test (LIMIT_EXCEEDED).',
          429: 'The tenant already has its most heavy management operations waiting or running, or this one waited its whole time budget for a '
            + 'thread behind them (RATE_LIMITED, with Retry-After).',
          503: 'No management thread was free within the run\'s time budget, other tenants\' work holding them (SERVICE_UNAVAILABLE, with Retry-After).',
        },
      }),
      params: contextParamsSchema,
      body: testRunBodySchema,
      response: { 200: sharedRef('TestRunResult') },
    },
    // The body is optional: none means the defaults.
    preValidation: optionalBody,
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const target = request.body?.target ?? 'draft';
    // Admitted before anything is read: a tenant past its bound costs no query.
    const answer = await pool.operation(tenantId, OPERATIONS.storedTestRun, async (run) => {
      // The rules and tests as the database's JSON text: the thread parses them, the event loop never walks them.
      const ruleset = typeof target === 'number'
        ? await rulesetOfVersion(storage, tenantId, context, target)
        : await storage.rules.rulesetText(tenantId, context, target);
      if (ruleset === null) {
        throw new ProblemError(target === 'draft' ? PROBLEMS.contextHasNoRules(context) : PROBLEMS.contextsNotPublished([{ context }]));
      }
      const tests = await storage.tests.listText(tenantId, context);
      // Answered as the thread wrote it: up to OPERATION_ANSWER_MAX_BYTES of results the event loop never walks.
      return run('storedTests', {
        ruleset,
        tests,
        explain: request.body?.explain === true,
        limits: { maxPayloadDepth: config.maxPayloadDepth, maxAnswerBytes: config.maxAnswerBytes },
        compilerLimits,
        maxResultBytes: config.operationAnswerMaxBytes,
      }, undefined, { schema: 'TestRunResult', lead: { target } });
    });
    return sendAnswerJson(reply, answer);
  });
};
