/**
 * vitest's globalSetup: builds the service's bundle once, before any test
 * file runs, so the tests that start server processes run what `npm start`
 * runs (service-bundle.ts), not the sources through tsx.
 */
import { bundleService } from '../../src/build/bundle-service.ts';

export default async function buildService(): Promise<void> {
  await bundleService();
}
