/**
 * The signed-in tenant and key. Kept in sessionStorage only: it ends with
 * the tab, never travels in a URL or with every request as a cookie would,
 * and other tabs do not see it.
 */

export interface Session {
  readonly tenant: string;
  readonly key: string;
}

const STORAGE_KEY = 'rules-console.session';

/** The session of this tab, if one signed in. */
export function loadSession(): Session | undefined {
  const raw = sessionStorage.getItem(STORAGE_KEY);
  if (raw === null) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<Session>;
    if (typeof value.tenant === 'string' && typeof value.key === 'string') return { tenant: value.tenant, key: value.key };
  } catch {
    // A value this console did not write: forget it.
  }
  sessionStorage.removeItem(STORAGE_KEY);
  return undefined;
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
