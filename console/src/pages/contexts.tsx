/**
 * The tenant's contexts: live version, drafts, last change, a page at a
 * time. A context is created by creating its first rule ("New rule").
 *
 * The last change comes from the audit trail (its newest entry for the
 * context), asked for only for the contexts on the page shown.
 */
import { useEffect, useState } from 'preact/hooks';
import { query } from '../api.ts';
import type { AuditPage, ContextList } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { Pager, pageOf } from '../components/pager.tsx';
import { PageHeading } from '../components/page-heading.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';
import { href, navigate } from '../router.ts';

/** The newest audit entry of each context asked for; null when it has none, absent while asking. */
function useLastChanges(contexts: readonly string[]): ReadonlyMap<string, string | null> {
  const { call } = useApp();
  const [changes, setChanges] = useState<ReadonlyMap<string, string | null>>(new Map());
  const key = contexts.join('\n');
  useEffect(() => {
    let current = true;
    for (const context of contexts) {
      call<AuditPage>('GET', `/audit${query({ context, limit: 1 })}`).then(
        (page) => { if (current) setChanges((before) => new Map(before).set(context, page.items[0]?.at ?? null)); },
        () => { if (current) setChanges((before) => new Map(before).set(context, null)); },
      );
    }
    return () => { current = false; };
  // Asked again only when the page shows other contexts.
  }, [key]);
  return changes;
}

export function ContextsPage() {
  const { call } = useApp();
  const [loaded] = useLoad(() => call<ContextList>('GET', '/contexts'), []);
  const [filter, setFilter] = useState('');
  const [page, setPage] = useState(0);
  const items = loaded.state === 'done' ? loaded.value.items.filter((item) => item.context.toLowerCase().includes(filter.trim().toLowerCase())) : [];
  const shown = pageOf(items, page);
  const lastChanges = useLastChanges(shown.map((item) => item.context));

  return (
    <section>
      <PageHeading title="Contexts" />
      <div class="toolbar">
        <button type="button" onClick={() => navigate(href.newRule())}>New rule</button>
        <label for="context-filter">Filter contexts</label>
        <input id="context-filter" type="search" value={filter} onInput={(event) => { setFilter(event.currentTarget.value); setPage(0); }} />
      </div>
      {loaded.state === 'loading' && <p role="status">Loading contexts…</p>}
      {loaded.state === 'failed' && <ProblemMessage error={loaded.error} />}
      {loaded.state === 'done' && loaded.value.items.length === 0 && (
        <p>No contexts yet. A context starts with its first rule: choose “New rule” and name the context.</p>
      )}
      {loaded.state === 'done' && loaded.value.items.length > 0 && (
        <>
          <table class="list">
            <caption>{items.length} of {loaded.value.items.length} contexts</caption>
            <thead>
              <tr><th scope="col">Context</th><th scope="col">Live version</th><th scope="col">Drafts</th><th scope="col">Published rules</th><th scope="col">Last change</th></tr>
            </thead>
            <tbody>
              {shown.map((item) => {
                const lastChange = lastChanges.get(item.context);
                return (
                  <tr key={item.context}>
                    <th scope="row"><a href={href.context(item.context)}>{item.context}</a></th>
                    <td>{item.rulesetVersion ?? 'none'}</td>
                    <td>{item.rules.draft}</td>
                    <td>{item.rules.published}</td>
                    <td>{lastChange === undefined ? '…' : lastChange === null ? '—' : <time dateTime={lastChange}>{formatTime(lastChange)}</time>}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <Pager label="Contexts pages" page={page} total={items.length} onPage={setPage} />
        </>
      )}
    </section>
  );
}

