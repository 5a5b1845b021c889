/**
 * The single validation (POST /api/v1/validation/validate), once: what the
 * request asks, answered from the tenant's validator. Fastify's route
 * (validation/validation-routes.ts) and the validation fast lane
 * (validation/fast-lane.ts) both call it with an authenticated
 * tenant, a body their shared schema accepted and the request's clock; what
 * every response carries (the budget headers, Server-Timing) and the
 * metrics are the request pipeline's, not this function's.
 *
 * The steps: the payload guard (depth, finite numbers), the validator
 * (cached, else loaded: validator-lookup.ts), the evaluation within the
 * cost bound and the failure bound, the answer-size bound. A refusal is
 * thrown (a ProblemError or a domain error, which the one error handler
 * answers as problem+json).
 */
import type { CompiledValidator, ValidatorService } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { checkPayload, measurePayload } from '../http/payload-guard.ts';
import type { ValidateBody } from './validation-schemas.ts';
import { SingleAnswer } from './validation-answers.ts';
import type { SampleSink } from '../sampling/sample-recorder.ts';
import { assertAnswerFits } from '../validators/answer-size.ts';
import { evaluateBounded } from '../validators/bounded-evaluation.ts';
import { costProfileOf, estimateCost } from '../validators/evaluation-cost.ts';
import { lookupValidator } from './validator-lookup.ts';

/** What a single validation needs besides the request. */
export interface SingleValidationDeps {
  validators: ValidatorService;
  maxPayloadDepth: number;
  maxAnswerBytes: number;
  /** Where sampled validations go. */
  samples: SampleSink;
}

/**
 * The answer to a single validation: synchronous when the validator is
 * cached (the usual case: no promise and no microtask turn), a promise when
 * it must be loaded. `startedAt` is the request's clock (performance.now()
 * when it arrived), which the answer's executionTimeMs counts from.
 * `samplingRate` is the tenant's (from the policy the request was counted
 * under): that share of answered validations is recorded.
 *
 * @example
 * const answer = validateSingle(deps, request.auth.tenantId, request.body, request.startedAt, policy.samplingRate);
 */
export function validateSingle(
  deps: SingleValidationDeps, tenantId: string, body: ValidateBody, startedAt: number, samplingRate: number,
): SingleAnswer | Promise<SingleAnswer> {
  const now = Date.now();
  const { context, payload } = body;
  const size = measurePayload(payload, deps.maxPayloadDepth);
  if (size < 0) {
    // Walked again only to name the violation: refusals are the rare case.
    const violation = checkPayload(payload, 'payload', deps.maxPayloadDepth)!;
    throw new ProblemError(PROBLEMS.invalidBody([violation]));
  }
  const validator = lookupValidator(deps.validators, tenantId, context, 'context');
  if (validator instanceof Promise) {
    return validator.then((loaded) => answerWith(deps, loaded, payload, size, now, startedAt, samplingRate));
  }
  return answerWith(deps, validator, payload, size, now, startedAt, samplingRate);
}

/**
 * The evaluation of a payload that passed the guard (`size` is its
 * cost-model size), handed to the sample queue when the tenant samples and
 * the draw says so: only an answered validation is recorded.
 */
function answerWith(
  deps: SingleValidationDeps, validator: CompiledValidator, payload: Record<string, unknown>, size: number, now: number, startedAt: number,
  samplingRate: number,
): SingleAnswer {
  const cost = estimateCost(costProfileOf(validator), size);
  const result = evaluateBounded(cost, 'payload', () => validator.validate(payload, now));
  assertAnswerFits(result.failures, deps.maxAnswerBytes, 'payload');
  if (samplingRate > 0 && Math.random() < samplingRate) {
    deps.samples.record(validator.tenantId, validator.context, validator.rulesetVersion, now, result.isValid, result.failures, payload, size);
  }
  return new SingleAnswer(result.isValid, result.totalRulesEvaluated, result.failures, startedAt);
}
