import { Counter, Gauge, type Registry } from 'prom-client';

/** A value another component owns: one number, or one per value of the metric's label. */
export type Reading = number | Record<string, number>;

export interface ScrapedMetric {
  name: string;
  help: string;
  /** The label whose values are the keys of a reading; without one the reading is a number. */
  label?: string;
  /** Read at each scrape; null (the owner could not tell) keeps the previous value. */
  read: () => Reading | null | Promise<Reading | null>;
}

/** A counter whose running totals live in its owner: reset and re-added at each scrape (prom-client counters cannot be set). */
export function scrapedCounter(registers: Registry[], metric: ScrapedMetric): void {
  new Counter({
    ...metricOptions(metric, registers),
    async collect() {
      const series = await seriesOf(metric);
      if (!series) return;
      this.reset();
      for (const [labels, value] of series) this.inc(labels, value);
    },
  });
}

/** A gauge whose value lives in its owner: set at each scrape. */
export function scrapedGauge(registers: Registry[], metric: ScrapedMetric): void {
  new Gauge({
    ...metricOptions(metric, registers),
    async collect() {
      for (const [labels, value] of (await seriesOf(metric)) ?? []) this.set(labels, value);
    },
  });
}

function metricOptions({ name, help, label }: ScrapedMetric, registers: Registry[]) {
  return { name, help, labelNames: label ? [label] : [], registers };
}

/** A reading as `[labels, value]` series (null when there is none). */
async function seriesOf({ label, read }: ScrapedMetric): Promise<[Record<string, string>, number][] | null> {
  const reading = await read();
  if (reading === null) return null;
  return typeof reading === 'number' ? [[{}, reading]] : Object.entries(reading).map(([key, value]) => [{ [label!]: key }, value]);
}
