/**
 * String literals for module text, as ajv's `safeStringify` writes them:
 * JSON, plus U+2028 and U+2029 escaped so that no line terminator ever
 * appears inside a literal.
 */

/**
 * A JavaScript literal for a JSON value.
 *
 * @example
 * literal('a"b\u2028'); // '"a\\"b\\u2028"'
 */
export function literal(value: unknown): string {
  return JSON.stringify(value).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
