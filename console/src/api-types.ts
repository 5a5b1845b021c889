/**
 * The API's bodies and answers, as the console uses them. They come from
 * the types generated from the service's OpenAPI document
 * (`npm run openapi:types`), so a change of the API that the console does
 * not follow fails its type-check.
 */
import type { components } from '../../src/openapi/generated/api-types.ts';

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
export type RulesetDiff = Schemas['RulesetDiff'];
export type RuleContent = Schemas['RuleContent'];
export type RulesetVersionList = Schemas['RulesetVersionList'];
export type RulesetVersionSummary = Schemas['RulesetVersionSummary'];
export type PublishResult = Schemas['PublishResult'];
export type StoredTest = Schemas['StoredTest'];
export type StoredTests = Schemas['StoredTests'];
export type TestRunResult = Schemas['TestRunResult'];
export type RulesFile = Schemas['RulesFile'];
export type ImportResult = Schemas['ImportResult'];
export type ApiKey = Schemas['ApiKey'];
export type ApiKeyList = Schemas['ApiKeyList'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type Tenant = Schemas['Tenant'];
