/**
 * What every page needs from the shell: the session, a way to call the API
 * as it, and sign-out. Pages read it with useApp().
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { RequestOptions } from './api.ts';
import type { Session } from './session.ts';

export interface AppContextValue {
  readonly session: Session;
  /** apiRequest with the session; a 401 (key revoked meanwhile) signs out. */
  call: <T>(method: string, path: string, options?: RequestOptions) => Promise<T>;
  signOut: (reason?: string) => void;
}

export const AppContext = createContext<AppContextValue | undefined>(undefined);

/** The shell's context; only pages rendered inside the signed-in shell may call it. */
export function useApp(): AppContextValue {
  const value = useContext(AppContext);
  if (value === undefined) throw new Error('useApp outside the signed-in shell');
  return value;
}
