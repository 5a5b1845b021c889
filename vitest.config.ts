import { defineConfig } from 'vitest/config';

// Tests talk to real databases and real server processes (tsx compile and
// PGlite start take seconds on a loaded machine): generous timeouts, and no
// more parallel files than this 2-core machine can carry without starving
// the servers under test.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A fixed fast-check seed unless FC_SEED says otherwise (see the file).
    setupFiles: ['test/support/fast-check-seed.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
