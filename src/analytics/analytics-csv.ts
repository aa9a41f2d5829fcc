import {
  csvCell,
  csvRow,
  fileTimestamp,
  formatCsvDate,
  safeFileNamePart,
  CSV_LINE_END,
  type CsvDateFormat,
} from '../common/csv/csv.js';
import type { AggregatesRow, AnalyticsRunRow, TrackerAnalyticsTuple } from './analytics.repository.js';
import {
  JOURNEY_COMPLETION_PERCENT,
  toAggregateMetricsResponse,
  toDeliveryPerformanceResponse,
} from './analytics.mapper.js';

/** The analytics CSV layout (docs/api.md), as pure functions of the rows (the writer streams them). */

const TRACKER_ANALYTICS_HEADER = [
  'Tracker Name',
  'Tracker ID',
  'Current Status',
  'Journey Completion %',
  'Total Journey Duration (days)',
  'Delivery Location',
  'Delivery Location Duration (days)',
  'Delivery Location Duration (hours)',
  'Storage Locations Visited',
  'Total Storage Duration (days)',
] as const;

const DELIVERY_PERFORMANCE_HEADER = [
  'Location Name',
  'Tracker Count',
  'Average Duration (days)',
  'Min Duration (days)',
  'Max Duration (days)',
] as const;

/** Durations are written with exactly two decimals, like the JSON's rounding. */
const fixed2 = (value: number): string => value.toFixed(2);

/**
 * value.toFixed(2) for the export's figures, which the SQL rounded to whole hundredths: such a
 * value is the double nearest to n / 100, and toFixed(2) of it writes n / 100 exactly, which integer
 * arithmetic writes several times faster. Anything else goes to toFixed itself.
 */
function hundredths(value: number): string {
  const n = Math.round(value * 100);
  if (n >= 0 && n < 1e15 && n / 100 === value) {
    const whole = Math.floor(n / 100);
    const cents = n - whole * 100;
    return `${whole}${cents < 10 ? '.0' : '.'}${cents}`;
  }
  return fixed2(value);
}

/** `production_run_{id}_{description}_{YYYYMMDD_HHMMSS}.csv` */
export function analyticsCsvFileName(runId: number, description: string, generatedAt: Date): string {
  return `production_run_${runId}_${safeFileNamePart(description)}_${fileTimestamp(generatedAt)}.csv`;
}

/** Section title alone on its line; every section but the first is preceded by one empty line. */
function title(text: string, first = false): string {
  return (first ? '' : CSV_LINE_END) + csvRow([text]);
}

export function runSection(
  run: AnalyticsRunRow,
  totalTrackers: number,
  generatedAt: Date,
  dateFormat: CsvDateFormat,
): string {
  return (
    title('Production Run Analytics', true) +
    csvRow(['ID', run.id]) +
    csvRow(['Description', run.description]) +
    csvRow(['Start Date', formatCsvDate(run.start_date, dateFormat)]) +
    csvRow(['End Date', formatCsvDate(run.end_date, dateFormat)]) +
    csvRow(['Total Trackers', totalTrackers]) +
    csvRow(['Generated At', formatCsvDate(generatedAt, dateFormat)])
  );
}

export function trackerSectionStart(): string {
  return title('Tracker Analytics') + csvRow(TRACKER_ANALYTICS_HEADER);
}

/** The Journey Completion % cell of each known status (one decimal and `%`, like `33.3%`). */
const COMPLETION_CELLS: ReadonlyMap<string, string> = new Map(
  Object.entries(JOURNEY_COMPLETION_PERCENT).map(([status, percent]) => [status, csvCell(`${percent.toFixed(1)}%`)]),
);
const UNKNOWN_COMPLETION_CELL = csvCell(`${(0).toFixed(1)}%`);
/** The Current Status cell of each known status. */
const STATUS_CELLS: ReadonlyMap<string, string> = new Map(
  Object.keys(JOURNEY_COMPLETION_PERCENT).map((status) => [status, csvCell(status)]),
);

/**
 * csvCell(fixed2(value)) without the general checks: toFixed writes digits, '.', and at most a
 * leading '-' (or NaN/Infinity, or an exponent after a digit), so only a leading '-' needs the
 * formula prefix and nothing ever needs quotes.
 */
function fixed2Cell(value: number): string {
  const text = hundredths(value);
  return text.charCodeAt(0) === 45 ? csvCell(text) : text;
}

/**
 * The Tracker Analytics records of a batch of rows, the hot loop of a large export: the cells of
 * csvRow([name, id, status, completion, journey, delivery location, its days, its hours, visits,
 * storage]) written directly, without an array per row.
 */
export function trackerCsvRows(rows: readonly TrackerAnalyticsTuple[]): string {
  let text = '';
  for (const [id, name, journey, deliveryName, deliveryDays, deliveryHours, status, visits, storage] of rows) {
    text +=
      `${csvCell(name)},${csvCell(id)},${STATUS_CELLS.get(status) ?? csvCell(status)},${COMPLETION_CELLS.get(status) ?? UNKNOWN_COMPLETION_CELL},` +
      `${fixed2Cell(journey)},${csvCell(deliveryName)},${fixed2Cell(deliveryDays)},${fixed2Cell(deliveryHours)},` +
      `${csvCell(visits)},${fixed2Cell(storage)}${CSV_LINE_END}`;
  }
  return text;
}

export function aggregateSection(aggregates: AggregatesRow): string {
  const m = toAggregateMetricsResponse(aggregates);
  return (
    title('Aggregate Summary') +
    csvRow(['Total Trackers', m.total_trackers]) +
    csvRow(['Completed Trackers', m.completed_trackers]) +
    csvRow(['Completion Rate %', `${m.completion_rate_percent.toFixed(2)}%`]) +
    csvRow(['Average Delivery Location Duration (days)', fixed2(m.average_delivery_location_duration_days)])
  );
}

export function deliveryPerformanceSection(aggregates: AggregatesRow): string {
  const rows = aggregates.delivery_location_performance.map(toDeliveryPerformanceResponse);
  return (
    title('Delivery Location Performance') +
    csvRow(DELIVERY_PERFORMANCE_HEADER) +
    rows
      .map((d) =>
        csvRow([
          d.location_name,
          d.tracker_count,
          fixed2(d.average_duration_days),
          fixed2(d.min_duration_days),
          fixed2(d.max_duration_days),
        ]),
      )
      .join('')
  );
}
