/**
 * JSON Merge Patch (RFC 7396), the body of PATCH /rules/{id}: a patch
 * object says, key by key, what changes; `null` removes a key, an object is
 * merged into the target's value at that key (recursively), anything else
 * (arrays included) replaces it. The target is never modified.
 */

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The target with the patch applied, as RFC 7396 section 2 defines it.
 *
 * @example
 * applyMergePatch({ a: 1, b: { c: 2, d: 3 } }, { a: null, b: { c: 4 } }); // { b: { c: 4, d: 3 } }
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else {
      // Defined, not assigned: a `__proto__` key (which the body parser
      // refuses anyway) stays an own key and never becomes a prototype.
      Object.defineProperty(result, key, { value: applyMergePatch(result[key], value), enumerable: true, writable: true, configurable: true });
    }
  }
  return result;
}
