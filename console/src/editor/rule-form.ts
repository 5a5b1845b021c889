/**
 * The rule editor's form: every field of the rule resource as the text (or
 * flag) its control holds, and the conversion to and from the API's rule.
 * JSON fields (`schema`, `expectedValue`) and numbers are parsed here; what
 * cannot be parsed is an error at that field, before anything is sent.
 */
import type { FieldError } from '../api.ts';
import type { Rule } from '../api-types.ts';
import { formToTable, tableToForm, type TableForm } from './table-form.ts';

export const SEVERITIES = ['Error', 'Warning', 'Info'] as const;

export interface RuleForm {
  context: string;
  code: string;
  name: string;
  description: string;
  severity: string;
  errorCode: string;
  fieldPath: string;
  required: boolean;
  expression: string;
  schema: string;
  when: string;
  forEach: string;
  message: string;
  expectedValue: string;
  priority: string;
  enabled: boolean;
  /** Comma-separated. */
  tags: string;
  /** A decision-table rule's table; undefined for a rule of an expression alone. */
  table: TableForm | undefined;
}

/** A new rule's form, in `context` when one is given. */
export function emptyRuleForm(context = ''): RuleForm {
  return {
    context, code: '', name: '', description: '', severity: 'Error', errorCode: '', fieldPath: '', required: false, expression: '',
    schema: '', when: '', forEach: '', message: '', expectedValue: '', priority: '0', enabled: true, tags: '', table: undefined,
  };
}

/** The form of a rule read from the API. */
export function ruleToForm(rule: Rule): RuleForm {
  return {
    context: rule.context,
    code: rule.code,
    name: rule.name,
    description: rule.description ?? '',
    severity: rule.severity,
    errorCode: rule.errorCode ?? '',
    fieldPath: rule.fieldPath ?? '',
    required: rule.required,
    expression: rule.expression ?? '',
    schema: rule.schema === undefined ? '' : JSON.stringify(rule.schema, null, 2),
    when: rule.when ?? '',
    forEach: rule.forEach ?? '',
    message: rule.message ?? '',
    expectedValue: rule.expectedValue === undefined ? '' : JSON.stringify(rule.expectedValue),
    priority: String(rule.priority),
    enabled: rule.enabled,
    tags: rule.tags.join(', '),
    table: rule.table === undefined || rule.table === null ? undefined : tableToForm(rule.table),
  };
}

/** The rule's content as the API takes it, or the fields the form cannot turn into one. */
export type RuleBody = { ok: true; rule: Record<string, unknown> } | { ok: false; errors: FieldError[] };

function parseJson(text: string, field: string, errors: FieldError[]): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    errors.push({ path: field, message: `must be JSON (${error instanceof Error ? error.message : 'unreadable'})` });
    return undefined;
  }
}

/**
 * The rule body for POST /rules, PUT, /rules/check and /rules/test: empty
 * optional fields are left out (the API's defaults apply).
 */
export function formToRule(form: RuleForm): RuleBody {
  const errors: FieldError[] = [];
  const rule: Record<string, unknown> = { code: form.code, name: form.name, severity: form.severity, required: form.required, enabled: form.enabled };
  if (form.context !== '') rule.context = form.context;
  const optionalText = ['description', 'errorCode', 'fieldPath', 'expression', 'when', 'forEach', 'message'] as const;
  for (const field of optionalText) if (form[field].trim() !== '') rule[field] = form[field];
  if (form.schema.trim() !== '') rule.schema = parseJson(form.schema, 'schema', errors);
  if (form.expectedValue.trim() !== '') rule.expectedValue = parseJson(form.expectedValue, 'expectedValue', errors);
  const priority = form.priority.trim() === '' ? 0 : Number(form.priority);
  if (!Number.isInteger(priority)) errors.push({ path: 'priority', message: 'must be a whole number' });
  rule.priority = priority;
  rule.tags = form.tags.split(',').map((tag) => tag.trim()).filter((tag) => tag !== '');
  if (form.table !== undefined) rule.table = formToTable(form.table, errors);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, rule };
}
