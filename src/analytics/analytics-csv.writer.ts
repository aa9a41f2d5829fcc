import { Readable } from 'node:stream';
import type { CsvDateFormat } from '../common/csv/csv.js';
import type { AnalyticsExport, TrackerAnalyticsTuple } from './analytics.repository.js';
import {
  aggregateSection,
  analyticsCsvFileName,
  deliveryPerformanceSection,
  runSection,
  trackerCsvRows,
  trackerSectionStart,
} from './analytics-csv.js';

/** Rows fetched from the cursor per round trip, and written to the socket per chunk. */
const CSV_BATCH_SIZE = 2000;

export interface AnalyticsCsvOptions {
  includeAggregateSummary: boolean;
  includeDeliveryPerformance: boolean;
  dateFormat: CsvDateFormat;
  generatedAt: Date;
}

/** The CSV export: its file name and its text, produced as the consumer reads. */
export interface AnalyticsCsvFile {
  fileName: string;
  stream: Readable;
}

/**
 * The analytics CSV as a stream. Each read pulls one batch from the database cursor, so memory
 * holds at most one batch whatever the run size and a consumer that stops reading parks the
 * cursor. The source (cursor, transaction, connection) is closed when the stream ends, fails or
 * is destroyed — also when the client goes away midway.
 */
export function analyticsCsvFile(
  source: AnalyticsExport<TrackerAnalyticsTuple>,
  options: AnalyticsCsvOptions,
): AnalyticsCsvFile {
  let started = false;
  async function* text(): AsyncGenerator<string> {
    started = true;
    try {
      yield (
        runSection(source.run, source.totalTrackers, options.generatedAt, options.dateFormat) + trackerSectionStart()
      );
      const batches = source.batches(CSV_BATCH_SIZE);
      let step = await batches.next();
      for (; !step.done; step = await batches.next()) yield trackerCsvRows(step.value);
      const aggregates = step.value;
      let tail = '';
      if (options.includeAggregateSummary) tail += aggregateSection(aggregates);
      if (options.includeDeliveryPerformance) tail += deliveryPerformanceSection(aggregates);
      if (tail) yield tail;
    } finally {
      await source.close();
    }
  }
  const stream = Readable.from(text(), { objectMode: false });
  // Destroyed before its first read (the client went away meanwhile): the generator never ran.
  stream.once('close', () => void (started || source.close()));
  return { fileName: analyticsCsvFileName(source.run.id, source.run.description, options.generatedAt), stream };
}
