/**
 * API key secrets: generation, hashing, and the shape check that lets
 * obviously bogus keys fail without any lookup.
 */
import { createHash, randomBytes } from 'node:crypto';

/** Prefix of generated keys, so they are recognisable in config and leaks scanners. */
export const API_KEY_PREFIX = 'rk_';

// Generated keys are `rk_` + 43 base64url chars; bootstrap keys are at least
// 22 chars of [A-Za-z0-9_-] with no upper bound (docs/api.md), so neither
// is capped here; Node's header size limit bounds what gets hashed.
const WELL_FORMED_KEY = /^[A-Za-z0-9_-]{22,}$/;

/**
 * A new random key: 256 bits, shown to its owner once.
 *
 * @example
 * generateApiKey(); // 'rk_Q2x...' (46 chars)
 */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The stored form of a key: SHA-256, hex. Keys are high-entropy, so no salt or slow hash is needed. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** False for values that cannot be any key the service issued or was given. */
export function isWellFormedApiKey(key: string): boolean {
  return WELL_FORMED_KEY.test(key);
}
