/**
 * Hash routing: the page is one document at /console, and where one is in
 * it lives after the `#` (`#/contexts/orders/history`), so the server needs
 * no fallback route and a reload or a bookmark lands on the same page.
 * Segments are percent-encoded: context names and ids are never read as
 * paths.
 */
import { useEffect, useState } from 'preact/hooks';

/** Where the console is: the page and its parameters. */
export type Route =
  | { readonly page: 'contexts' }
  | { readonly page: 'context'; readonly context: string; readonly tab: string }
  | { readonly page: 'new-rule'; readonly context: string | undefined }
  | { readonly page: 'rule'; readonly id: string }
  | { readonly page: 'api-keys' }
  | { readonly page: 'audit' }
  | { readonly page: 'not-found'; readonly path: string };

function decode(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/**
 * The route a hash names.
 *
 * @example
 * parseRoute('#/contexts/orders/history'); // { page: 'context', context: 'orders', tab: 'history' }
 */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const parts = path.split('/').filter((part) => part !== '').map(decode);
  if (parts.some((part) => part === undefined)) return { page: 'not-found', path };
  const [first, second, third, fourth] = parts as string[];
  if (parts.length === 0) return { page: 'contexts' };
  if (first === 'contexts' && second !== undefined) {
    if (third === 'rules' && fourth === 'new' && parts.length === 4) return { page: 'new-rule', context: second };
    if (parts.length <= 3) return { page: 'context', context: second, tab: third ?? 'rules' };
  }
  if (first === 'new-rule' && parts.length === 1) return { page: 'new-rule', context: undefined };
  if (first === 'rules' && second !== undefined && parts.length === 2) return { page: 'rule', id: second };
  if (first === 'api-keys' && parts.length === 1) return { page: 'api-keys' };
  if (first === 'audit' && parts.length === 1) return { page: 'audit' };
  return { page: 'not-found', path };
}

/** Hrefs of the console's pages, for links: `<a href={href.context('orders')}>`. */
export const href = {
  contexts: (): string => '#/',
  context: (context: string, tab = 'rules'): string => `#/contexts/${encodeURIComponent(context)}${tab === 'rules' ? '' : `/${encodeURIComponent(tab)}`}`,
  newRule: (context?: string): string => (context === undefined ? '#/new-rule' : `#/contexts/${encodeURIComponent(context)}/rules/new`),
  rule: (id: string): string => `#/rules/${encodeURIComponent(id)}`,
  apiKeys: (): string => '#/api-keys',
  audit: (): string => '#/audit',
};

/** Goes to a page (an href of `href`). */
export function navigate(to: string): void {
  window.location.hash = to;
}

/** The current route; re-renders when the hash changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = (): void => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
