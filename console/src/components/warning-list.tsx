/** Save-time warnings, in the API's words, each under the rule and field it is about. */
import type { RuleWarning } from '../api-types.ts';

export interface RuleWarnings {
  readonly code: string;
  readonly warnings: readonly RuleWarning[];
}

/** One warning per item: its path, code and message, where in the text, and the suggested replacement. */
export function WarningItems({ warnings, label }: { warnings: readonly RuleWarning[]; label?: string }) {
  return (
    <ul class="field-warnings" aria-label={label}>
      {warnings.map((warning, index) => (
        <li key={index}>
          <code>{warning.path}</code> {warning.code}: {warning.message}
          {warning.line !== undefined && ` (line ${warning.line}${warning.column !== undefined ? `, column ${warning.column}` : ''})`}
          {warning.suggestion !== undefined && <> Suggestion: <code>{warning.suggestion}</code></>}
        </li>
      ))}
    </ul>
  );
}

/** The warnings of several rules, grouped by rule code; rules without any are left out. */
export function WarningList({ rules, label }: { rules: readonly RuleWarnings[]; label: string }) {
  const withWarnings = rules.filter((rule) => rule.warnings.length > 0);
  if (withWarnings.length === 0) return <p>No warnings.</p>;
  return (
    <ul class="warnings" aria-label={label}>
      {withWarnings.map((rule) => (
        <li key={rule.code}>
          <code>{rule.code}</code>
          <WarningItems warnings={rule.warnings} />
        </li>
      ))}
    </ul>
  );
}
