/** Command line of `npm run bench -- [--scale small|medium|large|xl] [--only <scenario>[,...]] [--fresh]`. */
export type Scale = 'small' | 'medium' | 'large' | 'xl';

export interface ScaleSizes {
  /** All generated trackers, including the analytics and CSV runs (the list scenarios page through all). */
  trackers: number;
  /** Trackers of the run whose analytics JSON is measured. */
  analyticsRunTrackers: number;
  /** Trackers of the run whose CSV export is measured. */
  csvRunTrackers: number;
  /** Raw location reports spread over all trackers (one per tracker-hour, or spread over `reportDays`). */
  reports: number;
  /** Days the raw reports go back (each tracker's reports evenly apart); unset: one report per tracker-hour. */
  reportDays?: number;
  /** Hourly points of the one tracker whose history page is measured (two years = 17 520). */
  historyHours: number;
  /** Rows in the CSV import file. */
  importRows: number;
  /** Seconds each load scenario runs. */
  seconds: number;
}

/**
 * Sizes per scale. `large` is the data set: a 100 000-tracker CSV run plus the 10 000-tracker
 * analytics run, 10 million raw reports. `small` keeps a whole run under three minutes.
 */
export const SCALES: Record<Scale, ScaleSizes> = {
  small: {
    trackers: 12_000,
    analyticsRunTrackers: 2_000,
    csvRunTrackers: 5_000,
    reports: 300_000,
    historyHours: 17_520,
    importRows: 100_000,
    seconds: 3,
  },
  medium: {
    trackers: 40_000,
    analyticsRunTrackers: 10_000,
    csvRunTrackers: 20_000,
    reports: 2_000_000,
    historyHours: 17_520,
    importRows: 100_000,
    seconds: 8,
  },
  large: {
    trackers: 110_000,
    analyticsRunTrackers: 10_000,
    csvRunTrackers: 100_000,
    reports: 10_000_000,
    historyHours: 17_520,
    importRows: 100_000,
    seconds: 10,
  },
  // A million trackers; raw reports over 35 daily partitions. BENCH_XL_REPORTS lowers the report
  // count when the machine's disk or time does not allow 50 million (docs/capacity.md says which ran).
  xl: {
    trackers: 1_000_000,
    analyticsRunTrackers: 10_000,
    csvRunTrackers: 100_000,
    reports: Number(process.env.BENCH_XL_REPORTS ?? 50_000_000),
    reportDays: 35,
    historyHours: 17_520,
    importRows: 100_000,
    seconds: 10,
  },
};

export const SCENARIOS = [
  'startup',
  'framework-ceiling',
  'auth-baseline',
  'copy-ceiling',
  'ingest',
  'partitions',
  'tracker-list',
  'api-keys',
  'history',
  'analytics',
  'csv-export',
  'import',
  'health',
  'memory',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface BenchOptions {
  scale: Scale;
  sizes: ScaleSizes;
  only: Set<ScenarioName> | null;
  /** Rebuild the bench database even when one of the same scale and sizes exists. */
  fresh: boolean;
  /** LOG_LEVEL of the measured service (production default is info; request logs go to /dev/null). */
  logLevel: string;
  /** Write a V8 CPU profile of the service (`--cpu-prof`) into data/bench-profiles. */
  profile: boolean;
}

export function parseOptions(argv: string[]): BenchOptions {
  let scale: Scale = 'small';
  let only: Set<ScenarioName> | null = null;
  let fresh = false;
  let logLevel = 'info';
  let profile = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--scale') {
      const s = value();
      if (!(s in SCALES)) throw new Error(`--scale must be one of ${Object.keys(SCALES).join(', ')}`);
      scale = s as Scale;
    } else if (arg === '--only') {
      const names = value()
        .split(',')
        .map((n) => n.trim());
      for (const name of names) {
        if (!(SCENARIOS as readonly string[]).includes(name))
          throw new Error(`unknown scenario '${name}' (known: ${SCENARIOS.join(', ')})`);
      }
      only = new Set(names as ScenarioName[]);
    } else if (arg === '--fresh') {
      fresh = true;
    } else if (arg === '--profile') {
      profile = true;
    } else if (arg === '--log-level') {
      logLevel = value();
    } else if (arg === '--help' || arg === '-h') {
      console.log(
        `npm run bench -- [--scale small|medium|large|xl] [--only ${SCENARIOS.join('|')}[,...]] [--fresh] [--log-level info] [--profile]`,
      );
      process.exit(0);
    } else {
      throw new Error(`unknown argument '${arg}'`);
    }
  }
  return { scale, sizes: SCALES[scale], only, fresh, logLevel, profile };
}
