/**
 * Loading something from the API for a page: its state (loading, the
 * answer or the error) and a way to load it again. An answer that arrives
 * after the page asked for something else is dropped.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';

export type Loaded<T> =
  | { readonly state: 'loading' }
  | { readonly state: 'done'; readonly value: T }
  | { readonly state: 'failed'; readonly error: ApiError };

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, 'CONSOLE', error instanceof Error ? error.message : String(error));
}

/**
 * Runs `load` now and whenever `inputs` change.
 *
 * @example
 * const [contexts, reload] = useLoad(() => call('GET', '/contexts'), []);
 */
export function useLoad<T>(load: () => Promise<T>, inputs: readonly unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setLoaded({ state: 'loading' });
    load().then(
      (value) => { if (ticket === latest.current) setLoaded({ state: 'done', value }); },
      (error: unknown) => { if (ticket === latest.current) setLoaded({ state: 'failed', error: toApiError(error) }); },
    );
  // The caller's inputs are the dependency list, as with useEffect itself.
  }, [...inputs, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return [loaded, reload];
}
