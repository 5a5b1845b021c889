/**
 * Turns verified module text into a callable validator: an import of a
 * `data:` URL holding exactly the bytes whose signature was checked, which
 * works in Node and browsers (a page's Content-Security-Policy must allow
 * `script-src data:` for it). Nothing else is evaluated.
 */
import { bytesToBase64 } from './signature.ts';

/** What the service's standalone module exports. */
export interface StandaloneValidator {
  /** `options.now`: epoch milliseconds or a Date (read with Number()); without it, Date.now() at the call. */
  validate(payload: unknown, options?: { now?: number | Date }): { isValid: boolean; totalRulesEvaluated: number; failures: unknown[] };
}

/** Imports the module whose text is `bytes`. */
export async function importModule(bytes: Uint8Array): Promise<StandaloneValidator> {
  const url = `data:text/javascript;base64,${bytesToBase64(bytes)}`;
  // Bundlers must leave this import alone: it loads code fetched at run time.
  const loaded = (await import(/* @vite-ignore */ /* webpackIgnore: true */ url)) as Partial<StandaloneValidator>;
  if (typeof loaded.validate !== 'function') throw new TypeError('the module does not export validate()');
  return loaded as StandaloneValidator;
}
