/**
 * What differs between two rulesets of a context (GET …/diff), per rule:
 * rules added, removed, and for each changed rule the fields that differ
 * with their value on each side. Every value is shown as text.
 */
import type { RulesetDiff, RuleContent } from '../api-types.ts';
import { jsonText } from './json-text.ts';

/** How a diff side reads: "live", "the drafts", "version 3". */
export function sideName(side: RulesetDiff['from']): string {
  if (side === 'live') return 'live';
  if (side === 'draft') return 'the drafts';
  return `version ${side}`;
}

/** The content fields of a rule worth showing, in the rule resource's order. */
const SHOWN_FIELDS = ['name', 'description', 'severity', 'errorCode', 'fieldPath', 'required', 'expression', 'schema', 'when', 'forEach',
  'message', 'expectedValue', 'priority', 'enabled', 'tags'] as const;

function RuleFields({ rule }: { rule: RuleContent }) {
  const record = rule as unknown as Record<string, unknown>;
  return (
    <dl class="fields">
      {SHOWN_FIELDS.filter((field) => record[field] !== undefined).map((field) => (
        <div key={field}>
          <dt>{field}</dt>
          <dd><pre>{typeof record[field] === 'string' ? (record[field]) : jsonText(record[field])}</pre></dd>
        </div>
      ))}
    </dl>
  );
}

function valueText(value: unknown): string {
  if (value === null || value === undefined) return '(not set)';
  return typeof value === 'string' ? value : jsonText(value);
}

export function RulesetDiffView({ diff, headingLevel = 2 }: { diff: RulesetDiff; headingLevel?: 2 | 3 }) {
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const Sub = headingLevel === 2 ? 'h3' : 'h4';
  const empty = diff.added.length === 0 && diff.removed.length === 0 && diff.changed.length === 0;
  return (
    <section class="diff" aria-label={`Differences from ${sideName(diff.from)} to ${sideName(diff.to)}`}>
      <Heading>From {sideName(diff.from)} to {sideName(diff.to)}</Heading>
      {empty && <p>No differences: both have the same rules.</p>}
      {!empty && (
        <p class="diff-summary">
          {diff.added.length} added, {diff.changed.length} changed, {diff.removed.length} removed
        </p>
      )}
      {diff.added.map((rule) => (
        <article key={`added-${rule.code}`} class="diff-rule added" aria-label={`Added ${rule.code}`}>
          <Sub><span class="badge added">Added</span> <code>{rule.code}</code></Sub>
          <RuleFields rule={rule} />
        </article>
      ))}
      {diff.changed.map((change) => (
        <article key={`changed-${change.code}`} class="diff-rule changed" aria-label={`Changed ${change.code}`}>
          <Sub><span class="badge changed">Changed</span> <code>{change.code}</code></Sub>
          <table class="list diff-fields">
            <thead><tr><th scope="col">Field</th><th scope="col">{sideName(diff.from)}</th><th scope="col">{sideName(diff.to)}</th></tr></thead>
            <tbody>
              {Object.entries(change.fields).map(([field, values]) => (
                <tr key={field}>
                  <th scope="row">{field}</th>
                  <td class="before"><pre>{valueText(values.from)}</pre></td>
                  <td class="after"><pre>{valueText(values.to)}</pre></td>
                </tr>
              ))}
            </tbody>
          </table>
        </article>
      ))}
      {diff.removed.map((rule) => (
        <article key={`removed-${rule.code}`} class="diff-rule removed" aria-label={`Removed ${rule.code}`}>
          <Sub><span class="badge removed">Removed</span> <code>{rule.code}</code></Sub>
          <RuleFields rule={rule} />
        </article>
      ))}
    </section>
  );
}
