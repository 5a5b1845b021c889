/**
 * The typed client of the rules service. Runs in Node.js (22.13 or later, and 24)
 * and in current browsers: nothing here imports a Node built-in.
 */
export {
  RulesClient,
  createRulesClient,
  type RulesClientOptions,
  type CallOptions,
  type ValidationRequest,
  type ValidationResult,
  type BatchValidationRequest,
  type BatchValidationResult,
  type TransactionValidationRequest,
  type TransactionValidationResult,
} from './client.ts';
export { RulesApiError, LocalValidatorError, type LocalValidatorErrorCode, type Problem, type ProblemCode, type FieldError } from './errors.ts';
export type { RetryOptions } from './retry.ts';
export { LocalValidator, type LocalValidatorOptions, type LocalValidatorUpdate, type LocalValidateOptions } from './local/local-validator.ts';
export type { SampleOutcomesOptions, SampledOutcome } from './local/sampler.ts';
export type { PublicKeyInput } from './local/signature.ts';
export type { components, operations, paths } from './generated/api-types.ts';
