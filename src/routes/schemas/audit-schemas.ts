/**
 * JSON Schemas of GET /audit: its query and its page of entries.
 */
import { TUNING } from '../../tuning.ts';

export const AUDIT_ACTIONS = [
  'rule.create', 'rule.update', 'rule.patch', 'rule.archive', 'rule.restore', 'rule.publish',
  'context.publish', 'context.rollback', 'context.import', 'context.recompile', 'context.payload-schema', 'context.tests',
  'context.settings',
  'key.create', 'key.revoke', 'tenant.rate-limit', 'tenant.sampling', 'tenant.samples-delete', 'tenant.cors',
] as const;

/** GET /audit query. */
export const auditQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    context: { type: 'string', minLength: 1, maxLength: 100, description: 'Only entries about this context.' },
    action: { type: 'string', enum: AUDIT_ACTIONS, description: 'Only entries of this action.' },
    since: { type: 'string', format: 'date-time', description: 'Only entries at or after this time (ISO-8601).' },
    limit: { type: 'string', pattern: '^[0-9]{1,9}$', description: 'Page size, 1 to 500 (default 50).', examples: ['50'] },
    cursor: { type: 'string', maxLength: 200, description: 'The `nextCursor` of the previous page.' },
  },
} as const;

const MAX_VALUE_BYTES = TUNING.auditMaxValueBytes.value;

const changed = {
  description: `The changed resource's content (never a key's secret or hash). A value whose JSON text is over ${MAX_VALUE_BYTES} bytes is `
    + `kept as \`{ "elided": true, "bytes": n, "sha256": "<hex>", "limit": ${MAX_VALUE_BYTES} }\`: the length and SHA-256 of that text.`,
} as const;

/** One audit entry. */
export const auditEntrySchema = {
  $id: 'AuditEntry',
  type: 'object',
  description: 'One change, who made it and what it changed.',
  required: ['id', 'at', 'action', 'actor'],
  properties: {
    id: {
      type: 'string', description: 'The entry\'s number in the tenant\'s own trail (1, 2, 3... in commit order); later entries have larger ids.',
      examples: ['42'],
    },
    at: { type: 'string', description: 'When the change was committed (ISO-8601).', examples: ['2026-11-27T10:00:00.000Z'] },
    action: { type: 'string', enum: AUDIT_ACTIONS, description: 'What was done.', examples: ['tenant.rate-limit'] },
    actor: {
      type: 'object',
      description: 'Who did it: an API key (`keyId`, `keyName`, `role`), or an operator at the CLI (`cli: true`).',
      properties: {
        keyId: { type: 'string', description: 'The key\'s id.' },
        keyName: { type: 'string', description: 'The key\'s name.' },
        role: { type: 'string', enum: ['admin', 'validator'], description: 'The key\'s role.' },
        cli: { type: 'boolean', description: 'True for a change made with the CLI.' },
      },
    },
    context: { type: 'string', description: 'The context concerned, when there is one.' },
    target: { type: 'string', description: 'The id of the changed rule or key, when it has one.' },
    before: { ...changed, description: `Before the change. ${changed.description}` },
    after: { ...changed, description: `After the change. ${changed.description}` },
    note: { type: 'string', description: 'The note given with the change.' },
    requestId: { type: 'string', description: 'The id of the request that made it, as the service\'s log lines about that request carry it.' },
  },
} as const;

/** GET /audit answer. */
export const auditPageSchema = {
  $id: 'AuditPage',
  type: 'object',
  description: 'A page of the audit trail, newest first.',
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', description: 'The entries.', items: { $ref: 'AuditEntry#' } },
    nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last.', examples: [null] },
  },
} as const;

export const auditSchemas = [auditEntrySchema, auditPageSchema] as const;
