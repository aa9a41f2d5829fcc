/** Jest runs in native ESM mode (NestJS 12 is ESM-only); ts-jest only transpiles, `npm run typecheck` type-checks. */
const project = (displayName, testMatch) => ({
  displayName,
  testMatch: [testMatch],
  testEnvironment: 'node',
  // Inert unless JEST_MEMORY_REPORT is set (see the file).
  setupFilesAfterEnv: ['<rootDir>/test/setup/memory-report.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.jest.json', diagnostics: false }],
  },
});

/**
 * Three tiers, one project each (`npm run test:unit|test:medium|test:e2e`, `npm test` runs all):
 * unit — pure functions, no database; medium — services/repositories in a Nest application context
 * on a cloned database, no HTTP; e2e — the whole application over HTTP. test/unit/test-tiers.spec.ts
 * fails when a file's name does not match its tier (it would otherwise silently not run).
 */
export default {
  projects: [
    project('unit', '<rootDir>/test/unit/**/*.spec.ts'),
    project('medium', '<rootDir>/test/medium/**/*.medium.spec.ts'),
    project('e2e', '<rootDir>/test/e2e/**/*.e2e.spec.ts'),
  ],
  globalSetup: '<rootDir>/test/setup/global-setup.mjs',
  globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
  testTimeout: 60000,
  maxWorkers: 2,
  // In native ESM mode a worker never frees the modules a test file loaded (Node keeps every vm
  // module alive), so each file leaves its whole application graph behind and a worker grows without
  // end. Jest compares this limit with the worker's V8 heap in use (not its RSS) after each file and
  // starts a fresh worker when it is over: the RSS a file can reach is then this heap, the native
  // memory beside it, and that one file's own peak, which keeps the worker within the bound the team
  // guide sets. It does not apply when Jest runs a single file in band.
  workerIdleMemoryLimit: '600MB',
};
