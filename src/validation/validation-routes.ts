/**
 * The three validation operations (docs/api.md
 * 6). The hot path is: auth cache lookup (hook), payload guard, validator
 * cache lookup, one call of the compiled function, serialization by the
 * response schema. The database is touched only on a cache miss.
 *
 * The compiled function always returns full failure records; the batch and
 * transaction response schemas are what trim them to ruleCode and message,
 * so one compiled function serves all three operations.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AppDeps, CompiledValidator, ValidatorService } from '../app-deps.ts';
import type { SampleSink } from '../sampling/sample-recorder.ts';
import type { RuleStore } from '../storage/types.ts';
import { PROBLEMS, ProblemError, type FieldError, type NamedContext } from '../errors.ts';
import { checkPayload, sizeOf, type PayloadSize } from '../http/payload-guard.ts';
import { replayBufferedBody, replayedOutcome } from '../http/request-replay.ts';
import { TUNING } from '../tuning.ts';
import { costProfileOf, estimateCost } from '../validators/evaluation-cost.ts';
import { evaluateEachBounded } from '../validators/bounded-evaluation.ts';
import { AnswerBudget, answerTooLarge } from '../validators/answer-size.ts';
import { validateSingle, type SingleValidationDeps } from './validate-single.ts';
import { contextNotFound, lookupValidator } from './validator-lookup.ts';
import { tenantOf } from '../routes/schemas/route-helpers.ts';
import { operation } from '../openapi/operation.ts';
import { sharedRef } from '../routes/schemas/shared-schemas.ts';
import {
  batchValidationBodySchema, singleValidationBodySchema, singleValidationResponseRef, transactionValidationBodySchema,
  type BatchBody, type TransactionBody, type ValidateBody,
} from './validation-schemas.ts';
import { BatchAnswer, TransactionAnswer, type BatchItemResult, type ContextResult } from './validation-answers.ts';

const CONTEXT_NOT_PUBLISHED = 'A context has no published ruleset (CONTEXT_NOT_FOUND); `errors` names where the request names it.';

/** The single validation's path under the /api/v1 prefix. */
export const SINGLE_VALIDATION_ROUTE = '/validation/validate';

const validatorRole = { role: 'validator' } as const;

/**
 * Registers POST /validation/validate, /validate-batch and
 * /validate-transaction. Mounted by buildApp under /api/v1.
 *
 * @example
 * await app.register(validationRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const validationRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { validators, config } = deps;
  const maxDepth = config.maxPayloadDepth;
  const maxAnswerBytes = config.maxAnswerBytes;
  const single: SingleValidationDeps = { validators, maxPayloadDepth: maxDepth, maxAnswerBytes, samples: deps.samples };

  app.post<{ Body: ValidateBody }>(SINGLE_VALIDATION_ROUTE, {
    config: validatorRole,
    // Requests the fast lane began and handed back arrive with their body already read.
    preParsing: replayBufferedBody,
    schema: {
      ...operation({
        id: 'validateSingle',
        tag: 'Validation',
        summary: 'Validate one payload',
        description: 'Evaluates the published rules of a context against one payload. A payload that breaks rules is still a 200, '
          + 'with isValid false and one failure record per failure.',
        answers: { 200: 'The result.', 404: CONTEXT_NOT_PUBLISHED },
      }),
      body: singleValidationBodySchema,
      response: { 200: singleValidationResponseRef },
    },
  }, (request) => {
    // Not an async function: with the validator cached (the usual case) the
    // core answers synchronously and Fastify sends it without a promise and
    // a microtask turn; only a cache miss waits.
    // A request the fast lane handed back after running the core carries its outcome: not run twice.
    const handedOver = replayedOutcome(request.raw);
    if (handedOver !== undefined) return handedOver();
    return validateSingle(single, tenantOf(request), request.body, request.startedAt, request.samplingRate);
  });

  app.post<{ Body: BatchBody }>('/validation/validate-batch', {
    config: validatorRole,
    schema: {
      ...operation({
        id: 'validateBatch',
        tag: 'Validation',
        summary: 'Validate a batch of payloads',
        description: 'Evaluates the published rules of one context against each payload of a batch, at one ruleset version. '
          + 'An invalid item (id or payload) makes the whole request 400, naming it (`items[3].payload`).',
        answers: { 200: 'One result per item, in request order.', 404: CONTEXT_NOT_PUBLISHED },
      }),
      body: batchValidationBodySchema(config),
      response: { 200: sharedRef('BatchResult') },
    },
  }, (request) => {
    // Synchronous on a cache hit, like the single validation.
    const now = Date.now();
    const tenantId = tenantOf(request);
    const { context, items } = request.body;
    const errors: FieldError[] = [];
    const seen = new Set<string>();
    const sizes = new Array<number>(items.length);
    for (let i = 0; i < items.length; i++) {
      const { id, payload } = items[i];
      if (seen.has(id)) errors.push({ path: `items[${i}].id`, message: 'must be unique within the batch' });
      seen.add(id);
      const size = emptySize();
      const violation = checkPayload(payload, `items[${i}].payload`, maxDepth, size);
      if (violation !== undefined) errors.push(violation);
      sizes[i] = sizeOf(size);
    }
    if (errors.length > 0) throw new ProblemError(PROBLEMS.invalidBody(errors));

    const validator = lookupValidator(validators, tenantId, context, 'context');
    const answer = (loaded: CompiledValidator) => sampleBatch(
      deps.samples, request.samplingRate, loaded, items, sizes, now, validateBatch(request, loaded, items, sizes, now, maxAnswerBytes),
    );
    return validator instanceof Promise ? validator.then(answer) : answer(validator);
  });

  app.post<{ Body: TransactionBody }>('/validation/validate-transaction', {
    config: validatorRole,
    schema: {
      ...operation({
        id: 'validateTransaction',
        tag: 'Validation',
        summary: 'Validate one payload against several contexts',
        description: 'Evaluates one payload against the published rules of several contexts, all at one consistent set of ruleset '
          + 'versions even while a publish runs. overallResult is Approved when every context is valid, else Rejected (still a 200).',
        answers: {
          200: 'One result per context, in request order.',
          404: CONTEXT_NOT_PUBLISHED,
          503: 'The database is unavailable, or the contexts are republished too quickly to take one consistent set; retry after Retry-After seconds.',
        },
      }),
      body: transactionValidationBodySchema(config),
      response: { 200: sharedRef('TransactionResult') },
    },
  }, (request) => {
    // Synchronous when every context's validator is cached, like the others.
    const now = Date.now();
    const tenantId = tenantOf(request);
    const { transactionId, contexts, payload } = request.body;
    const errors: FieldError[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < contexts.length; i++) {
      if (seen.has(contexts[i])) errors.push({ path: `contexts[${i}]`, message: 'must be distinct' });
      seen.add(contexts[i]);
    }
    const size = emptySize();
    const violation = checkPayload(payload, 'payload', maxDepth, size);
    if (violation !== undefined) errors.push(violation);
    if (errors.length > 0) throw new ProblemError(PROBLEMS.invalidBody(errors));

    const cached = cachedSet(validators, tenantId, contexts);
    if (cached === undefined) {
      return consistentSet(validators, deps.storage.rules, tenantId, contexts)
        .then((set) => validateTransaction(request, set, transactionId, contexts, payload, sizeOf(size), now, maxAnswerBytes));
    }
    return validateTransaction(request, cached, transactionId, contexts, payload, sizeOf(size), now, maxAnswerBytes);
  });
};

/** JSON of a batch item's result around its id and failures, and the comma after it. */
const ITEM_RESULT_OVERHEAD = JSON.stringify({ id: '', isValid: false, failures: [] }).length + 1;
/** The same for a transaction's context result. */
const CONTEXT_RESULT_OVERHEAD = JSON.stringify({ context: '', isValid: false, failures: [] }).length + 1;

/** The transaction answer, every context evaluated against `set` (one validator per context, in order). */
function validateTransaction(
  request: FastifyRequest, set: CompiledValidator[], transactionId: string, contexts: string[],
  payload: Record<string, unknown>, size: number, now: number, maxAnswerBytes: number,
): TransactionAnswer {
  const costs = set.map((validator) => estimateCost(costProfileOf(validator), size));
  const contextResults = new Array<ContextResult>(contexts.length);
  let allValid = true;
  const budget = new AnswerBudget(maxAnswerBytes, 'short');
  evaluateEachBounded(costs, 'payload', (i) => {
    const result = set[i].validate(payload, now);
    if (!result.isValid) allValid = false;
    if (!budget.add(result.failures, contexts[i].length + CONTEXT_RESULT_OVERHEAD)) throw answerTooLarge('payload', maxAnswerBytes);
    contextResults[i] = { context: contexts[i], isValid: result.isValid, failures: result.failures };
  });
  return new TransactionAnswer(transactionId, allValid ? 'Approved' : 'Rejected', contextResults, request.startedAt);
}

/** The batch answer for items that passed the guard (`sizes[i]` is item i's payload size). */
function validateBatch(
  request: FastifyRequest, validator: CompiledValidator, items: BatchBody['items'], sizes: number[], now: number, maxAnswerBytes: number,
): BatchAnswer {
  const profile = costProfileOf(validator);
  const costs = sizes.map((size) => estimateCost(profile, size));
  const results = new Array<BatchItemResult>(items.length);
  let totalFailed = 0;
  const budget = new AnswerBudget(maxAnswerBytes, 'short');
  evaluateEachBounded(costs, 'items', (i) => {
    const result = validator.validate(items[i].payload, now);
    if (!result.isValid) totalFailed++;
    // Stops at the item that crosses the bound: the failures before it are all that was built.
    if (!budget.add(result.failures, items[i].id.length + ITEM_RESULT_OVERHEAD)) throw answerTooLarge('items', maxAnswerBytes);
    results[i] = { id: items[i].id, isValid: result.isValid, failures: result.failures };
  });
  return new BatchAnswer(results, items.length, totalFailed, request.startedAt);
}

/**
 * Hands each item of an answered batch to the sample queue with the
 * tenant's rate, one draw per item (docs/operations.md, "Sampling").
 * Transactions are not sampled: their payload is judged by several
 * contexts at once, which an impact report of one context cannot replay.
 */
function sampleBatch(
  samples: SampleSink, rate: number, validator: CompiledValidator, items: BatchBody['items'], sizes: number[], now: number, answer: BatchAnswer,
): BatchAnswer {
  if (rate > 0) {
    const results = answer.results;
    for (let i = 0; i < items.length; i++) {
      if (Math.random() < rate) {
        const result = results[i];
        samples.record(validator.tenantId, validator.context, validator.rulesetVersion, now, result.isValid, result.failures, items[i].payload, sizes[i]);
      }
    }
  }
  return answer;
}

function emptySize(): PayloadSize {
  return { values: 0, characters: 0 };
}

/**
 * The validators of every context of a transaction, as one consistent set
 * (docs/api.md: one set of ruleset versions even while a publish runs).
 *
 * When every context is cached, one synchronous pass over the cache is a
 * single moment of this process: no publish can interleave. Otherwise
 * validators were taken at different times (loads await the database, and
 * a small cache may drop a validator taken earlier), so the set is compared
 * with the ruleset versions the database holds at one moment; stale ones
 * are reloaded until the set matches such a moment.
 */
/**
 * Every context's validator when all are cached, else undefined (then
 * consistentSet loads the missing ones and checks versions). The same set
 * consistentSet's first pass would take, without a promise.
 */
function cachedSet(validators: ValidatorService, tenantId: string, contexts: string[]): CompiledValidator[] | undefined {
  const set = new Array<CompiledValidator>(contexts.length);
  for (let i = 0; i < contexts.length; i++) {
    const validator = validators.get(tenantId, contexts[i]);
    if (validator === undefined) return undefined;
    set[i] = validator;
  }
  return set;
}

async function consistentSet(
  validators: ValidatorService,
  rules: Pick<RuleStore, 'rulesetVersions'>,
  tenantId: string,
  contexts: string[],
): Promise<CompiledValidator[]> {
  const held = new Map<string, CompiledValidator>();
  const newest = (context: string): CompiledValidator | undefined => {
    const cached = validators.get(tenantId, context);
    const kept = held.get(context);
    if (cached === undefined || kept === undefined) return cached ?? kept;
    return cached.rulesetVersion >= kept.rulesetVersion ? cached : kept;
  };
  for (let attempt = 0; attempt < TUNING.consistentSetAttempts.value; attempt++) {
    // Held from here on: a small cache may drop them while misses load.
    const misses: string[] = [];
    for (const context of contexts) {
      const validator = newest(context);
      if (validator === undefined) misses.push(context);
      else held.set(context, validator);
    }
    if (attempt === 0 && misses.length === 0) return contexts.map((context) => held.get(context)!);
    if (misses.length > 0) {
      const loaded = await Promise.all(misses.map((context) => validators.load(tenantId, context)));
      const unknown: NamedContext[] = [];
      misses.forEach((context, i) => {
        const validator = loaded[i];
        if (validator === null) unknown.push({ context, path: `contexts[${contexts.indexOf(context)}]` });
        else held.set(context, validator);
      });
      if (unknown.length > 0) throw contextNotFound(unknown);
    }
    // The newest this process has of each context, taken in one pass.
    const set = contexts.map((context) => newest(context)!);
    set.forEach((validator, i) => held.set(contexts[i], validator));
    const current = await rules.rulesetVersions(tenantId);
    const unpublished = contexts.flatMap((context, i) => (current.has(context) ? [] : [{ context, path: `contexts[${i}]` }]));
    if (unpublished.length > 0) throw contextNotFound(unpublished);
    let matches = true;
    for (let i = 0; i < contexts.length; i++) {
      const version = current.get(contexts[i])!;
      if (set[i].rulesetVersion === version) continue;
      matches = false;
      // Older than the database: load it again. Newer: the comparison was
      // taken before a publish landed; the next round compares again.
      if (set[i].rulesetVersion < version) {
        held.delete(contexts[i]);
        validators.invalidate(tenantId, contexts[i]);
      }
    }
    if (matches) return set;
  }
  throw new ProblemError(PROBLEMS.contextsRepublishing());
}
