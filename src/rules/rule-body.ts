/**
 * From request bodies to the domain: a rule body (already checked against
 * rule-schemas.ts) becomes the RuleContent storage keeps, with the defaults
 * of the rule's schema (compiler/rule-schema.ts) applied. The body types
 * are derived from the very schemas the routes validate with.
 */
import type { FromSchema } from 'json-schema-to-ts';
import {
  RULE_CONTENT_DEFAULTS,
  RULE_CONTENT_FIELDS,
  type RuleContent,
  type RuleContentInput,
} from '../../compiler/rule-schema.ts';
import { DEFAULT_LIMITS } from '../../compiler/limits.ts';
import type { FieldError } from '../domain-errors.ts';
import { checkPayload } from '../http/payload-guard.ts';
import { applyMergePatch } from './merge-patch.ts';
import { TUNING } from '../tuning.ts';
import type { createRuleBodySchema, patchRuleBodySchema, testRuleSchema, updateRuleBodySchema } from '../routes/schemas/rule-schemas.ts';

/** POST /rules. */
export type CreateRuleBody = FromSchema<typeof createRuleBodySchema>;

/** PUT /rules/{id}. Server-managed fields may be present; they are ignored. */
export type UpdateRuleBody = FromSchema<typeof updateRuleBodySchema>;

/** PATCH /rules/{id}: a JSON merge patch of the content. Server-managed fields may be present; they are ignored. */
export type PatchRuleBody = FromSchema<typeof patchRuleBodySchema>;

/** The rule of POST /rules/test. */
export type TestRuleBody = FromSchema<typeof testRuleSchema>;

/**
 * Content as a request body carries it: the body's schema says only that a
 * table is an object; the save-time check (check-rule-content.ts) checks
 * the rest, naming the row and column of each problem.
 */
export type RuleContentBody = Omit<RuleContentInput, 'table'> & { table?: object };

/**
 * The content to store. Omitted optional fields take their defaults (a PUT
 * replaces the whole content, so leaving a field out resets it); absent
 * optional strings stay absent so that defaults derived from other fields
 * (`errorCode` from the code, `message` from the name) keep following them.
 * A null expectedValue means "none" (one is inferred then), like an absent one.
 *
 * @example
 * toRuleContent({ name: 'Amount set', required: true, fieldPath: 'amount' });
 * // { name: 'Amount set', severity: 'Error', fieldPath: 'amount', required: true, priority: 0, enabled: true, tags: [] }
 */
export function toRuleContent(body: RuleContentBody): RuleContent {
  const defaults: Partial<Record<string, unknown>> = RULE_CONTENT_DEFAULTS;
  const content: Record<string, unknown> = {};
  for (const field of RULE_CONTENT_FIELDS) {
    const value = body[field] ?? defaults[field];
    if (value !== undefined) content[field] = value;
  }
  // A fresh array: the default one is shared.
  content.tags = [...(body.tags ?? RULE_CONTENT_DEFAULTS.tags)];
  return content as RuleContent;
}

/**
 * The errors of a PUT or PATCH body that names another context or code
 * than the rule's: both may be sent (a rule read with GET carries them) but
 * never change.
 */
export function immutableFieldErrors(stored: { context: string; code: string }, body: { context?: string; code?: string }): FieldError[] {
  const errors: FieldError[] = [];
  if (body.context !== undefined && body.context !== stored.context) {
    errors.push({ path: 'context', message: `cannot change: the rule's context is "${stored.context}"` });
  }
  if (body.code !== undefined && body.code !== stored.code) {
    errors.push({ path: 'code', message: `cannot change: the rule's code is "${stored.code}"` });
  }
  return errors;
}

/**
 * Fields a merge patch may not set to null, with why: a rule needs its
 * name, an edit names its base version, and context and code cannot change.
 */
const NOT_REMOVABLE: Readonly<Record<string, string>> = {
  name: 'is required: a rule cannot be without a name',
  version: 'is required: the version this edit is based on',
  context: 'cannot be removed: the rule\'s context cannot change',
  code: 'cannot be removed: the rule\'s code cannot change',
};

/**
 * The errors of a merge patch that sets a field the rule cannot be without
 * to null; [] for anything else (the body's schema then speaks).
 *
 * @example
 * removedRequiredFields({ name: null, version: 3 }); // [{ path: 'name', message: 'is required: a rule cannot be without a name' }]
 */
export function removedRequiredFields(patch: unknown): FieldError[] {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return [];
  const body = patch as Record<string, unknown>;
  return Object.keys(NOT_REMOVABLE)
    .filter((field) => Object.hasOwn(body, field) && body[field] === null)
    .map((field) => ({ path: field, message: NOT_REMOVABLE[field] }));
}

/**
 * The errors of a merge patch whose `expectedValue` or `schema` nests
 * deeper than a rule's may, each naming the limit and the path where it is
 * passed; [] for anything else. Merging walks the patch one call per level,
 * so such a patch is refused before it is merged; a PUT of the same value
 * is refused by the save-time check with the same limit.
 *
 * @example
 * overNestedPatchFields({ expectedValue: <33 levels of {"a": ...}>, version: 1 });
 * // [{ path: 'expectedValue.a.a…', message: 'is nested deeper than 32 levels' }]
 */
export function overNestedPatchFields(patch: unknown): FieldError[] {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return [];
  const body = patch as Record<string, unknown>;
  const limits = { expectedValue: TUNING.maxExpectedValueDepth.value, schema: DEFAULT_LIMITS.maxSchemaDepth };
  const errors: FieldError[] = [];
  for (const [field, maxDepth] of Object.entries(limits)) {
    const error = Object.hasOwn(body, field) ? checkPayload(body[field], field, maxDepth) : undefined;
    if (error !== undefined) errors.push(error);
  }
  return errors;
}

/**
 * The content a merge patch makes of the stored content: the patch's
 * content fields merged in (RFC 7396), then the defaults of removed fields
 * applied as toRuleContent applies them. Other fields of the patch
 * (version, context, code, server-managed ones) are not content.
 *
 * @example
 * patchedContent(stored, { priority: 50, message: null, version: 2 }); // stored, priority 50, message back to its default
 */
export function patchedContent(stored: RuleContent, patch: PatchRuleBody): RuleContent {
  const contentPatch: Record<string, unknown> = {};
  for (const field of RULE_CONTENT_FIELDS) {
    if (Object.hasOwn(patch, field)) contentPatch[field] = patch[field];
  }
  // The body's schema allows exactly the content's types (or null) per
  // field, and merging an object into an object keeps it one: the result is
  // content as a client writes it.
  return toRuleContent(applyMergePatch(stored, contentPatch) as RuleContentBody);
}
