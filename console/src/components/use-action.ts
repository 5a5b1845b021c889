/**
 * A change a page makes on request (save, publish, revoke…): whether it is
 * under way, and the API's refusal of its last run, to show next to the
 * control that started it.
 *
 * @example
 * const save = useAction();
 * <button disabled={save.busy} onClick={() => void save.run(() => call('PUT', path, { body }))}>Save</button>
 * <ProblemMessage error={save.error} />
 */
import { useCallback, useState } from 'preact/hooks';
import type { ApiError } from '../api.ts';
import { toApiError } from './use-load.ts';

export interface Action {
  readonly busy: boolean;
  readonly error: ApiError | undefined;
  /** Runs `action`; resolves with its answer, or undefined when it was refused (then `error` says why). */
  run: <T>(action: () => Promise<T>) => Promise<T | undefined>;
  /** Forgets the last refusal. */
  clear: () => void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const run = useCallback(async <T>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action();
    } catch (caught) {
      setError(toApiError(caught));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  const clear = useCallback(() => setError(undefined), []);
  return { busy, error, run, clear };
}
