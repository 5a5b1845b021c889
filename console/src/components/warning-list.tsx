/** Save-time warnings of rules, each under the rule and field it is about, in the API's words. */
import type { RuleWarning } from '../api-types.ts';

export interface RuleWarnings {
  readonly code: string;
  readonly warnings: readonly RuleWarning[];
}

export function WarningList({ rules, label }: { rules: readonly RuleWarnings[]; label: string }) {
  const withWarnings = rules.filter((rule) => rule.warnings.length > 0);
  if (withWarnings.length === 0) return <p>No warnings.</p>;
  return (
    <ul class="warnings" aria-label={label}>
      {withWarnings.map((rule) => (
        <li key={rule.code}>
          <code>{rule.code}</code>
          <ul class="field-warnings">
            {rule.warnings.map((warning, index) => (
              <li key={index}>
                <code>{warning.path}</code> {warning.code}: {warning.message}
                {warning.line !== undefined && ` (line ${warning.line}${warning.column !== undefined ? `, column ${warning.column}` : ''})`}
                {warning.suggestion !== undefined && <> Suggestion: <code>{warning.suggestion}</code></>}
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}
