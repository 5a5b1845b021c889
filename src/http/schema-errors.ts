/**
 * Fastify schema errors (ajv) as `{ path, message }` in docs/rule-language.md
 * syntax: `/items/3/payload` becomes `items[3].payload`, and a missing or
 * unexpected property is named itself rather than its parent.
 */
import { appendPath, pointerToPath } from '../../compiler/paths.ts';
import type { FieldError } from '../errors.ts';


/** The part of an ajv ErrorObject this module reads. */
export interface SchemaErrorLike {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** One FieldError per ajv error, in ajv's order, duplicates removed. */
export function schemaErrorsToFieldErrors(errors: readonly SchemaErrorLike[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    let path = pointerToPath(error.instancePath);
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') {
      path = appendPath(path, error.params.missingProperty);
      message = 'is required';
    } else if (error.keyword === 'additionalProperties' && typeof error.params.additionalProperty === 'string') {
      path = appendPath(path, error.params.additionalProperty);
      message = 'is not an allowed field';
    }
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, message });
  }
  return out;
}
