/**
 * Small helpers shared by the HTTP, scaling and summary reports: robust
 * statistics over rounds, and the same table rendered as aligned text for
 * the terminal or as markdown for `results/latest.md`.
 */

/** The median; NaN for no values. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The nearest-rank percentile (`p` from 0 to 100); NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** A table as data: one header row and string cells. */
export interface Table {
  header: string[];
  rows: string[][];
}

/** Aligned text: first column left, the others right. */
export function textTable({ header, rows }: Table): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/**
 * A GitHub-flavoured markdown table: by default the first column left and
 * the others right-aligned, as columns of numbers read best; `align: 'left'`
 * for columns of text.
 */
export function markdownTable({ header, rows }: Table, { align = 'numbers' }: { align?: 'numbers' | 'left' } = {}): string {
  const escape = (cell: string): string => cell.replace(/\|/g, '\\|');
  return [
    `| ${header.map(escape).join(' | ')} |`,
    `|${header.map((_, i) => (i === 0 || align === 'left' ? ' --- ' : ' ---: ')).join('|')}|`,
    ...rows.map((row) => `| ${row.map(escape).join(' | ')} |`),
  ].join('\n');
}

/** A whole number with thousands separators. */
export const int = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
/** A number with fixed decimals, `n/a` when not finite. */
export const fixed = (n: number | null, digits: number): string =>
  n === null || !Number.isFinite(n) ? 'n/a' : n.toFixed(digits);
/** `met`, `MISSED` or `n/a`. */
export const verdict = (met: boolean | null): string => (met === null ? 'n/a' : met ? 'met' : 'MISSED');
