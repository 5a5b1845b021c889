/**
 * A decision table's rows as CSV (RFC 4180), so a table can round-trip
 * through a spreadsheet (docs/api.md, "Decision tables as CSV"): a header
 * row of the input names then the output names; then one record per row,
 * its cells (the text of each test, as written) then its outputs.
 *
 * An output is written as JSON, except a string whose text is not itself
 * JSON, which is written bare (`auto` rather than `"auto"`), as people type
 * it into a spreadsheet; reading takes a field that parses as JSON as that
 * value and any other as a string. So `"12"` (a string) and `12` (a number)
 * stay apart and an export reads back as the same table.
 *
 * Only rows travel: the inputs' paths and expressions, the hit policy and
 * noMatch stay as the rule has them.
 */
import type { FieldError } from '../domain-errors.ts';
import type { TableDefinition, TableRow } from '../../compiler/types.ts';

/** The rows read from a CSV body, or the problems of the body, each naming its line and field. */
export type CsvRows = { ok: true; rows: TableRow[] } | { ok: false; errors: FieldError[] };

/** A body with every field wrong would report thousands: the first ones are enough to act on. */
const MAX_CSV_ERRORS = 20;

/**
 * The table's rows as CSV text, lines ended by CRLF (RFC 4180).
 *
 * @example
 * tableToCsv({ hitPolicy: 'first', inputs: [{ name: 'product', path: 'p' }], outputs: ['max'], rows: [{ when: ['"auto"'], then: [5] }] });
 * // 'product,max\r\n"""auto""",5\r\n'
 */
export function tableToCsv(table: TableDefinition): string {
  const outputs = table.outputs ?? [];
  const lines = [[...table.inputs.map((input) => input.name), ...outputs].map(quoteField).join(',')];
  for (const row of table.rows) {
    const outputFields = outputs.map((_, i) => outputText(row.then?.[i]));
    lines.push([...row.when, ...outputFields].map(quoteField).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Reads the rows of a CSV body for `table` (its inputs and outputs name the
 * columns the header must have, in order). At most `maxRows` records after
 * the header are read; one more is an error naming the limit.
 *
 * @example
 * csvToRows('product,max\r\n"""auto""",5\r\n', table, 10000); // { ok: true, rows: [{ when: ['"auto"'], then: [5] }] }
 */
export function csvToRows(text: string, table: TableDefinition, maxRows: number): CsvRows {
  const outputs = table.outputs ?? [];
  const expected = [...table.inputs.map((input) => input.name), ...outputs];
  const errors: FieldError[] = [];
  const rows: TableRow[] = [];
  const reader = new CsvReader(text);
  const header = reader.next();
  if (header === undefined) return { ok: false, errors: [{ path: 'line 1', message: `the CSV is empty: its first line is the header ${expected.join(',')}` }] };
  if (header.fields.length !== expected.length || header.fields.some((name, i) => name !== expected[i])) {
    return {
      ok: false,
      errors: [{ path: 'line 1', message: `the header is ${header.fields.join(',')}; the table's is ${expected.join(',')} (input names, then output names)` }],
    };
  }
  for (let record = reader.next(); record !== undefined; record = reader.next()) {
    if (record.error !== undefined) {
      errors.push({ path: `line ${record.line}`, message: record.error });
      break;
    }
    if (rows.length >= maxRows) {
      errors.push({ path: `line ${record.line}`, message: `a table has at most ${maxRows} rows (MAX_TABLE_ROWS); this is row ${rows.length + 1}` });
      break;
    }
    if (record.fields.length !== expected.length) {
      errors.push({
        path: `line ${record.line}`,
        message: `has ${record.fields.length} fields; the header has ${expected.length} (${table.inputs.length} cells, then ${outputs.length} outputs)`,
      });
      if (errors.length >= MAX_CSV_ERRORS) break;
      continue;
    }
    const when = record.fields.slice(0, table.inputs.length);
    const row: TableRow = { when };
    if (outputs.length > 0) row.then = record.fields.slice(table.inputs.length).map(outputValue);
    rows.push(row);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, rows };
}

function outputText(value: unknown): string {
  if (typeof value === 'string' && !parsesAsJson(value)) return value;
  return JSON.stringify(value) ?? 'null';
}

function outputValue(field: string): unknown {
  try {
    return JSON.parse(field) as unknown;
  } catch {
    return field;
  }
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A field quoted when it holds a comma, a quote, a line break, or leading or trailing space. */
function quoteField(field: string): string {
  return /[",\r\n]|^\s|\s$/.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}

interface CsvRecord {
  /** 1-based line of the record's first character. */
  line: number;
  fields: string[];
  /** Set when the record is malformed (a quote left open, text after a closing quote). */
  error?: string;
}

/** RFC 4180 records, one at a time; a last line without its line break and a final empty line are both fine. */
class CsvReader {
  readonly #text: string;
  #at = 0;
  #line = 1;

  constructor(text: string) {
    this.#text = text;
  }

  next(): CsvRecord | undefined {
    const text = this.#text;
    if (this.#at >= text.length) return undefined;
    const line = this.#line;
    const fields: string[] = [];
    for (;;) {
      const column = fields.length + 1;
      let field = '';
      if (text[this.#at] === '"') {
        this.#at++;
        for (;;) {
          const quote = text.indexOf('"', this.#at);
          if (quote < 0) return { line, fields, error: `field ${column}: a quoted field is not closed before the end of the file` };
          field += text.slice(this.#at, quote);
          this.#countLines(this.#at, quote);
          this.#at = quote + 1;
          if (text[this.#at] !== '"') break;
          field += '"';
          this.#at++;
        }
        const after = text[this.#at];
        if (after !== undefined && after !== ',' && after !== '\r' && after !== '\n') {
          return { line, fields, error: `field ${column}: text after the closing quote (a quote inside a field is written "")` };
        }
      } else {
        let end = this.#at;
        while (end < text.length && text[end] !== ',' && text[end] !== '\r' && text[end] !== '\n') end++;
        field = text.slice(this.#at, end);
        if (field.includes('"')) return { line, fields, error: `field ${column}: a quote inside an unquoted field (quote the field and write the quote as "")` };
        this.#at = end;
      }
      fields.push(field);
      const separator = text[this.#at];
      if (separator === ',') {
        this.#at++;
        continue;
      }
      if (separator === '\r' && text[this.#at + 1] === '\n') this.#at += 2;
      else if (separator !== undefined) this.#at++;
      this.#line++;
      return { line, fields };
    }
  }

  #countLines(from: number, to: number): void {
    for (let i = from; i < to; i++) if (this.#text[i] === '\n') this.#line++;
  }
}
