/**
 * What a context's payload schema (JSON Schema, draft 2020-12) declares:
 * which paths exist and what kinds of value they hold.
 *
 * A key is declared by `properties`, a matching `patternProperties`, or an
 * `additionalProperties` (or `unevaluatedProperties`) schema; an element by
 * `prefixItems` or `items`. Local `$ref`s are followed; `allOf`, `anyOf`,
 * `oneOf` and the conditional `if`/`then`/`else`/`dependentSchemas` declare
 * the union of their branches' paths, while types combine as the keywords
 * do (all of, one of; a conditional branch constrains nothing for certain). A schema that says nothing
 * about a value's structure (`{}`, `{ "type": "object" }`) leaves every path
 * below it open: only a declared structure can make a path unknown.
 *
 * Every walk is bounded by a budget of schema nodes, so a schema whose
 * references loop or fan out costs a fixed amount; past it, paths are open.
 */
import type { PathSegment } from '../paths.ts';
import { compilePattern } from '../regex/index.ts';
import {
  ARRAY, FIELD_VALUE, JSON_VALUE, NUMBER, OBJECT, UNDEFINED, typeOfValue, typesOfSchemaType, type TypeSet,
} from './value-types.ts';

/**
 * - `declared`: the schema declares the path; `types` are its kinds.
 * - `open`: nothing in the schema says what is there (any path may be).
 * - `undeclared`: a declared structure leaves the path out; `at` is the
 *   index of the first segment it does not declare, and `parentTypes`, when
 *   given, says that the value before it cannot have such a segment at all
 *   (a key below a string, an index below an object).
 */
export type PathLookup =
  | { status: 'declared' | 'open'; types: TypeSet }
  | { status: 'undeclared'; types: TypeSet; at: number; parentTypes?: TypeSet };

type SchemaObject = Readonly<Record<string, unknown>>;
type Schema = SchemaObject | boolean;

/** A lookup result inside the walk; `none` is a schema node that says nothing about the segment. */
type Step =
  | { status: 'declared' | 'open' | 'none'; types: TypeSet }
  | { status: 'undeclared'; types: TypeSet; at: number; parentTypes?: TypeSet };

/** Schema nodes one walk may visit; past it, what remains is open. */
const WALK_BUDGET = 5000;
/** `$ref`s followed in a row without reading a segment. */
const MAX_REF_CHAIN = 32;

const OPEN: Step = Object.freeze({ status: 'open', types: FIELD_VALUE });
const NONE: Step = Object.freeze({ status: 'none', types: FIELD_VALUE });

function isSchemaObject(value: unknown): value is SchemaObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'boolean' || isSchemaObject(value);
}

function own(node: SchemaObject, key: string): unknown {
  return Object.hasOwn(node, key) ? node[key] : undefined;
}

function schemaList(value: unknown): Schema[] {
  return Array.isArray(value) ? value.filter(isSchema) : [];
}

/**
 * A payload schema, read on demand.
 *
 * @example
 * const schema = new PayloadSchema({ type: 'object', properties: { amount: { type: 'number' } } });
 * schema.lookup([{ key: 'amount' }]); // { status: 'declared', types: NUMBER | UNDEFINED }
 * schema.lookup([{ key: 'amuont' }]); // { status: 'undeclared', at: 0, ... }
 */
export class PayloadSchema {
  readonly #root: Schema;
  #budget = 0;

  constructor(schema: unknown) {
    this.#root = isSchema(schema) ? schema : true;
  }

  /** What the schema says about the value at `segments` (the payload root for `[]`). */
  lookup(segments: readonly PathSegment[]): PathLookup {
    this.#budget = WALK_BUDGET;
    const step = this.walk(this.#root, segments, 0, 0);
    // A value below the root may be absent.
    const types = segments.length === 0 ? step.types : step.types | UNDEFINED;
    if (step.status === 'undeclared') return { ...step, types };
    return { status: step.status === 'declared' ? 'declared' : 'open', types };
  }

  /** The keys `properties` declares for the value at `segments`, in the schema's order; for suggestions. */
  keysAt(segments: readonly PathSegment[]): string[] {
    this.#budget = WALK_BUDGET;
    const keys = new Set<string>();
    this.collectKeys(this.#root, segments, 0, 0, keys);
    return [...keys];
  }

  private walk(schema: Schema, segments: readonly PathSegment[], i: number, refs: number): Step {
    if (--this.#budget < 0) return OPEN;
    if (schema === true) return i === segments.length ? { status: 'declared', types: JSON_VALUE } : OPEN;
    // `false` refuses every value: the segment that led here is the one not declared.
    if (schema === false) return { status: 'undeclared', types: FIELD_VALUE, at: Math.max(0, i - 1) };
    if (i === segments.length) return { status: 'declared', types: this.typesOf(schema, 0) };
    const parts: Step[] = [this.ownStep(schema, segments, i)];
    for (const member of schemaList(own(schema, 'allOf'))) parts.push(this.walk(member, segments, i, refs));
    const target = this.refTarget(schema, refs);
    if (target !== undefined) parts.push(target === OPEN_REF ? OPEN : this.walk(target, segments, i, refs + 1));
    for (const keyword of ['anyOf', 'oneOf']) {
      const branches = schemaList(own(schema, keyword));
      if (branches.length > 0) parts.push(anyOf(branches.map((b) => this.walk(b, segments, i, refs))));
    }
    const conditional = conditionalSchemas(schema);
    // A branch that may not apply: it declares paths, but its kinds constrain nothing for certain.
    if (conditional.length > 0) parts.push(anyOf([...conditional.map((b) => this.walk(b, segments, i, refs)), NONE]));
    return allOf(parts);
  }

  /** The step this node's own structure keywords take for segment `i`. */
  private ownStep(schema: SchemaObject, segments: readonly PathSegment[], i: number): Step {
    const segment = segments[i];
    const types = this.typesOf(schema, 0);
    if ('key' in segment) {
      if ((types & OBJECT) === 0) {
        if (segment.key === 'length' && (types & ARRAY) !== 0) return { status: 'declared', types: NUMBER };
        return { status: 'undeclared', types: FIELD_VALUE, at: i, parentTypes: types };
      }
      const children = this.propertySchemas(schema, segment.key);
      if (children === 'open') return OPEN;
      if (children.length > 0) return allOf(children.map((child) => this.walk(child, segments, i + 1, 0)));
      const declaresKeys = own(schema, 'properties') !== undefined || own(schema, 'patternProperties') !== undefined
        || own(schema, 'additionalProperties') === false || own(schema, 'unevaluatedProperties') === false;
      if (segment.key === 'length' && (types & ARRAY) !== 0) return { status: 'declared', types: NUMBER };
      return declaresKeys ? { status: 'undeclared', types: FIELD_VALUE, at: i } : NONE;
    }
    if ((types & ARRAY) === 0) return { status: 'undeclared', types: FIELD_VALUE, at: i, parentTypes: types };
    const children = this.elementSchemas(schema, 'index' in segment ? segment.index : undefined);
    if (children === 'open' || children === 'none') return children === 'open' ? OPEN : NONE;
    return anyOf(children.map((child) => this.walk(child, segments, i + 1, 0)));
  }

  /** Schemas that apply to the key, or 'open' when a pattern cannot be checked. */
  private propertySchemas(schema: SchemaObject, key: string): Schema[] | 'open' {
    const properties = own(schema, 'properties');
    if (isSchemaObject(properties) && Object.hasOwn(properties, key) && isSchema(properties[key])) {
      return [properties[key] as Schema];
    }
    const matched: Schema[] = [];
    const patterns = own(schema, 'patternProperties');
    if (isSchemaObject(patterns)) {
      for (const [pattern, child] of Object.entries(patterns)) {
        if (!isSchema(child)) continue;
        // The policy's matcher: a tenant's pattern never runs on the native engine unchecked.
        const compiled = compilePattern(pattern);
        if (!compiled.ok) return 'open';
        if (compiled.matcher.test(key)) matched.push(child);
      }
    }
    if (matched.length > 0) return matched;
    const additional = own(schema, 'additionalProperties') ?? own(schema, 'unevaluatedProperties');
    return isSchemaObject(additional) || additional === true ? [additional] : [];
  }

  /** Schemas of element `index` (undefined: any element), 'none' when the node declares no elements. */
  private elementSchemas(schema: SchemaObject, index: number | undefined): Schema[] | 'open' | 'none' {
    // Draft 2020-12 `prefixItems` + `items`; an array `items` is the older spelling of `prefixItems`.
    const itemsValue = own(schema, 'items');
    const prefix = schemaList(Array.isArray(itemsValue) ? itemsValue : own(schema, 'prefixItems'));
    const rest = Array.isArray(itemsValue) ? own(schema, 'additionalItems') : itemsValue;
    const restSchema = isSchema(rest) ? rest : undefined;
    if (prefix.length === 0 && restSchema === undefined) return 'none';
    if (index !== undefined) {
      if (index < prefix.length) return [prefix[index]];
      return restSchema === undefined ? 'open' : [restSchema];
    }
    return restSchema === undefined ? 'open' : [...prefix, restSchema];
  }

  /** The kinds a schema allows: its own `type`, `const` and `enum`, and those of `allOf`, `$ref`, `anyOf`, `oneOf`. */
  private typesOf(schema: Schema, refs: number): TypeSet {
    if (typeof schema === 'boolean' || --this.#budget < 0) return JSON_VALUE;
    let types = own(schema, 'type') === undefined ? JSON_VALUE : typesOfSchemaType(own(schema, 'type'));
    if (Object.hasOwn(schema, 'const')) types &= typeOfValue(schema.const);
    const values = own(schema, 'enum');
    if (Array.isArray(values)) types &= values.reduce<TypeSet>((set, v) => set | typeOfValue(v), 0);
    for (const member of schemaList(own(schema, 'allOf'))) types &= this.typesOf(member, refs);
    const target = this.refTarget(schema, refs);
    if (target !== undefined && target !== OPEN_REF) types &= this.typesOf(target, refs + 1);
    for (const keyword of ['anyOf', 'oneOf']) {
      const branches = schemaList(own(schema, keyword));
      if (branches.length > 0) types &= branches.reduce<TypeSet>((set, b) => set | this.typesOf(b, refs), 0);
    }
    // A contradiction is the schema's problem, not a fact about payloads.
    return types === 0 ? JSON_VALUE : types;
  }

  /** The schema a local `$ref` names; OPEN_REF for any other reference; undefined without one. */
  private refTarget(schema: SchemaObject, refs: number): Schema | typeof OPEN_REF | undefined {
    const ref = own(schema, '$ref');
    if (ref === undefined && own(schema, '$dynamicRef') === undefined) return undefined;
    if (typeof ref !== 'string' || refs >= MAX_REF_CHAIN) return OPEN_REF;
    return resolvePointer(this.#root, ref) ?? OPEN_REF;
  }

  private collectKeys(schema: Schema, segments: readonly PathSegment[], i: number, refs: number, keys: Set<string>): void {
    if (typeof schema === 'boolean' || --this.#budget < 0) return;
    if (i === segments.length) {
      const properties = own(schema, 'properties');
      if (isSchemaObject(properties)) for (const key of Object.keys(properties)) keys.add(key);
    } else {
      const segment = segments[i];
      const children = 'key' in segment
        ? this.propertySchemas(schema, segment.key)
        : this.elementSchemas(schema, 'index' in segment ? segment.index : undefined);
      if (Array.isArray(children)) for (const child of children) this.collectKeys(child, segments, i + 1, 0, keys);
    }
    const members = [...schemaList(own(schema, 'allOf')), ...schemaList(own(schema, 'anyOf')), ...schemaList(own(schema, 'oneOf'))];
    for (const member of [...members, ...conditionalSchemas(schema)]) this.collectKeys(member, segments, i, refs, keys);
    const target = this.refTarget(schema, refs);
    if (target !== undefined && target !== OPEN_REF) this.collectKeys(target, segments, i, refs + 1, keys);
  }
}

const OPEN_REF = Symbol('open reference');

/** Subschemas that apply to some payloads only: `if`, `then`, `else` and `dependentSchemas`. */
function conditionalSchemas(schema: SchemaObject): Schema[] {
  const branches = [own(schema, 'if'), own(schema, 'then'), own(schema, 'else')];
  const dependent = own(schema, 'dependentSchemas');
  if (isSchemaObject(dependent)) branches.push(...Object.values(dependent));
  return branches.filter(isSchema);
}

/** Follows `#`, `#/$defs/name` and other JSON pointers inside the schema document. */
function resolvePointer(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node)) node = /^(0|[1-9][0-9]*)$/.test(token) ? node[Number(token)] : undefined;
    else if (isSchemaObject(node) && Object.hasOwn(node, token)) node = node[token];
    else return undefined;
  }
  return isSchema(node) ? node : undefined;
}

const RANK = { declared: 3, open: 2, undeclared: 1, none: 0 } as const;

/** The best status of some steps: declared wins over open, open over undeclared; the furthest failure is kept. */
function best(steps: readonly Step[]): Step {
  let result: Step = NONE;
  for (const step of steps) {
    if (RANK[step.status] > RANK[result.status]) result = step;
    else if (step.status === 'undeclared' && result.status === 'undeclared' && step.at > result.at) result = step;
  }
  return result;
}

/** Steps that all hold: the path is declared if one of them declares it, with the kinds they all allow. */
function allOf(steps: readonly Step[]): Step {
  const result = best(steps);
  if (result.status !== 'declared') return result;
  let types = FIELD_VALUE;
  for (const step of steps) if (step.status === 'declared') types &= step.types;
  return { status: 'declared', types: types === 0 ? FIELD_VALUE : types };
}

/** Branches of which one holds: declared if one declares it, with the kinds any branch allows. */
function anyOf(steps: readonly Step[]): Step {
  const result = best(steps);
  if (result.status !== 'declared') return result;
  let types = 0;
  for (const step of steps) types |= step.status === 'declared' ? step.types : FIELD_VALUE;
  return { status: 'declared', types };
}
