/**
 * One context: its name, the tabs of CONTEXT_TABS as links (the current
 * one marked with aria-current), and the tab's page.
 */
import { href } from '../router.ts';
import { CONTEXT_TABS } from './context-tabs.tsx';
import { NotFound } from './not-found.tsx';

export function ContextPage({ context, tab }: { context: string; tab: string }) {
  const current = CONTEXT_TABS.find((candidate) => candidate.id === tab);
  if (current === undefined) return <NotFound path={`/contexts/${context}/${tab}`} />;
  const Tab = current.component;
  return (
    <div class="context">
      <p class="breadcrumb"><a href={href.contexts()}>Contexts</a> › <span class="context-name">{context}</span></p>
      <nav class="tabs" aria-label={`Context ${context}`}>
        <ul>
          {CONTEXT_TABS.map((candidate) => (
            <li key={candidate.id}>
              <a href={href.context(context, candidate.id)} aria-current={candidate.id === current.id ? 'page' : undefined}>{candidate.label}</a>
            </li>
          ))}
        </ul>
      </nav>
      <Tab key={`${context}/${current.id}`} context={context} />
    </div>
  );
}
