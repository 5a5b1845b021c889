/**
 * Values that rules hold as JSON (an expected value, a decision table's
 * outputs): checked to survive a JSON round trip unchanged in meaning.
 */

/** JSON text of a value that survives a JSON round trip unchanged in meaning, else undefined. */
export function jsonOf(value: unknown): string | undefined {
  const stack: unknown[] = [value];
  let nodes = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    if (++nodes > 100_000) return undefined;
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return undefined;
      continue;
    }
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    const proto: unknown = typeof v === 'object' ? Object.getPrototypeOf(v) : undefined;
    if (proto === Object.prototype || proto === null) {
      const record = v as Record<string, unknown>;
      for (const key of Object.keys(record)) stack.push(record[key]);
      continue;
    }
    return undefined;
  }
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
