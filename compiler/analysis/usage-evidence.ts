/**
 * Kinds a rule's own text gives a field that no schema types: ordered
 * against a number (`total > 0`) or used in arithmetic, the author treats
 * it as a number; ordered against a string (`total > "5"`), as a string.
 * A field treated both ways in one rule has a comparison that is always
 * false, whichever it is. A field the rule tests with a type test
 * (`isNumber(total) ? ... : ...`) may legitimately be either, and is left
 * alone.
 */
import type { Position } from '../expression/errors.ts';
import type { WarningPath, WarningSink } from './warnings.ts';

/** Where a use was written, as a warning would point at it. */
export interface UseSite {
  path: WarningPath;
  position: Position;
  /** The operation as written, for messages. */
  text: string;
}

interface StringOrdering extends UseSite {
  /** The field as written in this operation. */
  fieldText: string;
  /** The operation with the string written as a number, when it is one. */
  suggestion?: string;
}

/** The uses of the fields of one rule, keyed by their paths. */
export class UsageEvidence {
  readonly #numberUse = new Map<string, UseSite>();
  readonly #stringOrderings = new Map<string, StringOrdering[]>();
  readonly #typeTested = new Set<string>();

  usedAsNumber(field: string, site: UseSite): void {
    if (!this.#numberUse.has(field)) this.#numberUse.set(field, site);
  }

  orderedAgainstString(field: string, site: StringOrdering): void {
    const list = this.#stringOrderings.get(field);
    if (list === undefined) this.#stringOrderings.set(field, [site]);
    else list.push(site);
  }

  typeTested(field: string): void {
    this.#typeTested.add(field);
  }

  /** A TYPE_MISMATCH at each string ordering of a field that the rule also uses as a number. */
  report(sink: WarningSink): void {
    for (const [field, orderings] of this.#stringOrderings) {
      const number = this.#numberUse.get(field);
      if (number === undefined || this.#typeTested.has(field)) continue;
      for (const o of orderings) {
        sink.add(
          'TYPE_MISMATCH',
          o.path,
          `\`${o.text}\` compares \`${o.fieldText}\` with a string, but \`${number.text}\` uses it as a number: one of them is always false`,
          o.position,
          o.suggestion,
        );
      }
    }
  }
}
