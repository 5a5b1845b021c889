/**
 * How tests start the real server: the bundle `npm start` runs
 * (src/build/bundle-service.ts), built once per test run by
 * `build-service.global.ts` (vitest's globalSetup), with the same Node flags.
 *
 * @example
 * spawn(process.execPath, serviceArgs(), { cwd: ROOT, env });
 */
import { BUNDLE_NODE_FLAGS, bundleEntry } from '../../src/build/bundle-service.ts';

/** Node's arguments for starting the server (after `process.execPath`), as `npm start` runs it. */
export function serviceArgs(): string[] {
  return [...BUNDLE_NODE_FLAGS, bundleEntry()];
}
