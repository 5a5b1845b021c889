/**
 * The grid editor of a decision-table rule: the hit policy and what
 * happens when no row matches, the columns (inputs read from a path or an
 * expression, and outputs), and the rows as a <table> of text inputs, one
 * per cell, with buttons to add a row below, move it up or down and
 * delete it. Text pasted into a cell from a spreadsheet (tab-separated)
 * fills the cells from there on and adds rows as needed. The live check of
 * the rule editor (POST /rules/check) lints the cells: a cell that does
 * not parse is aria-invalid and described by its message, and the
 * analysis' findings (an unreachable or overlapping row, a type mismatch)
 * are shown beside the row they name; those about the whole table (gaps,
 * what could not be analyzed) above the grid.
 */
import { memo } from 'preact/compat';
import { useLayoutEffect, useMemo, useRef } from 'preact/hooks';
import type { TargetedClipboardEvent, TargetedKeyboardEvent } from 'preact';
import type { ApiError } from '../api.ts';
import type { RuleCheckResult } from '../api-types.ts';
import {
  gridMessage, HIT_POLICIES, moveRow, newRow, parseTsv, pasteCells, placeOf, type TableForm, type TableRowForm,
} from './table-form.ts';

/** Short names of the findings a row can have, before the service's message. */
const FINDING_LABELS: Record<string, string> = {
  TABLE_UNREACHABLE: 'Unreachable', TABLE_OVERLAP: 'Overlap', TYPE_MISMATCH: 'Type mismatch', TABLE_INCOMPLETE: 'Not analyzed',
  TABLE_GAP: 'Gap', UNKNOWN_FIELD: 'Unknown field',
};

/** One message about a row, or a cell of it. */
interface RowFinding {
  severity: 'error' | 'warning';
  label: string;
  text: string;
  /** The cell it is about: inputs from 0, then outputs. */
  column?: number;
}

export interface TableGridProps {
  table: TableForm;
  onChange: (next: TableForm) => void;
  /** The latest live check, and the keys the table's rows had when it was asked (its findings follow their rows). */
  check: RuleCheckResult | undefined;
  checkedRowKeys: readonly number[] | undefined;
  saveError: ApiError | undefined;
  readOnly: boolean;
}

/** Where the focus goes once the grid has re-rendered: a control of a row, found by its key. */
interface FocusTarget { key: number | 'end'; control: string }

export function TableGrid({ table, onChange, check, checkedRowKeys, saveError, readOnly }: TableGridProps) {
  const root = useRef<HTMLDivElement>(null);
  const pendingFocus = useRef<FocusTarget | undefined>(undefined);
  // In the same task as the render, so a key pressed next lands on the control that took the focus.
  useLayoutEffect(() => {
    const target = pendingFocus.current;
    if (target === undefined || root.current === null) return;
    pendingFocus.current = undefined;
    const scope = target.key === 'end' ? root.current : root.current.querySelector(`tr[data-row-key="${target.key}"]`);
    scope?.querySelector<HTMLElement>(target.control)?.focus();
  });

  const inputCount = table.inputs.length;
  const names = [...table.inputs.map((input) => input.name), ...table.outputs];
  // The same array while the names stay: rows are redrawn only when something of theirs changes (a table may have thousands).
  const columnsKey = JSON.stringify(names);
  const columnNames = useMemo(() => names, [columnsKey]);
  const update = (patch: Partial<TableForm>): void => onChange({ ...table, ...patch });
  const setRows = (rows: TableRowForm[], focus?: FocusTarget): void => {
    pendingFocus.current = focus;
    update({ rows });
  };
  const setCell = (rowIndex: number, column: number, value: string): void => {
    setRows(table.rows.map((row, index) => {
      if (index !== rowIndex) return row;
      return column < inputCount
        ? { ...row, when: row.when.map((cell, at) => (at === column ? value : cell)) }
        : { ...row, then: row.then.map((cell, at) => (at === column - inputCount ? value : cell)) };
    }));
  };

  // Findings by row key: the live check's at the rows it was asked about, the last save's at the rows as they are.
  const rowFindings = new Map<number, RowFinding[]>();
  const tableFindings: RowFinding[] = [];
  const add = (path: string, finding: Omit<RowFinding, 'column'>, keys: readonly number[] | undefined): void => {
    const place = placeOf(path);
    if (place === undefined) {
      tableFindings.push(finding);
      return;
    }
    // A row deleted since the check was asked: its findings went with it.
    const key = keys?.[place.row];
    if (key === undefined) return;
    const column = place.part === undefined ? undefined : place.part === 'when' ? place.cell! : inputCount + place.cell!;
    const found = rowFindings.get(key) ?? [];
    found.push({ ...finding, ...(column === undefined ? {} : { column }) });
    rowFindings.set(key, found);
  };
  if (check !== undefined) {
    for (const error of check.errors) {
      if (error.path.startsWith('table')) add(error.path, { severity: 'error', label: 'Error', text: gridMessage(error.path, error.message) }, checkedRowKeys);
    }
    for (const warning of check.warnings) {
      if (!warning.path.startsWith('table')) continue;
      add(warning.path, { severity: 'warning', label: FINDING_LABELS[warning.code] ?? warning.code, text: gridMessage(warning.path, warning.message) }, checkedRowKeys);
    }
  }
  for (const error of saveError?.errorsAt('table') ?? []) {
    // A save's refusal repeats what the live check said: shown once.
    const text = gridMessage(error.path, error.message);
    const place = placeOf(error.path);
    const key = place === undefined ? undefined : table.rows[place.row]?.key;
    const known = key === undefined ? tableFindings : rowFindings.get(key) ?? [];
    if (!known.some((finding) => finding.text === text)) add(error.path, { severity: 'error', label: 'Error', text }, table.rows.map((row) => row.key));
  }

  const onPaste = (rowIndex: number, column: number, event: TargetedClipboardEvent<HTMLInputElement>): void => {
    const text = event.clipboardData?.getData('text/plain') ?? '';
    if (!/[\t\n]/.test(text.replace(/\r?\n$/, ''))) return;
    event.preventDefault();
    const cells = parseTsv(text);
    const rows = pasteCells(table, rowIndex, column, cells);
    setRows(rows, { key: rows[rowIndex].key, control: `[data-col="${column}"]` });
  };
  // Up and down (and Enter, rather than submitting the rule) move along the column, as in a spreadsheet; Tab goes along the row.
  const onKeyDown = (rowIndex: number, column: number, event: TargetedKeyboardEvent<HTMLInputElement>): void => {
    if (event.key !== 'ArrowUp' && event.key !== 'ArrowDown' && event.key !== 'Enter') return;
    event.preventDefault();
    const target = table.rows[rowIndex + (event.key === 'ArrowUp' ? -1 : 1)];
    if (target === undefined) return;
    root.current?.querySelector<HTMLElement>(`tr[data-row-key="${target.key}"] [data-col="${column}"]`)?.focus();
  };

  const addBelow = (rowIndex: number): void => {
    const row = newRow(inputCount, table.outputs.length);
    setRows([...table.rows.slice(0, rowIndex + 1), row, ...table.rows.slice(rowIndex + 1)], { key: row.key, control: '[data-col="0"]' });
  };
  const addAtEnd = (): void => {
    const row = newRow(inputCount, table.outputs.length);
    setRows([...table.rows, row], { key: row.key, control: '[data-col="0"]' });
  };
  const move = (rowIndex: number, step: -1 | 1): void => {
    const key = table.rows[rowIndex].key;
    const rows = moveRow(table.rows, rowIndex, step);
    // At the top (or bottom) now, the button pressed is disabled: the row's other one takes the focus.
    const atEnd = step === -1 ? rowIndex + step === 0 : rowIndex + step === rows.length - 1;
    const pressed = step === -1 ? '.move-up' : '.move-down';
    const other = step === -1 ? '.move-down' : '.move-up';
    setRows(rows, { key, control: atEnd ? other : pressed });
  };
  const remove = (rowIndex: number): void => {
    const rows = table.rows.filter((_, index) => index !== rowIndex);
    const next = rows[rowIndex] ?? rows[rowIndex - 1];
    setRows(rows, next === undefined ? { key: 'end', control: '.add-row' } : { key: next.key, control: '.delete-row' });
  };

  // The rows' handlers, the same functions at every render (a row redrawn for a new handler would defeat GridRow's memo),
  // each calling the latest render's own.
  const handlers: RowActions = { setCell, onPaste, onKeyDown, addBelow, move, remove };
  const latestHandlers = useRef(handlers);
  latestHandlers.current = handlers;
  const rowActions = useMemo<RowActions>(() => ({
    setCell: (...args) => latestHandlers.current.setCell(...args),
    onPaste: (...args) => latestHandlers.current.onPaste(...args),
    onKeyDown: (...args) => latestHandlers.current.onKeyDown(...args),
    addBelow: (...args) => latestHandlers.current.addBelow(...args),
    move: (...args) => latestHandlers.current.move(...args),
    remove: (...args) => latestHandlers.current.remove(...args),
  }), []);

  const setInput = (index: number, patch: Partial<TableForm['inputs'][number]>): void => {
    update({ inputs: table.inputs.map((input, at) => (at === index ? { ...input, ...patch } : input)) });
  };
  const addInput = (): void => {
    update({
      inputs: [...table.inputs, { name: `input${inputCount + 1}`, source: 'path', text: '' }],
      rows: table.rows.map((row) => ({ ...row, when: [...row.when, '-'] })),
    });
  };
  const removeInput = (index: number): void => {
    update({
      inputs: table.inputs.filter((_, at) => at !== index),
      rows: table.rows.map((row) => ({ ...row, when: row.when.filter((_, at) => at !== index) })),
    });
  };
  const addOutput = (): void => {
    update({
      outputs: [...table.outputs, `output${table.outputs.length + 1}`], defaultThen: [...table.defaultThen, ''],
      rows: table.rows.map((row) => ({ ...row, then: [...row.then, ''] })),
    });
  };
  const removeOutput = (index: number): void => {
    update({
      outputs: table.outputs.filter((_, at) => at !== index), defaultThen: table.defaultThen.filter((_, at) => at !== index),
      rows: table.rows.map((row) => ({ ...row, then: row.then.filter((_, at) => at !== index) })),
    });
  };

  return (
    <div class="table-editor" ref={root} role="group" aria-labelledby="rule-table-label">
      <h2 id="rule-table-label" class="table-title">Decision table</h2>
      <p class="hint" id="rule-table-hint">
        Each row tests the inputs with one cell each (<code>-</code> any, <code>"auto"</code>, <code>&gt;= 700</code>, <code>[600..700)</code>,
        {' '}<code>in ["US", "CA"]</code>, <code>not(…)</code>) and gives its outputs, <code>$row.</code><i>name</i> in the expression.
        Paste rows from a spreadsheet into a cell; ↑, ↓ and Enter move along a column.
      </p>
      <div class="table-settings">
        <div class="field">
          <label for="rule-table-hitPolicy">hitPolicy</label>
          <select id="rule-table-hitPolicy" value={table.hitPolicy} disabled={readOnly} onChange={(event) => update({ hitPolicy: event.currentTarget.value })}>
            {HIT_POLICIES.map((policy) => <option key={policy} value={policy}>{policy}</option>)}
          </select>
        </div>
        <div class="field">
          <label for="rule-table-noMatch">noMatch</label>
          <select id="rule-table-noMatch" value={table.noMatch} disabled={readOnly}
            onChange={(event) => update({ noMatch: event.currentTarget.value as TableForm['noMatch'] })}>
            <option value="fail">fail</option>
            <option value="pass">pass</option>
            <option value="default">default row</option>
          </select>
        </div>
        {table.noMatch === 'default' && table.outputs.map((output, index) => (
          <div class="field" key={`default-${index}`}>
            <label for={`rule-table-default-${index}`}>default {output}</label>
            <input id={`rule-table-default-${index}`} type="text" spellcheck={false} value={table.defaultThen[index] ?? ''} readOnly={readOnly}
              onInput={(event) => update({ defaultThen: table.defaultThen.map((value, at) => (at === index ? event.currentTarget.value : value)) })} />
          </div>
        ))}
      </div>
      <fieldset class="table-columns">
        <legend>Columns</legend>
        <div class="column-group">
          <h3 id="rule-table-inputs">Inputs (when)</h3>
          <ul class="column-list" aria-labelledby="rule-table-inputs">
            {table.inputs.map((input, index) => (
              <li key={index}>
                <input type="text" class="column-name" spellcheck={false} aria-label={`Input ${index + 1} name`} value={input.name} readOnly={readOnly}
                  onInput={(event) => setInput(index, { name: event.currentTarget.value })} />
                <select aria-label={`Input ${index + 1} reads`} value={input.source} disabled={readOnly}
                  onChange={(event) => setInput(index, { source: event.currentTarget.value as 'path' | 'expression' })}>
                  <option value="path">path</option>
                  <option value="expression">expression</option>
                </select>
                <input type="text" class="column-source" spellcheck={false} aria-label={`Input ${index + 1} ${input.source}`} value={input.text} readOnly={readOnly}
                  placeholder={input.source === 'path' ? 'loan.product' : 'applicant.score / 10'}
                  onInput={(event) => setInput(index, { text: event.currentTarget.value })} />
                {!readOnly && table.inputs.length > 1 && (
                  <button type="button" class="secondary" aria-label={`Remove input ${input.name || index + 1}`} onClick={() => removeInput(index)}>Remove</button>
                )}
              </li>
            ))}
          </ul>
        </div>
        <div class="column-group">
          <h3 id="rule-table-outputs">Outputs (then)</h3>
          <ul class="column-list" aria-labelledby="rule-table-outputs">
            {table.outputs.map((output, index) => (
              <li key={index}>
                <input type="text" class="column-name" spellcheck={false} aria-label={`Output ${index + 1} name`} value={output} readOnly={readOnly}
                  onInput={(event) => update({ outputs: table.outputs.map((name, at) => (at === index ? event.currentTarget.value : name)) })} />
                {!readOnly && (
                  <button type="button" class="secondary" aria-label={`Remove output ${output || index + 1}`} onClick={() => removeOutput(index)}>Remove</button>
                )}
              </li>
            ))}
          </ul>
        </div>
        {!readOnly && (
          <div class="toolbar">
            <button type="button" class="secondary" onClick={addInput}>Add input</button>
            <button type="button" class="secondary" onClick={addOutput}>Add output</button>
          </div>
        )}
      </fieldset>
      {tableFindings.length > 0 && (
        <ul class="findings table-findings" aria-label="Findings about the table">
          {tableFindings.map((finding, index) => (
            <li key={index} class={`finding-${finding.severity}`}><strong>{finding.label}</strong>: {finding.text}</li>
          ))}
        </ul>
      )}
      <div class="grid-scroll">
        <table class="table-grid">
          <caption>{table.rows.length} {table.rows.length === 1 ? 'row' : 'rows'}, {table.hitPolicy === 'first' ? 'the first matching row counts' : `hit policy ${table.hitPolicy}`}</caption>
          <colgroup><col class="row-number" /></colgroup>
          <colgroup span={inputCount} class="when-columns" />
          <colgroup span={Math.max(table.outputs.length, 1)} class="then-columns" />
          <colgroup span={readOnly ? 1 : 2} />
          <thead>
            <tr>
              <td />
              <th scope="colgroup" colSpan={inputCount} class="when-head">When (inputs)</th>
              {table.outputs.length > 0 && <th scope="colgroup" colSpan={table.outputs.length} class="then-head">Then (outputs)</th>}
              <td colSpan={readOnly ? 1 : 2} />
            </tr>
            <tr>
              <th scope="col">Row</th>
              {columnNames.map((name, column) => (
                <th scope="col" key={column} class={column < inputCount ? 'when-col' : 'then-col'}>{name === '' ? `(column ${column + 1})` : name}</th>
              ))}
              <th scope="col">Findings</th>
              {!readOnly && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {table.rows.map((row, rowIndex) => {
              const findings = rowFindings.get(row.key) ?? NO_FINDINGS;
              return (
                <GridRow key={row.key} row={row} rowIndex={rowIndex} isLast={rowIndex === table.rows.length - 1} columnNames={columnNames}
                  inputCount={inputCount} findings={findings} findingsKey={findings === NO_FINDINGS ? '' : JSON.stringify(findings)}
                  readOnly={readOnly} actions={rowActions} />
              );
            })}
          </tbody>
        </table>
      </div>
      {!readOnly && (
        <div class="toolbar">
          <button type="button" class="secondary add-row" onClick={addAtEnd}>Add row</button>
        </div>
      )}
    </div>
  );
}

const NO_FINDINGS: readonly RowFinding[] = [];

/** What a row of the grid can ask of the grid: the same functions at every render. */
interface RowActions {
  setCell(rowIndex: number, column: number, value: string): void;
  onPaste(rowIndex: number, column: number, event: TargetedClipboardEvent<HTMLInputElement>): void;
  onKeyDown(rowIndex: number, column: number, event: TargetedKeyboardEvent<HTMLInputElement>): void;
  addBelow(rowIndex: number): void;
  move(rowIndex: number, step: -1 | 1): void;
  remove(rowIndex: number): void;
}

interface GridRowProps {
  row: TableRowForm;
  rowIndex: number;
  isLast: boolean;
  columnNames: readonly string[];
  inputCount: number;
  findings: readonly RowFinding[];
  /** The findings as text: equal findings, recomputed at each render, do not redraw the row. */
  findingsKey: string;
  readOnly: boolean;
  actions: RowActions;
}

/** One row: its number, a text input per cell, its findings and its buttons. Redrawn only when one of its props changes. */
const GridRow = memo(function GridRow({ row, rowIndex, isLast, columnNames, inputCount, findings, readOnly, actions }: GridRowProps) {
  const findingsId = `table-row-${row.key}-findings`;
  const rowClass = findings.some((finding) => finding.severity === 'error') ? 'row-error' : findings.length > 0 ? 'row-warning' : '';
  const label = `row ${rowIndex + 1}`;
  return (
    <tr data-row-key={row.key} class={rowClass}>
      <th scope="row">{rowIndex + 1}</th>
      {[...row.when, ...row.then].map((value, column) => {
        const cellFindings = findings.filter((finding) => finding.column === column);
        const invalid = cellFindings.some((finding) => finding.severity === 'error');
        const name = columnNames[column] === '' ? `column ${column + 1}` : columnNames[column];
        return (
          <td key={column} class={`${column < inputCount ? 'when-cell' : 'then-cell'}${invalid ? ' cell-error' : cellFindings.length > 0 ? ' cell-warning' : ''}`}>
            <input type="text" spellcheck={false} data-col={column} aria-label={`Row ${rowIndex + 1} ${name}`} value={value} readOnly={readOnly}
              aria-invalid={invalid ? 'true' : undefined}
              aria-describedby={cellFindings.length > 0 ? cellFindings.map((finding) => `${findingsId}-${findings.indexOf(finding)}`).join(' ') : undefined}
              onInput={(event) => actions.setCell(rowIndex, column, event.currentTarget.value)}
              onPaste={readOnly ? undefined : (event) => actions.onPaste(rowIndex, column, event)}
              onKeyDown={(event) => actions.onKeyDown(rowIndex, column, event)} />
          </td>
        );
      })}
      <td class="row-findings">
        {findings.length > 0 && (
          <ul class="findings" aria-label={`Findings of ${label}`}>
            {findings.map((finding, index) => (
              <li key={index} id={`${findingsId}-${index}`} class={`finding-${finding.severity}`}>
                <strong>{finding.column === undefined ? finding.label : `${finding.label}, row ${rowIndex + 1}, ${columnNames[finding.column] ?? `column ${finding.column + 1}`}`}</strong>: {finding.text}
              </li>
            ))}
          </ul>
        )}
      </td>
      {!readOnly && (
        <td class="row-actions">
          <button type="button" class="secondary add-below" aria-label={`Add a row below ${label}`} title="Add a row below" onClick={() => actions.addBelow(rowIndex)}>+</button>
          <button type="button" class="secondary move-up" aria-label={`Move ${label} up`} title="Move up" disabled={rowIndex === 0} onClick={() => actions.move(rowIndex, -1)}>↑</button>
          <button type="button" class="secondary move-down" aria-label={`Move ${label} down`} title="Move down" disabled={isLast} onClick={() => actions.move(rowIndex, 1)}>↓</button>
          <button type="button" class="secondary delete-row" aria-label={`Delete ${label}`} title="Delete" onClick={() => actions.remove(rowIndex)}>✕</button>
        </td>
      )}
    </tr>
  );
}, (before, after) => before.row === after.row && before.rowIndex === after.rowIndex && before.isLast === after.isLast
  && before.columnNames === after.columnNames && before.inputCount === after.inputCount && before.findingsKey === after.findingsKey
  && before.readOnly === after.readOnly && before.actions === after.actions);
