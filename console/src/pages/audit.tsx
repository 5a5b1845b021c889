/**
 * The tenant's audit trail, newest first, a page at a time, filtered by
 * context and action: who changed what, when, with the content before and
 * after (as JSON text) and the note.
 */
import { useState } from 'preact/hooks';
import { query } from '../api.ts';
import type { AuditEntry, AuditPage as AuditPageAnswer } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { jsonText } from '../components/json-text.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { CursorPager, useCursorPages } from '../components/pager.tsx';
import { FieldProblems, ProblemMessage } from '../components/problem.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';

const AUDIT_PAGE = 20;

/**
 * The actions the API records, for the filter, in the order offered (an
 * object's string keys keep their order). Keyed by every action of the
 * API's types, so that the console's type-check fails when the API gains an
 * action this list lacks (it once lacked tenant.samples-delete).
 */
const OFFERED_ACTIONS = {
  'rule.create': true, 'rule.update': true, 'rule.patch': true, 'rule.archive': true, 'rule.restore': true, 'rule.publish': true,
  'context.publish': true, 'context.rollback': true, 'context.import': true, 'context.recompile': true,
  'context.payload-schema': true, 'context.tests': true, 'context.settings': true,
  'key.create': true, 'key.revoke': true, 'tenant.rate-limit': true, 'tenant.sampling': true, 'tenant.samples-delete': true, 'tenant.cors': true,
} satisfies Record<AuditEntry['action'], true>;
const ACTIONS = Object.keys(OFFERED_ACTIONS) as ReadonlyArray<AuditEntry['action']>;

function actorText(actor: AuditEntry['actor']): string {
  if (actor.cli === true) return 'CLI';
  return `${actor.keyName ?? actor.keyId ?? '?'}${actor.role === undefined ? '' : ` (${actor.role})`}`;
}

/** The code of the rule an entry is about, read from its content (after, else before); undefined for other entries. */
function ruleCodeOf(entry: AuditEntry): string | undefined {
  if (!entry.action.startsWith('rule.')) return undefined;
  for (const content of [entry.after, entry.before]) {
    if (content !== null && typeof content === 'object' && typeof (content as { code?: unknown }).code === 'string') {
      return (content as { code: string }).code;
    }
  }
  return undefined;
}

/** What an entry is about: a rule by its code (its id as the title, for search), anything else as the API names it. */
function TargetText({ entry }: { entry: AuditEntry }) {
  if (entry.target === undefined) return null;
  const code = ruleCodeOf(entry);
  if (code === undefined) return <code class="target">{entry.target}</code>;
  return <code class="target" title={`rule id ${entry.target}`}>{code}</code>;
}

function EntryRow({ entry }: { entry: AuditEntry }) {
  const hasContent = entry.before !== undefined || entry.after !== undefined;
  return (
    <tr>
      <td><time dateTime={entry.at}>{formatTime(entry.at)}</time></td>
      <th scope="row"><code>{entry.action}</code></th>
      <td>{actorText(entry.actor)}</td>
      <td>{entry.context ?? ''}</td>
      <td class="note">{entry.note ?? ''}</td>
      <td>
        <TargetText entry={entry} />
        {hasContent && (
          <details>
            <summary>Before and after, entry {entry.id}</summary>
            <div class="before-after">
              <div><h3>Before</h3><pre>{jsonText(entry.before)}</pre></div>
              <div><h3>After</h3><pre>{jsonText(entry.after)}</pre></div>
            </div>
          </details>
        )}
      </td>
    </tr>
  );
}

export function AuditPage() {
  const { call } = useApp();
  const pages = useCursorPages();
  const [contextText, setContextText] = useState('');
  const [filters, setFilters] = useState<{ context: string; action: string }>({ context: '', action: '' });
  const [action, setAction] = useState('');
  const [trail] = useLoad(
    () => call<AuditPageAnswer>('GET', `/audit${query({ context: filters.context.trim(), action: filters.action, limit: AUDIT_PAGE, cursor: pages.cursor })}`),
    [filters, pages.cursor],
  );
  const apply = (event: Event): void => {
    event.preventDefault();
    pages.reset();
    setFilters({ context: contextText, action });
  };
  const error = trail.state === 'failed' ? trail.error : undefined;
  return (
    <section>
      <PageHeading title="Audit" />
      <form class="toolbar filters" onSubmit={apply}>
        <label for="audit-context">Context</label>
        <input id="audit-context" type="search" value={contextText} onInput={(event) => setContextText(event.currentTarget.value)}
          aria-describedby={error?.errorsAt('context').length ? 'audit-context-problems' : undefined} />
        <label for="audit-action">Action</label>
        <select id="audit-action" value={action} onChange={(event) => setAction(event.currentTarget.value)}>
          <option value="">any</option>
          {ACTIONS.map((name) => <option key={name} value={name}>{name}</option>)}
        </select>
        <button type="submit">Filter</button>
      </form>
      <FieldProblems error={error} field="context" id="audit-context-problems" />
      {trail.state === 'loading' && <p role="status">Loading the audit trail…</p>}
      {error !== undefined && <ProblemMessage error={error} />}
      {trail.state === 'done' && trail.value.items.length === 0 && <p>No entries.</p>}
      {trail.state === 'done' && trail.value.items.length > 0 && (
        <>
          <table class="list audit">
            <caption>Changes, newest first</caption>
            <thead>
              <tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">Context</th><th scope="col">Note</th><th scope="col">What</th></tr>
            </thead>
            <tbody>
              {trail.value.items.map((entry) => <EntryRow key={entry.id} entry={entry} />)}
            </tbody>
          </table>
          <CursorPager label="Audit pages" pages={pages} nextCursor={trail.value.nextCursor} />
        </>
      )}
    </section>
  );
}
