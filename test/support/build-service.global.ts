/**
 * vitest's globalSetup: builds the service's bundle once, before any test
 * file runs, so the tests that start server processes run what `npm start`
 * runs (service-bundle.ts), not the sources through tsx; and builds the
 * console (console/build.ts) when it is missing or older than its sources,
 * for the browser tests and the service's /console.
 */
import { buildConsoleIfStale } from '../../console/build.ts';
import { bundleService } from '../../src/build/bundle-service.ts';

export default async function buildService(): Promise<void> {
  await Promise.all([bundleService(), buildConsoleIfStale()]);
}
