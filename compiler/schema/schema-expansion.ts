/**
 * How many schema applications one value of the payload can receive: the
 * bound that keeps a schema's evaluation time linear in the payload with a
 * known factor.
 *
 * Why: `$ref` makes a schema a graph, and a small one can apply a subschema
 * exponentially often to the same value. `{"allOf": [{"$ref": "#/$defs/d1"},
 * {"$ref": "#/$defs/d1"}]}` at each of 31 levels of `$defs` is 2 KB and
 * applies the last level 2^31 times to one value: a validation of `{}` ran
 * for seconds, a batch of 50 for minutes, with every tenant's requests
 * waiting (the size and depth limits do not see it: the chain is not
 * nested). Recursion multiplies too, once per payload level, when two
 * keywords send the same child value back into the schema (`properties`
 * and a matching `patternProperties`).
 *
 * What is counted, for a value at each depth below the one the schema is
 * applied to (up to the payload depth limit):
 * - in place: the node itself and everything applied to the same value
 *   (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
 *   `dependentSchemas`, `$ref`, `$dynamicRef`), summed;
 * - into the value's children: the subschemas of every node applied in
 *   place that can reach one child, summed over keywords that can apply
 *   together (`properties` counts its largest entry: a child has one name;
 *   `patternProperties` all its entries), and the largest of the object,
 *   array and property-name cases.
 * The result is the most applications any single value can receive; a
 * validation costs at most that many times the payload's values. Sums are
 * cut at the limit, so the walk stays small whatever the schema. A cycle
 * that returns to the same value (`{"$defs": {"a": {"allOf": [{"$ref":
 * "#/$defs/a"}]}}}`) would never end and is refused outright.
 */

/** The most schema applications one payload value may receive. */
export const MAX_SCHEMA_APPLICATIONS = 10_000;

/** Recursion through the payload is unrolled this deep: the default payload depth limit (docs/api.md). */
const PAYLOAD_DEPTH = 64;

const IN_PLACE_ONE = ['not', 'if', 'then', 'else'] as const;
const IN_PLACE_MANY = ['allOf', 'anyOf', 'oneOf'] as const;

type SchemaNode = Record<string, unknown> | boolean;

/** The outcome: the bound (at most MAX_SCHEMA_APPLICATIONS + 1), or why there is none. */
export type SchemaApplications = { ok: true; count: number } | { ok: false; message: string };

/**
 * The most applications any one value receives when `schema` (already
 * measured and checked: plain JSON, local references only) is applied to a
 * payload.
 *
 * @example
 * schemaApplications({ type: 'object', properties: { a: { type: 'string' } } }); // { ok: true, count: 1 }
 */
export function schemaApplications(schema: unknown): SchemaApplications {
  try {
    return { ok: true, count: new Expansion(schema).applications(schema, PAYLOAD_DEPTH) };
  } catch (error) {
    if (error instanceof SelfReference) return { ok: false, message: error.message };
    // A chain of references deeper than the stack: no schema a person writes.
    if (error instanceof RangeError) return { ok: false, message: 'the schema\'s references chain too deep to bound its cost' };
    throw error;
  }
}

class SelfReference extends Error {}

/** Applications one child value receives, by what the parent is: an object (its values), an array, or an object's names. */
interface Slots {
  object: number;
  array: number;
  names: number;
}

const CAP = MAX_SCHEMA_APPLICATIONS + 1;
const add = (a: number, b: number): number => Math.min(CAP, a + b);

class Expansion {
  readonly #root: unknown;
  readonly #anchors = new Map<string, unknown>();
  readonly #inPlace = new Map<object, number>();
  readonly #visiting = new Set<object>();
  readonly #deep = new Map<object, number[]>();
  readonly #slots = new Map<object, Slots[]>();

  constructor(root: unknown) {
    this.#root = root;
    this.#collectAnchors(root);
  }

  /** The most applications a value `depth` levels deep or less receives from `node`. */
  applications(node: unknown, depth: number): number {
    if (!isNode(node)) return 0;
    const here = this.#sameValue(node);
    if (depth === 0 || typeof node === 'boolean') return here;
    const memo = this.#deep.get(node) ?? [];
    const known = memo[depth];
    if (known !== undefined) return known;
    const result = Math.max(here, this.#child(node, depth - 1));
    memo[depth] = result;
    this.#deep.set(node, memo);
    return result;
  }

  /** Applications on the value `node` is applied to: itself and everything in place, refs followed. */
  #sameValue(node: SchemaNode): number {
    if (typeof node === 'boolean') return 1;
    const known = this.#inPlace.get(node);
    if (known !== undefined) return known;
    if (this.#visiting.has(node)) {
      throw new SelfReference('the schema refers to itself without going into the value (a reference cycle through allOf, anyOf, oneOf, not, if/then/else, dependentSchemas or $ref), so its evaluation would never end');
    }
    this.#visiting.add(node);
    let count = 1;
    for (const child of this.#inPlaceChildren(node)) count = add(count, this.#sameValue(child));
    this.#visiting.delete(node);
    this.#inPlace.set(node, count);
    return count;
  }

  /** The most applications one child value (at `depth` or above) receives from `node` and what it applies in place. */
  #child(node: SchemaNode, depth: number): number {
    if (typeof node === 'boolean') return 0;
    const { object, array, names } = this.#childSlots(node, depth);
    return Math.max(object, array, names);
  }

  /** Memoized: shared `$defs` are reached from many places, and fan-out would repeat the walk exponentially. */
  #childSlots(node: Record<string, unknown>, depth: number): Slots {
    const memo = this.#slots.get(node) ?? [];
    let slots = memo[depth];
    if (slots === undefined) {
      slots = this.#countChildSlots(node, depth);
      memo[depth] = slots;
      this.#slots.set(node, memo);
    }
    return slots;
  }

  #countChildSlots(node: Record<string, unknown>, depth: number): Slots {
    let object = 0;
    let array = 0;
    let names = 0;
    const properties = node.properties;
    if (isPlainObject(properties)) {
      let largest = 0;
      for (const sub of Object.values(properties)) largest = Math.max(largest, this.applications(sub, depth));
      object = add(object, largest);
    }
    if (isPlainObject(node.patternProperties)) {
      for (const sub of Object.values(node.patternProperties)) object = add(object, this.applications(sub, depth));
    }
    for (const keyword of ['additionalProperties', 'unevaluatedProperties']) object = add(object, this.applications(node[keyword], depth));
    if (Array.isArray(node.prefixItems)) {
      let largest = 0;
      for (const sub of node.prefixItems) largest = Math.max(largest, this.applications(sub, depth));
      array = add(array, largest);
    }
    for (const keyword of ['items', 'additionalItems', 'contains', 'unevaluatedItems']) {
      const sub = node[keyword];
      if (Array.isArray(sub)) for (const item of sub) array = add(array, this.applications(item, depth));
      else array = add(array, this.applications(sub, depth));
    }
    names = add(names, this.applications(node.propertyNames, depth));
    // What this node applies in place applies its own child keywords to the same children.
    for (const child of this.#inPlaceChildren(node)) {
      if (typeof child === 'boolean') continue;
      const slots = this.#childSlots(child, depth);
      object = add(object, slots.object);
      array = add(array, slots.array);
      names = add(names, slots.names);
    }
    return { object, array, names };
  }

  /** Subschemas applied to the same value as `node`, references resolved. */
  *#inPlaceChildren(node: Record<string, unknown>): Generator<SchemaNode> {
    for (const keyword of IN_PLACE_ONE) {
      const sub = node[keyword];
      if (isNode(sub)) yield sub;
    }
    for (const keyword of IN_PLACE_MANY) {
      const list = node[keyword];
      if (Array.isArray(list)) for (const sub of list) if (isNode(sub)) yield sub;
    }
    for (const keyword of ['dependentSchemas', 'dependencies']) {
      const map = node[keyword];
      if (isPlainObject(map)) for (const sub of Object.values(map)) if (isNode(sub)) yield sub;
    }
    for (const keyword of ['$ref', '$dynamicRef']) {
      const target = typeof node[keyword] === 'string' ? this.#resolve(node[keyword]) : undefined;
      if (isNode(target)) yield target;
    }
  }

  /** A local reference's target; undefined when it does not resolve (Ajv then refuses the schema). */
  #resolve(ref: string): unknown {
    if (ref === '#') return this.#root;
    if (!ref.startsWith('#/')) return this.#anchors.get(ref.slice(1));
    let target: unknown = this.#root;
    for (const raw of ref.slice(2).split('/')) {
      let key: string;
      try {
        key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        return undefined;
      }
      if (target === null || typeof target !== 'object' || !Object.hasOwn(target, key)) return undefined;
      target = (target as Record<string, unknown>)[key];
    }
    return target;
  }

  /** `$anchor` and `$dynamicAnchor` names, wherever they stand (a stray one only widens what may resolve). */
  #collectAnchors(root: unknown): void {
    const stack: unknown[] = [root];
    while (stack.length > 0) {
      const value = stack.pop();
      if (value === null || typeof value !== 'object') continue;
      if (Array.isArray(value)) {
        stack.push(...(value as unknown[]));
        continue;
      }
      const record = value as Record<string, unknown>;
      for (const keyword of ['$anchor', '$dynamicAnchor']) {
        if (typeof record[keyword] === 'string' && !this.#anchors.has(record[keyword])) {
          this.#anchors.set(record[keyword], record);
        }
      }
      stack.push(...Object.values(record));
    }
  }
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'boolean' || isPlainObject(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
