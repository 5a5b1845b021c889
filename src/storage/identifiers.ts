/**
 * Shape checks on ids that reach SQL. A uuid column rejects a malformed
 * value with an error; an unknown id must read as "not found" instead.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` can be stored in a uuid column. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
