/**
 * The sign-in page: tenant and API key. The key is checked by listing the
 * tenant's contexts, which needs an admin key: a validator key is told it
 * cannot manage rules and is not kept.
 */
import { useState } from 'preact/hooks';
import { ApiError, apiRequest } from '../api.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { toApiError } from '../components/use-load.ts';
import type { Session } from '../session.ts';

/** What the page says about a validator key. */
export const VALIDATOR_KEY_MESSAGE = 'This key is a validator key: it can validate payloads but cannot manage rules. Sign in with an admin key.';

export function SignIn({ onSignIn, notice }: { onSignIn: (session: Session) => void; notice?: string }) {
  const [tenant, setTenant] = useState('');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const session = { tenant: tenant.trim(), key: key.trim() };
    setBusy(true);
    setError(undefined);
    try {
      await apiRequest(session, 'GET', '/contexts');
      onSignIn(session);
    } catch (caught) {
      const refusal = toApiError(caught);
      setError(refusal.status === 403 ? new ApiError(403, refusal.code, VALIDATOR_KEY_MESSAGE) : refusal);
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <PageHeading title="Sign in">Rules console</PageHeading>
      {notice !== undefined && <p class="notice" role="status">{notice}</p>}
      <form onSubmit={(event) => void submit(event)} aria-describedby={error === undefined ? undefined : 'sign-in-problem'}>
        <label for="tenant">Tenant</label>
        <input id="tenant" name="tenant" autoComplete="username" required spellcheck={false}
          value={tenant} onInput={(event) => setTenant(event.currentTarget.value)} />
        <label for="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autoComplete="current-password" required spellcheck={false}
          value={key} onInput={(event) => setKey(event.currentTarget.value)} />
        <button type="submit" disabled={busy}>Sign in</button>
        <ProblemMessage error={error} id="sign-in-problem" />
      </form>
      <p class="hint">The tenant and key stay in this tab only (session storage) and are forgotten when you sign out or close it.</p>
    </main>
  );
}
