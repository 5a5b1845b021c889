/**
 * A schema whose references fan out: `levels` of `$defs`, each applying
 * the next twice to the same value, so the leaf is applied 2^levels times
 * (the attack compiler/schema/schema-expansion.ts bounds).
 *
 * @example
 * fanOutSchema(2); // { $defs: { d0: { allOf: [d1, d1] }, d1: { allOf: [d2, d2] }, d2: leaf }, $ref: '#/$defs/d0' }
 */
export function fanOutSchema(levels: number, leaf: unknown = { type: 'object' }): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  defs[`d${levels}`] = leaf;
  return { $defs: defs, $ref: '#/$defs/d0' };
}
