/**
 * The one mapping from the refusals of the service's own modules (domain
 * errors, storage errors) to problems of the error catalogue. Those modules
 * say what happened; the words a client reads are chosen here. It runs only
 * for errors, never on the way to a successful answer.
 */
import {
  AnswerTooLargeError,
  EvaluationTooLargeError,
  PayloadSchemaInvalidError,
  RuleInvalidError,
  RulesetInvalidError,
  RulesetOverLimitError,
  TestsFailedError,
  TooManyFailuresRefusal,
} from '../domain-errors.ts';
import { PROBLEMS, type ProblemSpec } from '../errors.ts';
import {
  ApiKeyNotFoundError,
  ConflictError,
  ContextNotFoundError,
  InvalidInputError,
  LimitExceededError,
  NotFoundError,
  RuleArchivedError,
  RuleNotFoundError,
  StaleVersionError,
  UnavailableError,
} from '../storage/types.ts';

/**
 * The problem a domain or storage error is answered with; undefined for
 * anything else.
 *
 * @example
 * domainProblem(new RuleNotFoundError()); // { code: 'NOT_FOUND', detail: 'Rule was not found.' }
 */
export function domainProblem(error: unknown): ProblemSpec | undefined {
  if (!(error instanceof Error)) return undefined;
  // What a request asks the rules to do.
  if (error instanceof EvaluationTooLargeError) return PROBLEMS.evaluationTooLong(error.path, error.deadlineMs);
  if (error instanceof TooManyFailuresRefusal) return PROBLEMS.tooManyFailures(error.path, error.maxFailures);
  if (error instanceof AnswerTooLargeError) return PROBLEMS.answerTooLarge(error.path, error.maxBytes);
  if (error instanceof RuleInvalidError) return PROBLEMS.ruleDoesNotCompile(error.errors);
  if (error instanceof PayloadSchemaInvalidError) return PROBLEMS.payloadSchemaInvalid(error.errors);
  if (error instanceof RulesetInvalidError) return PROBLEMS.rulesetDoesNotCompile(error.errors, error.context);
  if (error instanceof RulesetOverLimitError) return PROBLEMS.rulesetOverLimit(error.errors, error.context);
  if (error instanceof TestsFailedError) return PROBLEMS.testsFailed(error.errors, error.context);
  // Storage: the named situations before the kinds they belong to.
  if (error instanceof UnavailableError) return PROBLEMS.databaseUnavailable();
  if (error instanceof RuleNotFoundError) return PROBLEMS.ruleNotFound();
  if (error instanceof ApiKeyNotFoundError) return PROBLEMS.apiKeyNotFound();
  if (error instanceof ContextNotFoundError) return PROBLEMS.contextHasNoRules(error.context);
  if (error instanceof RuleArchivedError) return PROBLEMS.ruleArchived();
  if (error instanceof StaleVersionError) return PROBLEMS.staleVersion(error.currentVersion, error.basedOnVersion);
  if (error instanceof NotFoundError) return PROBLEMS.storageNotFound(error.message);
  if (error instanceof ConflictError) return PROBLEMS.storageConflict(error.message);
  if (error instanceof LimitExceededError) return PROBLEMS.storageLimitExceeded(error.message);
  if (error instanceof InvalidInputError) return PROBLEMS.storageInvalidInput(error.path, error.message);
  return undefined;
}
