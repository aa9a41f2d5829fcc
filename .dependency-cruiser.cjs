/**
 * Import-direction rules, run by `npm run lint` (and so by CI).
 * - src/common/ and src/infrastructure/ are the cross-cutting layer: they import no feature module.
 * - Nothing imports the entry points (main.ts, app.setup.ts, app.module.ts) but the entry points,
 *   the CLI and tests.
 */
module.exports = {
  forbidden: [
    {
      name: 'cross-cutting-imports-no-feature',
      comment: 'common/ and infrastructure/ must not depend on feature modules: move the shared piece down, or invert the dependency.',
      severity: 'error',
      from: { path: '^src/(common|infrastructure)/' },
      to: { path: '^src/', pathNot: '^src/(common|infrastructure)/' },
    },
    {
      name: 'features-import-no-entry-point',
      comment: 'Feature code must not import the application entry points.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(main|app\\.module|app\\.setup)\\.ts$|^src/cli/' },
      to: { path: '^src/(main|app\\.module|app\\.setup)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
