/**
 * The API's bodies and answers, as the console uses them. They come from
 * the types generated from the service's OpenAPI document
 * (`npm run openapi:types`), so a change of the API that the console does
 * not follow fails its type-check.
 */
import type { components } from '../../test/openapi/generated/api-types.ts';

type Schemas = components['schemas'];

export type ContextSummary = Schemas['ContextSummary'];
export type ContextList = Schemas['ContextList'];
export type Rule = Schemas['Rule'];
export type RulePage = Schemas['RulePage'];
export type RuleWarning = Schemas['RuleWarning'];
export type RuleCheckResult = Schemas['RuleCheckResult'];
export type RuleTestResult = Schemas['RuleTestResult'];
export type RuleTraceEntry = Schemas['RuleTraceEntry'];
export type AuditEntry = Schemas['AuditEntry'];
export type AuditPage = Schemas['AuditPage'];
