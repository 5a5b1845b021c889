/**
 * The save-time warnings of a rule (docs/rule-language.md, "Warnings"): the
 * compiler's analysis of its content, against the payload schema of its
 * context when there is one. Warnings are worked out each time a rule is
 * answered, never stored, so they always reflect the payload schema as it
 * is now; they never block anything.
 */
import { analyzeRule, type PayloadSchema, type RuleWarning } from '../../compiler/index.ts';
import { toRuleDefinition } from '../../compiler/rule-schema.ts';
import type { Rule, RuleContent } from '../storage/types.ts';
import type { PayloadSchemas } from './payload-schemas.ts';

export type { RuleWarning };

/** What working out warnings needs from the service. */
export interface WarningSources {
  payloadSchemas: PayloadSchemas;
  /** MAX_EXPRESSION_LENGTH: expressions are analyzed under the limits they were saved under. */
  maxExpressionLength: number;
}

/**
 * The warnings of one rule's content, given its context's payload schema
 * (undefined: none).
 *
 * @example
 * contentWarnings('LIMIT', content, undefined, 4096); // [] or [{ code: 'CONSTANT', path: 'expression', ... }]
 */
export function contentWarnings(
  code: string,
  content: RuleContent,
  payloadSchema: PayloadSchema | undefined,
  maxExpressionLength: number,
): RuleWarning[] {
  return analyzeRule(toRuleDefinition(code, content), { payloadSchema, limits: { maxExpressionLength } });
}

/**
 * The warnings of a rule's content in a context (its payload schema read
 * through the cache); no context, no payload schema.
 *
 * @example
 * const warnings = await warningsFor(sources, 'acme', 'orders', 'LIMIT', content);
 */
export async function warningsFor(
  sources: WarningSources,
  tenantId: string,
  context: string | undefined,
  code: string,
  content: RuleContent,
): Promise<RuleWarning[]> {
  const payloadSchema = await sources.payloadSchemas.forWarnings(tenantId, context);
  return contentWarnings(code, content, payloadSchema, sources.maxExpressionLength);
}

/**
 * A stored rule as the rule routes answer it: with its warnings.
 *
 * @example
 * return withWarnings(sources, tenantId, await storage.rules.get(tenantId, id));
 */
export async function withWarnings(sources: WarningSources, tenantId: string, rule: Rule): Promise<Rule & { warnings: RuleWarning[] }> {
  return { ...rule, warnings: await warningsFor(sources, tenantId, rule.context, rule.code, rule) };
}
