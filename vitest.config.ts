import { defineConfig } from 'vitest/config';

// Tests talk to real databases and real server processes (PGlite's start
// takes seconds on a loaded machine): generous timeouts, and no more
// parallel files than this 2-core machine can carry without starving
// the servers under test.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A fixed fast-check seed unless FC_SEED says otherwise (see the file).
    setupFiles: ['test/support/fast-check-seed.ts'],
    // The server processes tests start run the bundle `npm start` runs (test/support/service-bundle.ts).
    globalSetup: ['test/support/build-service.global.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
