/**
 * JSON as the console shows and reads it: pretty-printed for reading, and
 * parsed from a text area with the parser's complaint kept, so the page
 * can show it next to the text area before anything is sent.
 */

/** A JSON value as indented text; `undefined` (a field not set) reads as "(not set)". */
export function jsonText(value: unknown): string {
  if (value === undefined) return '(not set)';
  return JSON.stringify(value, null, 2);
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

/** Parses `text` as JSON; the failure says what the browser's parser said. */
export function parseJson<T = unknown>(text: string): Parsed<T> {
  try {
    return { ok: true, value: JSON.parse(text) as T };
  } catch (error) {
    return { ok: false, message: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}
