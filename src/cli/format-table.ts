/**
 * Plain-text tables for terminals: columns padded to their widest cell,
 * separated by two spaces. Control characters in cells (a key name is
 * free text) are shown escaped, so a cell cannot move the cursor.
 */

/**
 * @example
 * formatTable(['ID', 'NAME'], [['1', 'ci']]);
 * // 'ID  NAME\n1   ci'
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [header, ...rows].map((row) => row.map(printable));
  const widths = header.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  return cells
    .map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  '))
    .join('\n');
}

/** Printable form of a cell: C0/C1 controls and line separators as \u escapes. */
function printable(cell: string): string {
  // eslint-disable-next-line no-control-regex
  return cell.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
