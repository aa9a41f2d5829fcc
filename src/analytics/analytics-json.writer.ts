import { Readable } from 'node:stream';
import { toAggregateSections } from './analytics.mapper.js';
import type { AggregatesRow, AnalyticsExport, TrackerJsonItem } from './analytics.repository.js';

/**
 * Trackers fetched per cursor round trip (~400 KB of JSON text, written into one buffer by
 * joinedItems: the strings held are the small per-tracker items, never one large joined string).
 */
export const JSON_BATCH_TRACKERS = 1000;

interface AnalyticsJsonOptions {
  /** The body up to the computed part: `{"production_run_id":…,` (fresh per request). */
  header: string;
  /** The longest computed part (in bytes) handed to `keep`; longer ones are not collected. */
  keepMaxLength: number;
  /** Receives the whole computed part (from `"total_trackers"` to the closing brace, UTF-8) once it was produced. */
  keep: (computed: Buffer) => void;
}

/**
 * The computed part of the JSON result, from `"total_trackers"` on, in the field order of
 * ProductionRunAnalyticsResponse: the count, the tracker list as the SQL wrote it, then the
 * aggregate sections. The same text whether streamed or cached.
 */
function computedStart(totalTrackers: number): string {
  return `"total_trackers":${totalTrackers},"tracker_analytics":[`;
}

function computedEnd(aggregates: AggregatesRow): string {
  return `],${JSON.stringify(toAggregateSections(aggregates)).slice(1)}`;
}

/**
 * A batch's items as UTF-8, joined by ',' (and preceded by one unless it is the first batch),
 * written straight into one buffer: no joined string (a large one would live in V8's large-object
 * space until a full collection).
 */
function joinedItems(rows: readonly TrackerJsonItem[], first: boolean): Buffer {
  let length = first ? rows.length - 1 : rows.length;
  for (const [item] of rows) length += Buffer.byteLength(item);
  const bytes = Buffer.allocUnsafe(length);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 || !first) bytes[at++] = 0x2c; // ','
    at += bytes.write(rows[i][0], at);
  }
  return bytes;
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
export async function analyticsJsonStream(
  source: AnalyticsExport<TrackerJsonItem>,
  options: AnalyticsJsonOptions,
): Promise<Readable> {
  const batches = source.batches(JSON_BATCH_TRACKERS);
  let step: IteratorResult<TrackerJsonItem[], AggregatesRow>;
  try {
    step = await batches.next();
  } catch (error) {
    await source.close();
    throw error;
  }
  // Each piece is encoded once: the same bytes go to the socket and, collected, to the cache.
  let kept: Buffer[] | null = [];
  let keptLength = 0;
  const collect = (bytes: Buffer): Buffer => {
    if (kept) {
      keptLength += bytes.length;
      if (keptLength <= options.keepMaxLength) kept.push(bytes);
      else kept = null;
    }
    return bytes;
  };
  let started = false;
  async function* text(): AsyncGenerator<Buffer> {
    started = true;
    try {
      yield Buffer.from(options.header);
      yield collect(Buffer.from(computedStart(source.totalTrackers)));
      for (let first = true; !step.done; step = await batches.next(), first = false)
        yield collect(joinedItems(step.value, first));
      yield collect(Buffer.from(computedEnd(step.value)));
      if (kept) options.keep(Buffer.concat(kept, keptLength));
    } finally {
      await source.close();
    }
  }
  const stream = Readable.from(text(), { objectMode: false });
  // Destroyed before its first read (the client went away meanwhile): the generator never ran.
  stream.once('close', () => void (started || source.close()));
  return stream;
}
