/**
 * An explain trace (POST /rules/test or a stored tests run with explain):
 * one row per rule, its outcome, why it was skipped, and the value it saw
 * against what it expected. Values are shown as JSON text.
 */
import type { RuleTraceEntry } from '../api-types.ts';
import { jsonText } from './json-text.ts';

const REASONS: Record<NonNullable<RuleTraceEntry['reason']>, string> = {
  'when-false': 'its when did not hold',
  'field-missing': 'its field is missing',
  disabled: 'it is disabled',
};

export function TraceTable({ trace, caption }: { trace: readonly RuleTraceEntry[]; caption: string }) {
  return (
    <table class="list trace">
      <caption>{caption}</caption>
      <thead>
        <tr><th scope="col">Rule</th><th scope="col">Outcome</th><th scope="col">Field</th><th scope="col">Value</th><th scope="col">Expected</th></tr>
      </thead>
      <tbody>
        {trace.map((entry, index) => (
          <tr key={index}>
            <th scope="row"><code>{entry.ruleCode}</code></th>
            <td class={`outcome-${entry.outcome}`}>
              {entry.outcome}
              {entry.reason !== undefined && ` (${REASONS[entry.reason]})`}
              {entry.elements !== undefined && entry.elements.length > 0 && ` at elements ${entry.elements.join(', ')}`}
            </td>
            <td><code>{entry.fieldPath}</code></td>
            <td><code>{'value' in entry ? jsonText(entry.value) : ''}</code></td>
            <td><code>{'expected' in entry ? jsonText(entry.expected) : ''}</code></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
