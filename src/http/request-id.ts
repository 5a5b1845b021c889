/**
 * Request ids for log correlation and problem bodies, cheap enough for every
 * request: a random per-process prefix and a counter, laid out like a UUID
 * so log tooling and clients that expect one keep working.
 */
import { randomBytes } from 'node:crypto';

// 48 bits of counter in the last group; a process never gets near it, but
// a wrap takes a new prefix rather than repeating an id.
const COUNTER_LIMIT = 2 ** 48;

/**
 * Makes an id source. The prefix carries 74 random bits, so ids from other
 * processes, workers and instances do not collide; within one process the
 * counter makes them unique. Not a secret and not unpredictable: nothing may
 * rely on a request id for anything but correlation.
 *
 * @example
 * const nextId = createRequestIdSource();
 * nextId(); // '3f9c1a2b-77d0-4e1a-9c3d-000000000001'
 */
export function createRequestIdSource(): () => string {
  let prefix = randomPrefix();
  let counter = 0;
  return () => {
    counter++;
    if (counter === COUNTER_LIMIT) {
      prefix = randomPrefix();
      counter = 1;
    }
    return prefix + counter.toString(16).padStart(12, '0');
  };
}

/** `xxxxxxxx-xxxx-4xxx-yxxx-` with the version and variant bits of a v4 UUID. */
function randomPrefix(): string {
  const hex = randomBytes(10).toString('hex');
  const variant = ((parseInt(hex[15], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(12, 15)}-${variant}${hex.slice(16, 19)}-`;
}

/** The service's id source, shared by Fastify's genReqId and the client-error handler. */
export const nextRequestId = createRequestIdSource();
