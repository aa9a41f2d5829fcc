import { Readable } from 'node:stream';
import { toAggregateSections } from './analytics.mapper.js';
import type { AggregatesRow, AnalyticsExport, TrackerJsonChunk } from './analytics.repository.js';

/** List rows (each up to JSON_CHUNK_TRACKERS trackers) fetched per cursor round trip. */
export const JSON_BATCH_CHUNKS = 8;

export interface AnalyticsJsonOptions {
  /** The body up to the computed part: `{"production_run_id":…,` (fresh per request). */
  header: string;
  /** The longest computed part (in UTF-16 units) handed to `keep`; longer ones are not collected. */
  keepMaxLength: number;
  /** Receives the whole computed part (from `"total_trackers"` to the closing brace) once it was produced. */
  keep: (computed: string) => void;
}

/**
 * The computed part of the JSON result, from `"total_trackers"` on, in the field order of
 * ProductionRunAnalyticsResponse: the count, the tracker list as the SQL wrote it, then the
 * aggregate sections. The same text whether streamed or cached.
 */
export function computedStart(totalTrackers: number): string {
  return `"total_trackers":${totalTrackers},"tracker_analytics":[`;
}

export function computedEnd(aggregates: AggregatesRow): string {
  return `],${JSON.stringify(toAggregateSections(aggregates)).slice(1)}`;
}

/**
 * The JSON result as a stream read from the database cursor as the consumer reads: memory holds
 * one batch of list rows whatever the run size, and a consumer that stops reading parks the
 * cursor. The first batch is read before the stream is returned, so a statement that fails or
 * times out still answers with its error status; a failure after that destroys the stream (the
 * response is cut before its end, never a complete-looking 200). The source is closed when the
 * stream ends, fails or is destroyed. A computed part no longer than `keepMaxLength` is collected
 * on the way and handed to `keep` once the last row was read.
 */
export async function analyticsJsonStream(source: AnalyticsExport<TrackerJsonChunk>, options: AnalyticsJsonOptions): Promise<Readable> {
  const batches = source.batches(JSON_BATCH_CHUNKS);
  let step: IteratorResult<TrackerJsonChunk[], AggregatesRow>;
  try {
    step = await batches.next();
  } catch (error) {
    await source.close();
    throw error;
  }
  let kept: string[] | null = [];
  let keptLength = 0;
  const collect = (text: string): string => {
    if (kept) {
      keptLength += text.length;
      if (keptLength <= options.keepMaxLength) kept.push(text);
      else kept = null;
    }
    return text;
  };
  let started = false;
  async function* text(): AsyncGenerator<string> {
    started = true;
    try {
      yield options.header + collect(computedStart(source.totalTrackers));
      // Each row's text as it came (no concatenation: a joined string would be flattened into a
      // large copy when written).
      for (; !step.done; step = await batches.next()) for (const [items] of step.value) yield collect(items);
      yield collect(computedEnd(step.value));
      if (kept) options.keep(kept.join(''));
    } finally {
      await source.close();
    }
  }
  const stream = Readable.from(text(), { objectMode: false });
  // Destroyed before its first read (the client went away meanwhile): the generator never ran.
  stream.once('close', () => void (started || source.close()));
  return stream;
}
