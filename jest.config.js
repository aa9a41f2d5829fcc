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
};
