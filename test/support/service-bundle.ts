/**
 * How tests start the real server: the bundle `npm start` runs
 * (src/build/bundle-service.ts), built once per test run by
 * `build-service.global.ts` (vitest's globalSetup), with the same Node flags.
 *
 * @example
 * spawn(process.execPath, serviceArgs(), { cwd: ROOT, env });
 */
import path from 'node:path';
import { BUNDLE_NODE_FLAGS, DEFAULT_OUT_DIR } from '../../src/build/bundle-service.ts';

/** The bundle's entry, as `npm start` runs it. */
export const SERVICE_ENTRY = path.join(DEFAULT_OUT_DIR, 'server.js');

/** Node's arguments for starting the server (after `process.execPath`). */
export function serviceArgs(): string[] {
  return [...BUNDLE_NODE_FLAGS, SERVICE_ENTRY];
}
