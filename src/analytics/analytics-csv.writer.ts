import type { Response } from 'express';
import type { CsvDateFormat } from '../common/csv/csv.js';
import type { AnalyticsExport } from './analytics.repository.js';
import {
  aggregateSection,
  analyticsCsvFileName,
  deliveryPerformanceSection,
  runSection,
  trackerCsvRow,
  trackerSectionStart,
} from './analytics-csv.js';

/** Rows fetched from the cursor per round trip, and written to the socket per chunk. */
export const CSV_BATCH_SIZE = 1000;
/** A client that accepts no data for this long is treated as gone (it would pin a DB connection). */
export const CSV_STALL_TIMEOUT_MS = 60_000;

export interface AnalyticsCsvOptions {
  includeAggregateSummary: boolean;
  includeDeliveryPerformance: boolean;
  dateFormat: CsvDateFormat;
  generatedAt: Date;
}

/**
 * Writes to an HTTP response honouring backpressure: when the socket buffer is full it waits for
 * `drain` before the next cursor read, so memory holds at most one batch whatever the run size.
 * A client that goes away sets `aborted`; the caller stops reading and releases the connection.
 */
class ResponseSink {
  aborted = false;

  constructor(private readonly res: Response) {
    res.once('close', () => {
      if (!res.writableFinished) this.aborted = true;
    });
  }

  async write(chunk: string): Promise<void> {
    if (this.aborted || this.res.destroyed) {
      this.aborted = true;
      return;
    }
    if (this.res.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const stalled = setTimeout(() => {
        this.aborted = true;
        this.res.destroy();
      }, CSV_STALL_TIMEOUT_MS);
      const done = (): void => {
        clearTimeout(stalled);
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }
}

/** Streams the analytics CSV. Returns false when the client went away midway. */
export async function writeAnalyticsCsv(res: Response, source: AnalyticsExport, options: AnalyticsCsvOptions): Promise<boolean> {
  const sink = new ResponseSink(res);
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader(
    'Content-Disposition',
    `attachment; filename="${analyticsCsvFileName(source.run.id, source.run.description, options.generatedAt)}"`,
  );
  res.setHeader('Cache-Control', 'no-store');

  await sink.write(runSection(source.run, source.aggregates.total_trackers, options.generatedAt, options.dateFormat) + trackerSectionStart());
  for await (const batch of source.batches(CSV_BATCH_SIZE)) {
    await sink.write(batch.map(trackerCsvRow).join(''));
    if (sink.aborted) return false;
  }
  let tail = '';
  if (options.includeAggregateSummary) tail += aggregateSection(source.aggregates);
  if (options.includeDeliveryPerformance) tail += deliveryPerformanceSection(source.aggregates);
  if (tail) await sink.write(tail);
  if (sink.aborted) return false;
  res.end();
  return true;
}
