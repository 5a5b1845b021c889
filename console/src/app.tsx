/**
 * The console's shell: the sign-in page until a session exists, then the
 * header (tenant, navigation, "Sign out") and the page the route names.
 */
import { useCallback, useMemo, useState } from 'preact/hooks';
import { apiRequest, type RequestOptions } from './api.ts';
import { AppContext, type AppContextValue } from './app-context.ts';
import { toApiError } from './components/use-load.ts';
import { ApiKeysPage } from './pages/api-keys.tsx';
import { AuditPage } from './pages/audit.tsx';
import { ContextPage } from './pages/context-page.tsx';
import { ContextsPage } from './pages/contexts.tsx';
import { NotFound } from './pages/not-found.tsx';
import { NewRulePage, RulePage } from './pages/rule-editor.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { href, useRoute, type Route } from './router.ts';
import { clearSession, loadSession, saveSession, type Session } from './session.ts';

/** The pages outside a context, in the header's navigation. */
const TOP_LINKS: ReadonlyArray<{ page: Route['page']; label: string; href: string }> = [
  { page: 'contexts', label: 'Contexts', href: href.contexts() },
  { page: 'api-keys', label: 'API keys', href: href.apiKeys() },
  { page: 'audit', label: 'Audit', href: href.audit() },
];

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'contexts': return <ContextsPage />;
    case 'context': return <ContextPage context={route.context} tab={route.tab} />;
    case 'new-rule': return <NewRulePage context={route.context} />;
    case 'rule': return <RulePage id={route.id} />;
    case 'api-keys': return <ApiKeysPage />;
    case 'audit': return <AuditPage />;
    case 'not-found': return <NotFound path={route.path} />;
  }
}

/** Which header link the route belongs under. */
function sectionOf(route: Route): Route['page'] {
  return route.page === 'api-keys' || route.page === 'audit' ? route.page : 'contexts';
}

export function App() {
  const [session, setSession] = useState<Session | undefined>(() => loadSession());
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const route = useRoute();

  const signOut = useCallback((reason?: string) => {
    clearSession();
    setSession(undefined);
    setNotice(reason ?? 'Signed out.');
  }, []);

  const context = useMemo<AppContextValue | undefined>(() => {
    if (session === undefined) return undefined;
    return {
      session,
      signOut,
      async call<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
        try {
          return await apiRequest<T>(session, method, path, options);
        } catch (error) {
          const refusal = toApiError(error);
          // The key was revoked (or the tenant removed) since sign-in: nothing else will work.
          if (refusal.status === 401) signOut(`Signed out: ${refusal.detail}`);
          throw refusal;
        }
      },
    };
  }, [session, signOut]);

  if (context === undefined) {
    return <SignIn notice={notice} onSignIn={(next) => { saveSession(next); setNotice(undefined); setSession(next); }} />;
  }
  const section = sectionOf(route);
  return (
    <AppContext.Provider value={context}>
      <a class="skip-link" href="#main" onClick={(event) => { event.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
      <header class="shell">
        <span class="product">Rules console</span>
        <nav aria-label="Console">
          <ul>
            {TOP_LINKS.map((link) => (
              <li key={link.page}><a href={link.href} aria-current={section === link.page ? 'page' : undefined}>{link.label}</a></li>
            ))}
          </ul>
        </nav>
        <span class="tenant">Tenant <strong>{context.session.tenant}</strong></span>
        <button type="button" onClick={() => signOut()}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </AppContext.Provider>
  );
}
