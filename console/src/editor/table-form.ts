/**
 * A decision table as the grid editor holds it: every cell and output as
 * the text its input shows, rows with stable keys (so moving a row moves
 * its inputs, focus and all), and the conversions to and from the API's
 * `table` (docs/rule-language.md, "Decision tables"). Output values are
 * read as the CSV form reads them: JSON when the text is JSON, else the
 * text itself as a string. Also the row operations and the reading of
 * rows pasted from a spreadsheet (tab-separated text).
 */
import type { FieldError } from '../api.ts';

export const HIT_POLICIES = ['first', 'unique', 'any', 'collect'] as const;

/** One column the rows test: a payload path, or an expression of the rule language. */
export interface TableInputForm {
  name: string;
  source: 'path' | 'expression';
  text: string;
}

export interface TableRowForm {
  /** Stable across moves: the rendering key. */
  key: number;
  when: string[];
  then: string[];
}

export interface TableForm {
  hitPolicy: string;
  inputs: TableInputForm[];
  outputs: string[];
  rows: TableRowForm[];
  /** `fail`, `pass`, or `default`: the outputs of `defaultThen`. */
  noMatch: 'fail' | 'pass' | 'default';
  defaultThen: string[];
}

let nextKey = 1;

/** A row of `cells` (one per input) and `outputs`, with a key of its own. */
export function newRow(inputs: number, outputs: number, when: readonly string[] = [], then: readonly string[] = []): TableRowForm {
  const pad = (values: readonly string[], count: number, fill: string): string[] => Array.from({ length: count }, (_, index) => values[index] ?? fill);
  return { key: nextKey++, when: pad(when, inputs, '-'), then: pad(then, outputs, '') };
}

/** The table a new decision-table rule starts with: one input, one output, one row that matches anything. */
export function starterTable(): TableForm {
  return {
    hitPolicy: 'first', inputs: [{ name: 'input1', source: 'path', text: '' }], outputs: ['output1'],
    rows: [newRow(1, 1)], noMatch: 'fail', defaultThen: [''],
  };
}

/** An output value as its cell shows it: a string bare, anything else as JSON. */
export function outputText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A cell's text as an output value: JSON when it is JSON, else the text as a string. */
export function outputValue(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The form of a table read from the API (its `table` field). */
export function tableToForm(table: unknown): TableForm {
  const source = record(table);
  const text = (value: unknown): string => (typeof value === 'string' ? value : '');
  const inputs = list(source.inputs).map((entry): TableInputForm => {
    const input = record(entry);
    return typeof input.expression === 'string'
      ? { name: text(input.name), source: 'expression', text: input.expression }
      : { name: text(input.name), source: 'path', text: text(input.path) };
  });
  const outputs = list(source.outputs).map(String);
  const rows = list(source.rows).map((entry) => {
    const row = record(entry);
    return newRow(inputs.length, outputs.length, list(row.when).map(String), list(row.then).map(outputText));
  });
  const noMatch = source.noMatch;
  const fallback = record(noMatch);
  return {
    hitPolicy: typeof source.hitPolicy === 'string' ? source.hitPolicy : 'first',
    inputs, outputs, rows,
    noMatch: noMatch === 'pass' ? 'pass' : Array.isArray(fallback.then) ? 'default' : 'fail',
    defaultThen: outputs.map((_, index) => (Array.isArray(fallback.then) ? outputText(fallback.then[index]) : '')),
  };
}

/** The table as the API takes it; a column without a name is an error at its place. */
export function formToTable(form: TableForm, errors: FieldError[]): Record<string, unknown> {
  form.inputs.forEach((input, index) => {
    if (input.name.trim() === '') errors.push({ path: `table.inputs[${index}].name`, message: `input ${index + 1} needs a name` });
  });
  form.outputs.forEach((output, index) => {
    if (output.trim() === '') errors.push({ path: `table.outputs[${index}]`, message: `output ${index + 1} needs a name` });
  });
  const table: Record<string, unknown> = {
    hitPolicy: form.hitPolicy,
    inputs: form.inputs.map((input) => (input.source === 'expression'
      ? { name: input.name.trim(), expression: input.text }
      : { name: input.name.trim(), path: input.text.trim() })),
    outputs: form.outputs.map((output) => output.trim()),
    rows: form.rows.map((row) => ({ when: row.when, then: row.then.map(outputValue) })),
  };
  if (form.noMatch === 'pass') table.noMatch = 'pass';
  if (form.noMatch === 'default') table.noMatch = { then: form.defaultThen.map(outputValue) };
  return table;
}

/** `rows` with `row` moved by `step` (-1 up, +1 down); unchanged at either end. */
export function moveRow<T>(rows: readonly T[], index: number, step: -1 | 1): T[] {
  const target = index + step;
  if (target < 0 || target >= rows.length) return [...rows];
  const next = [...rows];
  [next[index], next[target]] = [next[target], next[index]];
  return next;
}

/**
 * Reads text pasted from a spreadsheet: lines of tab-separated cells. A
 * trailing line break (spreadsheets end a copy with one) adds no row. A
 * cell that a spreadsheet quoted because it holds a tab, a line break or a
 * quote (`"""auto"""` for `"auto"`) is unquoted; a cell that merely starts
 * and ends with a quote (`"auto"`, the cell syntax of a text literal) is
 * kept as it is.
 */
export function parseTsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let at = 0;
  const source = text.replace(/\r\n?/g, '\n').replace(/\n$/, '');
  for (;;) {
    let cell: string | undefined;
    if (source[at] === '"') {
      // A quoted cell, if it is one: it closes with a quote before a tab, a line break or the end.
      let value = '';
      let escaped = false;
      let index = at + 1;
      for (; index < source.length; index++) {
        if (source[index] !== '"') { value += source[index]; continue; }
        if (source[index + 1] === '"') { value += '"'; escaped = true; index++; continue; }
        break;
      }
      const after = source[index + 1];
      const closes = index < source.length && (after === undefined || after === '\t' || after === '\n');
      if (closes && (escaped || /[\t\n]/.test(value))) {
        cell = value;
        at = index + 1;
      }
    }
    if (cell === undefined) {
      let end = at;
      while (end < source.length && source[end] !== '\t' && source[end] !== '\n') end++;
      cell = source.slice(at, end);
      at = end;
    }
    row.push(cell);
    if (at >= source.length) break;
    if (source[at] === '\n') { rows.push(row); row = []; }
    at++;
  }
  rows.push(row);
  return rows;
}

/**
 * The rows after pasting `cells` (from parseTsv) at row `rowIndex`, column
 * `column` (inputs first, then outputs): existing cells are overwritten,
 * rows are added below as needed, and cells past the last column are
 * dropped.
 */
export function pasteCells(form: TableForm, rowIndex: number, column: number, cells: readonly string[][]): TableRowForm[] {
  const inputs = form.inputs.length;
  const width = inputs + form.outputs.length;
  const rows = form.rows.map((row) => ({ ...row, when: [...row.when], then: [...row.then] }));
  cells.forEach((line, offset) => {
    const at = rowIndex + offset;
    while (rows.length <= at) rows.push(newRow(inputs, form.outputs.length));
    const row = rows[at];
    line.forEach((value, step) => {
      const target = column + step;
      if (target >= width) return;
      if (target < inputs) row.when[target] = value.trim();
      else row.then[target - inputs] = value;
    });
  });
  return rows;
}

/** The row a finding's path is about (`table.rows[3]`, `table.rows[3].when[1]`), and its cell. */
export function placeOf(path: string): { row: number; part?: 'when' | 'then'; cell?: number } | undefined {
  const match = /^table\.rows\[(\d+)\](?:\.(when|then)\[(\d+)\])?/.exec(path);
  if (match === null) return undefined;
  return { row: Number(match[1]), ...(match[2] === undefined ? {} : { part: match[2] as 'when' | 'then', cell: Number(match[3]) }) };
}

/**
 * A finding's message as the grid shows it: without the path it repeats
 * in front, and with the rows numbered as the grid numbers them (from 1):
 * `rows[2]` reads `row 3`.
 */
export function gridMessage(path: string, message: string): string {
  const bare = message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message;
  return bare.replace(/\brows\[(\d+)\]/g, (_, index: string) => `row ${Number(index) + 1}`);
}
