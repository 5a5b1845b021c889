/**
 * A context's rules: code, name, severity, status, filtered by status
 * (asked of the API), severity and text (code or name), a page at a time.
 * The API pages rules too; the console reads them all (a context holds at
 * most MAX_RULES_PER_CONTEXT) so the filters see every rule.
 */
import { useState } from 'preact/hooks';
import { query } from '../api.ts';
import type { Rule, RulePage } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { Pager, pageOf } from '../components/pager.tsx';
import { PageHeading } from '../components/page-heading.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { useLoad } from '../components/use-load.ts';
import { ruleStatusText } from '../format.ts';
import { SEVERITIES } from '../editor/rule-form.ts';
import { href, navigate } from '../router.ts';
import type { ContextTabProps } from './context-tabs.tsx';

const STATUSES = [
  { value: '', label: 'not archived' },
  { value: 'draft', label: 'draft' },
  { value: 'published', label: 'published' },
  { value: 'archived', label: 'archived' },
  { value: 'all', label: 'all' },
];

/** Pages of 500 until the last. */
async function allRules(call: ReturnType<typeof useApp>['call'], context: string, status: string): Promise<Rule[]> {
  const rules: Rule[] = [];
  let cursor: string | undefined;
  do {
    const page = await call<RulePage>('GET', `/rules${query({ context, status, limit: 500, cursor })}`);
    rules.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return rules;
}

export function RulesTab({ context }: ContextTabProps) {
  const { call } = useApp();
  const [status, setStatus] = useState('');
  const [severity, setSeverity] = useState('');
  const [text, setText] = useState('');
  const [page, setPage] = useState(0);
  const [loaded] = useLoad(() => allRules(call, context, status), [context, status]);

  const needle = text.trim().toLowerCase();
  const rules = loaded.state === 'done'
    ? loaded.value.filter((rule) => (severity === '' || rule.severity === severity)
      && (needle === '' || rule.code.toLowerCase().includes(needle) || rule.name.toLowerCase().includes(needle)))
    : [];
  const filter = (apply: () => void): void => { apply(); setPage(0); };

  return (
    <section>
      <PageHeading title={`Rules of ${context}`} />
      <div class="toolbar">
        <button type="button" onClick={() => navigate(href.newRule(context))}>New rule</button>
      </div>
      <div class="toolbar filters" role="group" aria-label="Filters">
        <label for="rules-status">Status</label>
        <select id="rules-status" value={status} onChange={(event) => filter(() => setStatus(event.currentTarget.value))}>
          {STATUSES.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
        </select>
        <label for="rules-severity">Severity</label>
        <select id="rules-severity" value={severity} onChange={(event) => filter(() => setSeverity(event.currentTarget.value))}>
          <option value="">any</option>
          {SEVERITIES.map((value) => <option key={value} value={value}>{value}</option>)}
        </select>
        <label for="rules-text">Search</label>
        <input id="rules-text" type="search" value={text} placeholder="code or name" onInput={(event) => filter(() => setText(event.currentTarget.value))} />
      </div>
      {loaded.state === 'loading' && <p role="status">Loading rules…</p>}
      {loaded.state === 'failed' && <ProblemMessage error={loaded.error} />}
      {loaded.state === 'done' && (
        rules.length === 0
          ? <p>No rule matches.</p>
          : (
            <>
              <table class="list">
                <caption>{rules.length} of {loaded.value.length} rules</caption>
                <thead><tr><th scope="col">Code</th><th scope="col">Name</th><th scope="col">Severity</th><th scope="col">Status</th></tr></thead>
                <tbody>
                  {pageOf(rules, page).map((rule) => (
                    <tr key={rule.id}>
                      <th scope="row"><a href={href.rule(rule.id)}><code>{rule.code}</code></a></th>
                      <td>{rule.name}</td>
                      <td>{rule.severity}</td>
                      <td>{ruleStatusText(rule)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager label="Rules pages" page={page} total={rules.length} onPage={setPage} />
            </>
          )
      )}
    </section>
  );
}
