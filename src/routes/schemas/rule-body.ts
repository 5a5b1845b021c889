/**
 * From request bodies to the domain: a rule body (already checked against
 * rule-schemas.ts) becomes the RuleContent storage keeps, with the defaults
 * of product.md section 2 applied.
 */
import type { Severity } from '../../../compiler/types.ts';
import type { RuleContent } from '../../storage/types.ts';

/** The content fields of a rule body as a client sends them. */
export interface RuleContentBody {
  name: string;
  description?: string;
  severity?: Severity;
  errorCode?: string;
  fieldPath?: string;
  required?: boolean;
  expression?: string;
  schema?: Record<string, unknown>;
  when?: string;
  forEach?: string;
  message?: string;
  expectedValue?: unknown;
  priority?: number;
  enabled?: boolean;
  tags?: string[];
}

/** POST /rules. */
export interface CreateRuleBody extends RuleContentBody {
  context: string;
  code: string;
}

/** PUT /rules/{id}. Server-managed fields may be present; they are ignored. */
export interface UpdateRuleBody extends RuleContentBody {
  context?: string;
  code?: string;
  version: number;
}

/** The rule of POST /rules/test. */
export interface TestRuleBody extends RuleContentBody {
  context?: string;
  code: string;
}

/**
 * The content to store. Omitted optional fields take their defaults (a PUT
 * replaces the whole content, so leaving a field out resets it); absent
 * optional strings stay absent so that defaults derived from other fields
 * (`errorCode` from the code, `message` from the name) keep following them.
 * A null expectedValue means "none" (product.md 3.6 infers one then).
 *
 * @example
 * toRuleContent({ name: 'Amount set', required: true, fieldPath: 'amount' });
 * // { name: 'Amount set', severity: 'Error', fieldPath: 'amount', required: true, priority: 0, enabled: true, tags: [] }
 */
export function toRuleContent(body: RuleContentBody): RuleContent {
  const content: RuleContent = {
    name: body.name,
    severity: body.severity ?? 'Error',
    required: body.required ?? false,
    priority: body.priority ?? 0,
    enabled: body.enabled ?? true,
    tags: body.tags ?? [],
  };
  if (body.description !== undefined) content.description = body.description;
  if (body.errorCode !== undefined) content.errorCode = body.errorCode;
  if (body.fieldPath !== undefined) content.fieldPath = body.fieldPath;
  if (body.expression !== undefined) content.expression = body.expression;
  if (body.schema !== undefined) content.schema = body.schema;
  if (body.when !== undefined) content.when = body.when;
  if (body.forEach !== undefined) content.forEach = body.forEach;
  if (body.message !== undefined) content.message = body.message;
  if (body.expectedValue !== undefined && body.expectedValue !== null) content.expectedValue = body.expectedValue;
  return content;
}
