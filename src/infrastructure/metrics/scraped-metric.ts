import { Counter, Gauge, type Registry } from 'prom-client';

/** A value another component owns: one number, or one per value of the metric's label. */
type Reading = number | Record<string, number>;

interface ScrapedMetric {
  name: string;
  help: string;
  /** The label whose values are the keys of a reading; without one the reading is a number. */
  label?: string;
  /** Read at each scrape; null (the owner could not tell) keeps the previous value. */
  read: () => Reading | null | Promise<Reading | null>;
}

/**
 * How long a scrape waits for a reading that needs I/O (the database) before it answers with the
 * previous one: a slow or unreachable database must never make /metrics slow, since that is when
 * monitoring needs it. The late reading is kept for the next scrape.
 */
const SCRAPE_READ_WAIT_MS = 100;

/** A counter whose running totals live in its owner: reset and re-added at each scrape (prom-client counters cannot be set). */
export function scrapedCounter(registers: Registry[], metric: ScrapedMetric): void {
  const reader = boundedReader(metric);
  new Counter({
    ...metricOptions(metric, registers),
    async collect() {
      const series = await reader();
      if (!series) return;
      this.reset();
      for (const [labels, value] of series) this.inc(labels, value);
    },
  });
}

/** A gauge whose value lives in its owner: set at each scrape. */
export function scrapedGauge(registers: Registry[], metric: ScrapedMetric): void {
  const reader = boundedReader(metric);
  new Gauge({
    ...metricOptions(metric, registers),
    async collect() {
      for (const [labels, value] of (await reader()) ?? []) this.set(labels, value);
    },
  });
}

function metricOptions({ name, help, label }: ScrapedMetric, registers: Registry[]) {
  return { name, help, labelNames: label ? [label] : [], registers };
}

type Series = [Record<string, string>, number][];

/**
 * The metric's series, waiting at most SCRAPE_READ_WAIT_MS for a reading in progress; past that,
 * the last reading that arrived (null before the first). One read at a time per metric.
 */
function boundedReader(metric: ScrapedMetric): () => Promise<Series | null> {
  let last: Series | null = null;
  let pending: Promise<void> | null = null;
  return async () => {
    pending ??= seriesOf(metric)
      .then(
        (series) => {
          if (series) last = series;
        },
        () => undefined,
      )
      .finally(() => (pending = null));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, SCRAPE_READ_WAIT_MS)));
    await Promise.race([pending, waited]);
    clearTimeout(timer);
    return last;
  };
}

/** A reading as `[labels, value]` series (null when there is none). */
async function seriesOf({ label, read }: ScrapedMetric): Promise<Series | null> {
  const reading = await read();
  if (reading === null) return null;
  return typeof reading === 'number'
    ? [[{}, reading]]
    : Object.entries(reading).map(([key, value]) => [{ [label!]: key }, value]);
}
