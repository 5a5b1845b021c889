/**
 * Stored rule content and the API's Rule resource built from a row. The
 * content's fields and their order come from the rule's schema
 * (compiler/rule-schema.ts); its compiled form, from toRuleDefinition there.
 */
import { RULE_CONTENT_FIELDS, type RuleContent } from '../../compiler/rule-schema.ts';
import type { Rule, RuleStatus } from './types.ts';

/**
 * Content in the field order of the rule's schema, without undefined
 * fields, so what is stored (and echoed) does not depend on how the caller
 * built the object.
 */
export function normalizeContent(content: RuleContent): RuleContent {
  const out: Record<string, unknown> = {};
  for (const field of RULE_CONTENT_FIELDS) {
    if (content[field] !== undefined) out[field] = content[field];
  }
  out.tags = [...(content.tags ?? [])];
  return out as RuleContent;
}

/** The columns of a rule row joined with its latest version's content. */
export interface RuleRow {
  id: string;
  context: string;
  code: string;
  version: number;
  published_version: number | null;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
  published_at: Date | null;
  content: Record<string, unknown>;
}

/** docs/api.md: archived after DELETE, else published when the latest version is live, else draft. */
export function statusOf(row: Pick<RuleRow, 'version' | 'published_version' | 'archived_at'>): RuleStatus {
  if (row.archived_at !== null) return 'archived';
  return row.published_version === row.version ? 'published' : 'draft';
}

/** The API resource, keys in the order of docs/rule-language.md. */
export function toRule(row: RuleRow): Rule {
  const content = normalizeContent(row.content as unknown as RuleContent);
  return {
    id: row.id,
    context: row.context,
    code: row.code,
    ...content,
    status: statusOf(row),
    version: row.version,
    publishedVersion: row.published_version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    publishedAt: row.published_at?.toISOString() ?? null,
  };
}

/** Deep JSON equality, object keys in any order: "does the live content differ" for rollback. */
export function contentEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => contentEquals(item, b[i]));
  }
  const aKeys = Object.keys(a);
  const bRecord = b as Record<string, unknown>;
  if (aKeys.length !== Object.keys(bRecord).length) return false;
  return aKeys.every((key) => Object.hasOwn(bRecord, key) && contentEquals((a as Record<string, unknown>)[key], bRecord[key]));
}
