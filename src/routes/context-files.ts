/**
 * Rules as files (docs/api.md, "Rules as files"): export a context's rules,
 * payload schema and stored tests as one document, and import such a
 * document into a context, matching rules by code, in one transaction
 * (with `publish=true`, the publish too, compiled and gated by the stored
 * tests as a context publish is). Admin keys only; another tenant's context
 * is unknown, and an import writes into the caller's own tenant.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { RawJsonBody, registerRawJsonBodyParser } from '../http/json-body-parser.ts';
import { sendAnswerJson, type AnswerJson } from '../http/json-answer.ts';
import { validatorSkippingBody } from '../http/raw-body-validation.ts';
import { operation } from '../openapi/operation.ts';
import { goLiveTestsOnPool } from '../pool/go-live-tests.ts';
import { OPERATIONS } from '../pool/operations.ts';
import { toRulesFile } from '../rules/rules-file.ts';
import { storedTestsGate } from '../rules/stored-tests.ts';
import { StaleImportBaseError, type ImportResult } from '../storage/types.ts';
import { compileAhead } from '../validators/early-compile.ts';
import { changeInfoOf } from './change-info.ts';
import { exportQuerySchema, importBodySchema, importQuerySchema } from './schemas/context-file-schemas.ts';
import { contextParamsSchema } from './schemas/context-schemas.ts';
import { contextOf, tenantOf } from './schemas/route-helpers.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

interface ContextParams {
  context: string;
}

type Flag = 'true' | 'false';

interface ImportQuery {
  dryRun?: Flag;
  prune?: Flag;
  publish?: Flag;
  force?: Flag;
}

const adminOnly = { role: 'admin' } as const;

/**
 * Registers /contexts/{context}/export and /contexts/{context}/import.
 * Mounted by buildApp under /api/v1 with `{ deps }`, among the routes whose bodies are stored.
 *
 * @example
 * await app.register(contextFilesRoutes, { prefix: '/api/v1', deps });
 */
export const contextFilesRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage } = deps;

  app.get<{ Params: ContextParams; Querystring: { from?: 'live' | 'draft' } }>('/contexts/:context/export', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'exportContext',
        tag: 'Contexts',
        summary: 'Export a context as a rules file',
        description: 'The context\'s rules (as POST /rules takes them, sorted by code, without ids, statuses, versions or times), its payload '
          + 'schema and its stored tests, as one `rules/v1` document to keep in version control and import anywhere. By default the live '
          + 'rules; with `from=draft`, what a context publish would make live now.',
        answers: {
          200: 'The rules file.',
          400: '`from` is not `live` or `draft` (INVALID_BODY).',
          404: 'The context has no published ruleset (live), or no rules (draft) (CONTEXT_NOT_FOUND).',
        },
      }),
      params: contextParamsSchema,
      querystring: exportQuerySchema,
      response: { 200: sharedRef('RulesFile') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const from = request.query.from ?? 'live';
    // One snapshot: the live version and the rules exported agree.
    const [live, draft] = await storage.history.rulesets(tenantId, context, from === 'draft' ? ['live', 'draft'] : ['live']);
    if (from === 'live' && live.rulesetVersion === null) throw new ProblemError(PROBLEMS.contextsNotPublished([{ context }]));
    const [schema, tests] = await Promise.all([storage.payloadSchemas.get(tenantId, context), storage.tests.list(tenantId, context)]);
    return toRulesFile(context, live.rulesetVersion, (draft ?? live).rules, schema?.schema ?? null, tests);
  });

  // A rules file is up to a megabyte of JSON: its body is kept as sent and read on a management
  // thread (parsed, screened and checked against importBodySchema there), never on the event loop.
  // eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
  await app.register(async (rawBody) => {
    registerRawJsonBodyParser(rawBody);
    registerImportRoute(rawBody, deps);
  });
};

/** A real import compared on a thread is tried this many times while other changes of the context's rules come between (then 409). */
const IMPORT_ATTEMPTS = 2;

/**
 * A real import's answer (ImportResult): its code lists and version written
 * here (strings of a code's characters and a number, which JSON.stringify
 * writes as the route's serializer does), its warnings as the thread wrote
 * them, in the schema's order.
 */
function importAnswer(result: ImportResult, warningsJson: Uint8Array): AnswerJson {
  const { dryRun, create, update, archive, unchanged, rulesetVersion } = result;
  const head = JSON.stringify({ dryRun, create, update, archive, unchanged, rulesetVersion });
  return { json: Buffer.concat([Buffer.from(`${head.slice(0, -1)},"warnings":`), warningsJson, Buffer.from('}')]) };
}

/** A dry run's answer, as the thread writes it. */
const DRY_RUN_ANSWER = { schema: 'ImportResult', lead: {} } as const;

/** POST /contexts/{context}/import, in a scope whose JSON bodies are kept as their bytes. */
function registerImportRoute(app: FastifyInstance, deps: AppDeps): void {
  const { storage, validators, config, payloadSchemas, pool } = deps;
  app.post<{ Params: ContextParams; Querystring: ImportQuery; Body: RawJsonBody }>('/contexts/:context/import', {
    config: adminOnly,
    // The body's schema is checked on the thread; it stays here for the OpenAPI document.
    validatorCompiler: validatorSkippingBody(),
    schema: {
      ...operation({
        id: 'importContext',
        tag: 'Contexts',
        summary: 'Import a rules file into a context',
        description: 'Makes the context\'s drafts equal to the file\'s rules, matched by code: new codes are created, differing ones get a new '
          + 'draft version, equal ones are left alone; codes the file lacks are archived only with `prune=true`. The file\'s payload schema '
          + 'and tests replace the context\'s when it has those keys. All in one transaction: a file with any rule that does not compile '
          + 'changes nothing. With `publish=true` the drafts are also published in that transaction (ruleset action `import`), refused '
          + 'when a stored test fails (the file\'s tests when it carries them) unless `force=true`. `dryRun=true` changes nothing.',
        answers: {
          200: 'What changed (or would change), by code, with the warnings of the file\'s rules.',
          400: 'The document is not a rules file, or a rule does not compile, a code repeats, the payload schema or a test is refused; '
            + '`errors` name each place, such as `rules[3].expression` (INVALID_BODY).',
          404: 'The name is one no context can have (CONTEXT_NOT_FOUND).',
          409: 'The context would have more rules than it may, or checking the file stopped at its time or memory budget (LIMIT_EXCEEDED), '
            + 'a code was taken meanwhile or the context\'s rules changed twice while the file was compared with them (CONFLICT), or a stored test '
            + 'fails against what a publish would make live (TESTS_FAILED).',
          429: 'The tenant already has its most heavy management operations waiting or running, or this one waited its whole time budget for a '
            + 'thread behind them (RATE_LIMITED, with Retry-After).',
          503: 'No management thread was free within the import\'s time budget, other tenants\' work holding them (SERVICE_UNAVAILABLE, with Retry-After).',
        },
      }),
      params: contextParamsSchema,
      querystring: importQuerySchema,
      body: importBodySchema,
      response: { 200: sharedRef('ImportResult') },
    },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    return pool.operation(tenantId, OPERATIONS.importCheck, async (run) => {
      // The file read and checked and its rules' warnings worked out, on a management thread, before anything is written.
      // The stored payload schema is read first, as whether the file replaces it is known only once it is read.
      const stored = await storage.payloadSchemas.get(tenantId, context);
      const checkInput = {
        body: request.body.bytes,
        limits: { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows, maxPayloadDepth: config.maxPayloadDepth },
        maxRulesPerContext: config.maxRulesPerContext,
        storedPayloadSchema: stored?.schema ?? null,
      };
      const prune = request.query.prune === 'true';
      if (request.query.dryRun === 'true') {
        // Compared on the thread too, with the context's rules as the database's JSON text, and answered from there:
        // the file's thousands of checked rules never come back to the event loop.
        const base = await storage.rules.importBaseText(tenantId, context);
        const answer = await run('importDryRun', { ...checkInput, context, base, prune }, undefined, DRY_RUN_ANSWER);
        return sendAnswerJson(reply, answer);
      }
      const options = { dryRun: false, prune, publish: request.query.publish === 'true', maxRulesPerContext: config.maxRulesPerContext };
      const info = changeInfoOf(request);
      // Compared on the thread as a dry run is; what comes back is what to write, the contents as JSON text. The transaction
      // writes it only if the context's rules are still those compared with; if another change came between, once more.
      for (let attempt = 1; ; attempt++) {
        const base = await storage.rules.importBaseText(tenantId, context);
        const checked = await run('importPrepare', { ...checkInput, context, base, prune });
        if (!checked.ok) throw new ProblemError(PROBLEMS.invalidBody(checked.errors));
        const { prepared, warningsJson } = checked;
        // The tests that gate the publish: the file's when it carries them, as they are what will be stored.
        const testSource = prepared.tests === undefined ? storage.tests : { list: () => Promise.resolve(prepared.tests ?? []) };
        // Inside this operation: the import's turn runs its tests too.
        const gate = storedTestsGate(testSource, goLiveTestsOnPool(pool, config, run), request.query.force === 'true');
        try {
          const { result } = await compileAhead(
            validators,
            (compile) => storage.rules.importContext(tenantId, context, { prepared }, options, compile, gate.info(info)),
            gate.check,
          );
          if (prepared.payloadSchema !== undefined) payloadSchemas.forget(tenantId, context);
          return sendAnswerJson(reply, importAnswer(result, warningsJson));
        } catch (error) {
          if (!(error instanceof StaleImportBaseError) || attempt === IMPORT_ATTEMPTS) throw error;
        }
      }
    });
  });
}
