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
 * A walk visits each schema node at most once per segment, however many
 * references lead to it, and within a budget of nodes; past the budget,
 * paths are open. A reference loop adds nothing and ends.
 */
import { formatPath, type PathSegment } from '../paths.ts';
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
const WALK_BUDGET = 2000;
/** Lookups and key lists one schema remembers. */
const MAX_REMEMBERED = 4096;

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
  /** Per segment index, the steps of the nodes met at it in the current walk: each node is walked once there. */
  #steps: Map<SchemaObject, Step | typeof IN_PROGRESS>[] = [];
  /** Each node's kinds, computed once: schemas repeat nodes through `$ref`. */
  readonly #types = new Map<SchemaObject, TypeSet>();
  readonly #typing = new Set<SchemaObject>();
  readonly #lookups = new Map<string, PathLookup>();
  readonly #keys = new Map<string, string[]>();
  readonly #refs = new Map<string, Schema | undefined>();

  constructor(schema: unknown) {
    this.#root = isSchema(schema) ? schema : true;
  }

  /** What the schema says about the value at `segments` (the payload root for `[]`). */
  lookup(segments: readonly PathSegment[]): PathLookup {
    const key = formatPath(segments);
    const known = this.#lookups.get(key);
    if (known !== undefined) return known;
    this.startWalk(segments);
    const step = this.walk(this.#root, segments, 0);
    // A value below the root may be absent.
    const types = segments.length === 0 ? step.types : step.types | UNDEFINED;
    const result: PathLookup = step.status === 'undeclared'
      ? { ...step, types }
      : { status: step.status === 'declared' ? 'declared' : 'open', types };
    if (this.#lookups.size < MAX_REMEMBERED) this.#lookups.set(key, result);
    return result;
  }

  /** The keys `properties` declares for the value at `segments`, in the schema's order; for suggestions. */
  keysAt(segments: readonly PathSegment[]): string[] {
    const key = formatPath(segments);
    const known = this.#keys.get(key);
    if (known !== undefined) return known;
    this.startWalk(segments);
    const keys = new Set<string>();
    this.collectKeys(this.#root, segments, 0, keys);
    const result = [...keys];
    if (this.#keys.size < MAX_REMEMBERED) this.#keys.set(key, result);
    return result;
  }

  /**
   * The values the schema's `enum` or `const` allows at `segments`, found
   * through `properties`, `items`, local `$ref`s and `allOf`; undefined when
   * no such list applies there (or the walk's budget runs out first). For
   * the analysis of decision tables, which draws example inputs from them.
   */
  allowedValues(segments: readonly PathSegment[]): readonly unknown[] | undefined {
    this.startWalk(segments);
    return this.allowedAt(this.#root, segments, 0);
  }

  private allowedAt(schema: Schema, segments: readonly PathSegment[], i: number): readonly unknown[] | undefined {
    if (typeof schema === 'boolean' || --this.#budget < 0) return undefined;
    if (i === segments.length) {
      if (Object.hasOwn(schema, 'const')) return [schema.const];
      const values = own(schema, 'enum');
      if (Array.isArray(values)) return values as unknown[];
    } else {
      const segment = segments[i];
      const children = 'key' in segment
        ? this.propertySchemas(schema, segment.key)
        : this.elementSchemas(schema, 'index' in segment ? segment.index : undefined);
      for (const child of Array.isArray(children) ? children : []) {
        const found = this.allowedAt(child, segments, i + 1);
        if (found !== undefined) return found;
      }
    }
    // The same value described again: allOf members and a local $ref.
    const same: Schema[] = [...schemaList(own(schema, 'allOf'))];
    const target = this.refTarget(schema);
    if (target !== undefined && target !== OPEN_REF) same.push(target);
    for (const other of same) {
      const found = this.allowedAt(other, segments, i);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  private startWalk(segments: readonly PathSegment[]): void {
    this.#budget = WALK_BUDGET;
    this.#steps = Array.from({ length: segments.length + 1 }, () => new Map<SchemaObject, Step | typeof IN_PROGRESS>());
  }

  private walk(schema: Schema, segments: readonly PathSegment[], i: number): Step {
    if (schema === true) return i === segments.length ? { status: 'declared', types: JSON_VALUE } : OPEN;
    // `false` refuses every value: the segment that led here is the one not declared.
    if (schema === false) return { status: 'undeclared', types: FIELD_VALUE, at: Math.max(0, i - 1) };
    const seen = this.#steps[i].get(schema);
    // A node met again through its own references adds nothing.
    if (seen !== undefined) return seen === IN_PROGRESS ? NONE : seen;
    if (--this.#budget < 0) return OPEN;
    this.#steps[i].set(schema, IN_PROGRESS);
    const step = this.walkNode(schema, segments, i);
    this.#steps[i].set(schema, step);
    return step;
  }

  private walkNode(schema: SchemaObject, segments: readonly PathSegment[], i: number): Step {
    if (i === segments.length) return { status: 'declared', types: this.typesOf(schema) };
    const parts: Step[] = [this.ownStep(schema, segments, i)];
    for (const member of schemaList(own(schema, 'allOf'))) parts.push(this.walk(member, segments, i));
    const target = this.refTarget(schema);
    if (target !== undefined) parts.push(target === OPEN_REF ? OPEN : this.walk(target, segments, i));
    for (const keyword of ['anyOf', 'oneOf']) {
      const branches = schemaList(own(schema, keyword));
      if (branches.length > 0) parts.push(anyOf(branches.map((b) => this.walk(b, segments, i))));
    }
    const conditional = conditionalSchemas(schema);
    // A branch that may not apply: it declares paths, but its kinds constrain nothing for certain.
    if (conditional.length > 0) parts.push(anyOf([...conditional.map((b) => this.walk(b, segments, i)), NONE]));
    return allOf(parts);
  }

  /** The step this node's own structure keywords take for segment `i`. */
  private ownStep(schema: SchemaObject, segments: readonly PathSegment[], i: number): Step {
    const segment = segments[i];
    const types = this.typesOf(schema);
    if ('key' in segment) {
      if ((types & OBJECT) === 0) {
        if (segment.key === 'length' && (types & ARRAY) !== 0) return { status: 'declared', types: NUMBER };
        return { status: 'undeclared', types: FIELD_VALUE, at: i, parentTypes: types };
      }
      const children = this.propertySchemas(schema, segment.key);
      if (children === 'open') return OPEN;
      if (children.length > 0) return allOf(children.map((child) => this.walk(child, segments, i + 1)));
      const declaresKeys = own(schema, 'properties') !== undefined || own(schema, 'patternProperties') !== undefined
        || own(schema, 'additionalProperties') === false || own(schema, 'unevaluatedProperties') === false;
      if (segment.key === 'length' && (types & ARRAY) !== 0) return { status: 'declared', types: NUMBER };
      return declaresKeys ? { status: 'undeclared', types: FIELD_VALUE, at: i } : NONE;
    }
    if ((types & ARRAY) === 0) return { status: 'undeclared', types: FIELD_VALUE, at: i, parentTypes: types };
    const children = this.elementSchemas(schema, 'index' in segment ? segment.index : undefined);
    if (children === 'open' || children === 'none') return children === 'open' ? OPEN : NONE;
    return anyOf(children.map((child) => this.walk(child, segments, i + 1)));
  }

  /** Schemas that apply to the key, or 'open' when a pattern cannot be checked. */
  private propertySchemas(schema: SchemaObject, key: string): Schema[] | 'open' {
    const properties = own(schema, 'properties');
    if (isSchemaObject(properties) && Object.hasOwn(properties, key) && isSchema(properties[key])) {
      return [properties[key]];
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
  private typesOf(schema: Schema): TypeSet {
    if (typeof schema === 'boolean') return JSON_VALUE;
    const known = this.#types.get(schema);
    if (known !== undefined) return known;
    // A node that refers back to itself says nothing more about its kinds.
    if (this.#typing.has(schema) || --this.#budget < 0) return JSON_VALUE;
    this.#typing.add(schema);
    const types = this.ownTypes(schema);
    this.#typing.delete(schema);
    this.#types.set(schema, types);
    return types;
  }

  private ownTypes(schema: SchemaObject): TypeSet {
    let types = own(schema, 'type') === undefined ? JSON_VALUE : typesOfSchemaType(own(schema, 'type'));
    if (Object.hasOwn(schema, 'const')) types &= typeOfValue(schema.const);
    const values = own(schema, 'enum');
    if (Array.isArray(values)) types &= values.reduce<TypeSet>((set, v) => set | typeOfValue(v), 0);
    for (const member of schemaList(own(schema, 'allOf'))) types &= this.typesOf(member);
    const target = this.refTarget(schema);
    if (target !== undefined && target !== OPEN_REF) types &= this.typesOf(target);
    for (const keyword of ['anyOf', 'oneOf']) {
      const branches = schemaList(own(schema, keyword));
      if (branches.length > 0) types &= branches.reduce<TypeSet>((set, b) => set | this.typesOf(b), 0);
    }
    // A contradiction is the schema's problem, not a fact about payloads.
    return types === 0 ? JSON_VALUE : types;
  }

  /** The schema a local `$ref` names; OPEN_REF for any other reference; undefined without one. */
  private refTarget(schema: SchemaObject): Schema | typeof OPEN_REF | undefined {
    const ref = own(schema, '$ref');
    if (ref === undefined && own(schema, '$dynamicRef') === undefined) return undefined;
    if (typeof ref !== 'string') return OPEN_REF;
    if (!this.#refs.has(ref)) this.#refs.set(ref, resolvePointer(this.#root, ref));
    return this.#refs.get(ref) ?? OPEN_REF;
  }

  private collectKeys(schema: Schema, segments: readonly PathSegment[], i: number, keys: Set<string>): void {
    if (typeof schema === 'boolean' || this.#steps[i].has(schema) || --this.#budget < 0) return;
    this.#steps[i].set(schema, IN_PROGRESS);
    if (i === segments.length) {
      const properties = own(schema, 'properties');
      if (isSchemaObject(properties)) for (const key of Object.keys(properties)) keys.add(key);
    } else {
      const segment = segments[i];
      const children = 'key' in segment
        ? this.propertySchemas(schema, segment.key)
        : this.elementSchemas(schema, 'index' in segment ? segment.index : undefined);
      if (Array.isArray(children)) for (const child of children) this.collectKeys(child, segments, i + 1, keys);
    }
    const members = [...schemaList(own(schema, 'allOf')), ...schemaList(own(schema, 'anyOf')), ...schemaList(own(schema, 'oneOf'))];
    for (const member of [...members, ...conditionalSchemas(schema)]) this.collectKeys(member, segments, i, keys);
    const target = this.refTarget(schema);
    if (target !== undefined && target !== OPEN_REF) this.collectKeys(target, segments, i, keys);
  }
}

/** Marks a node whose walk at a segment has begun and not ended. */
const IN_PROGRESS = Symbol('in progress');

const OPEN_REF = Symbol('open reference');

/** Subschemas that apply to some payloads only: `if`, `then`, `else`, `dependentSchemas` (and its older name `dependencies`). */
function conditionalSchemas(schema: SchemaObject): Schema[] {
  const branches = [own(schema, 'if'), own(schema, 'then'), own(schema, 'else')];
  for (const keyword of ['dependentSchemas', 'dependencies']) {
    const dependent = own(schema, keyword);
    if (isSchemaObject(dependent)) branches.push(...Object.values(dependent));
  }
  // `dependencies` may also map to lists of names, which declare nothing.
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
