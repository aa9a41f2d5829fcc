/**
 * Import-direction rules, run by `npm run lint` (and so by CI).
 * - Layers, lowest first: src/common/ (config, errors, HTTP and auth helpers), src/infrastructure/
 *   (database, cache, logging, scheduling: may use common/, never the reverse), then the shared
 *   kernels src/location-reports/ (location rules, the location-writes lock, LocationPoint) and
 *   src/tracker-states/ (status vocabulary), which import only the layers below them, then the
 *   feature folders.
 * - A feature folder uses another one only through its public surface: `*.module.ts`,
 *   `*.service.ts`, `*.port.ts`, `*.errors.ts`, and the files under its `dto/` and `entities/`.
 * - No cycles between folders of src.
 * - Nothing imports the entry points (main.ts, app.setup.ts, app.module.ts) but the entry points,
 *   the CLI and tests.
 * Violations that predate a rule are listed in .dependency-cruiser-known-violations.json
 * (`npx depcruise-baseline src --config .dependency-cruiser.cjs` writes it) and reported without
 * failing; the list only shrinks: regenerate it after removing one, never to add one.
 */
const SHARED = '^src/(common|infrastructure|location-reports|tracker-states)/';

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
      name: 'common-imports-no-infrastructure',
      comment: 'common/ is the lowest layer: infrastructure/ may use it, not the reverse.',
      severity: 'error',
      from: { path: '^src/common/' },
      to: { path: '^src/infrastructure/' },
    },
    {
      name: 'shared-kernels-import-no-feature',
      comment: 'location-reports/ and tracker-states/ sit below every feature: they import only common/, infrastructure/ and each other.',
      severity: 'error',
      from: { path: '^src/(location-reports|tracker-states)/' },
      to: { path: '^src/', pathNot: SHARED },
    },
    {
      name: 'features-import-public-surface',
      comment:
        'Use another feature through its module, services, ports, errors, dto/ or entities/; add a small *.port.ts for what it must offer, or move a piece both need into a shared kernel.',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: {
        path: '^src/[^/]+/',
        pathNot: ['^src/$1/', SHARED, '[.](module|service|port|errors)[.]ts$', '^src/[^/]+/(dto|entities)/'],
      },
    },
    {
      name: 'no-folder-cycles',
      comment: 'Folders of src depend on each other one way only: move the piece both need below both, or invert through a port.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-cycles-across-folders',
      comment: 'A chain of imports that leaves a folder of src never comes back to it.',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { circular: true, via: { pathNot: '^src/$1/' } },
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
