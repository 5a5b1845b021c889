/**
 * Where inside a tenant's schema Ajv's refusal is, and what was probably
 * meant, so that a save names `properties.street.minLenght` rather than
 * the schema as a whole.
 *
 * Ajv's strict-mode "unknown keyword" error names the keyword but not where
 * it is; it is found again by walking the schema positions the policy
 * walks. Ajv's other errors and the policy's own carry a JSON Pointer in
 * their text (`at "#/properties/a"`, `(at #/a)`, `#/a/maximum must be ...`),
 * which is read back.
 */
import { closestKey } from '../analysis/closest-path.ts';
import { escapePointer, visitSchemaPositions } from './schema-policy.ts';
import { sharedAjv } from './shared-ajv.ts';

/** Ajv's strict-mode refusal of a keyword it does not know. */
const UNKNOWN_KEYWORD = /^strict mode: unknown keyword: "((?:[^"\\]|\\.)*)"$/;
/** Ajv's strictTypes refusal: `... for keyword "minimum" at "#/properties/a" (strictTypes)`. */
const KEYWORD_AT = /for keyword "([^"]*)" at "#([^"]*)"/;
/** Ajv's refusal of a format it does not know: `unknown format "emial" ignored in schema at path "#/a"`. */
const UNKNOWN_FORMAT = /^unknown format .* at path "#([^"]*)"$/;
/** Ajv's refusal of a `$ref` to nothing: `can't resolve reference #/$defs/a from id ` (the pointer is the target). */
const UNRESOLVED_REF = /^can't resolve reference (\S+) from id/;
/** A JSON Pointer below the root in a message: `(at #/properties/a)`, `#/type must be ...`. */
const POINTER = /#(\/[^\s)"',]*)/;

/** Known keywords that are never a useful suggestion: refused by the policy, or not of draft 2020-12. */
const NOT_SUGGESTED = new Set(['$async', '$id', 'id', '$recursiveAnchor', '$recursiveRef', 'nullable']);

/** Where a refusal is, and the message to give. */
export interface SchemaErrorPlace {
  /** JSON Pointer inside the schema, without `#`; '' for the schema as a whole. */
  pointer: string;
  message: string;
}

/**
 * Places Ajv's or the policy's `message` about `schema` (the tenant's
 * schema as Ajv saw it) inside the schema; an unknown keyword also gets the
 * nearest keyword Ajv knows, when one is near.
 *
 * @example
 * placeSchemaError({ properties: { street: { minLenght: 3 } } }, 'strict mode: unknown keyword: "minLenght"');
 * // { pointer: '/properties/street/minLenght',
 * //   message: 'strict mode: unknown keyword: "minLenght" at "#/properties/street"; did you mean "minLength"?' }
 */
export function placeSchemaError(schema: unknown, message: string): SchemaErrorPlace {
  const unknown = UNKNOWN_KEYWORD.exec(message);
  if (unknown !== null) {
    const keyword = JSON.parse(`"${unknown[1]}"`) as string;
    const parent = visitSchemaPositions(schema, (node, pointer) => (Object.hasOwn(node, keyword) ? pointer : undefined));
    const parentPointer = parent === undefined ? '' : parent.slice(1);
    const suggestion = closestKey(keyword, knownKeywords());
    return {
      pointer: parent === undefined ? '' : `${parentPointer}/${escapePointer(keyword)}`,
      message:
        (parent === undefined ? message : `${message} at "#${parentPointer}"`) +
        (suggestion === undefined ? '' : `; did you mean "${suggestion}"?`),
    };
  }
  const unresolved = UNRESOLVED_REF.exec(message);
  if (unresolved !== null) {
    const ref = unresolved[1];
    const at = visitSchemaPositions(schema, (node, pointer) =>
      node.$ref === ref ? `${pointer}/$ref` : node.$dynamicRef === ref ? `${pointer}/$dynamicRef` : undefined,
    );
    return { pointer: at === undefined ? '' : at.slice(1), message };
  }
  const format = UNKNOWN_FORMAT.exec(message);
  if (format !== null) return { pointer: `${format[1]}/format`, message };
  const typed = KEYWORD_AT.exec(message);
  if (typed !== null) return { pointer: `${typed[2]}/${escapePointer(typed[1])}`, message };
  return { pointer: POINTER.exec(message)?.[1] ?? '', message };
}

let known: string[] | undefined;

/** The keywords of the shared Ajv (draft 2020-12 and ajv-formats), as suggestions. */
function knownKeywords(): string[] {
  known ??= Object.keys(sharedAjv().RULES.keywords).filter((keyword) => !NOT_SUGGESTED.has(keyword));
  return known;
}
