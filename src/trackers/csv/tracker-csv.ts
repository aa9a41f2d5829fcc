import { TRACKER_ERRORS } from '../../tracker-states/trackers.errors.js';
import { isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import { csvRecordReader } from './csv-lines.js';
import { validateRow, type CsvField, type CsvRowError, type CsvTrackerRow } from './tracker-row.js';

export { normalizeStatus, type CsvField, type CsvRowError, type CsvTrackerRow } from './tracker-row.js';

/** At most this many data rows per import. */
export const IMPORT_MAX_ROWS = 100_000;
const STREAM_CHUNK_BYTES = 64 * 1024;

/**
 * Accepted header spellings, compared after normalizeHeader. storage_location_id is
 * an addition of this service: without it an IN_STORAGE row could not be imported.
 */
const HEADER_ALIASES: Record<CsvField, string[]> = {
  name: ['name', 'tracker_name', 'tracker'],
  production_run_id: ['production_run_id', 'production_run', 'run_id'],
  status: ['status', 'current_status', 'state'],
  delivery_location_id: ['delivery_location_id', 'delivery_location'],
  storage_location_id: ['storage_location_id', 'storage_location'],
  notes: ['notes', 'note', 'comment'],
  device_id: ['device_id', 'device', 'imei'],
};

/** The file as a whole is unusable (empty, no header, no name column): 422 with this detail. */
export class CsvFormatError extends Error {}
/** More data rows than the limit: parsing stops at the first row over it. */
export class CsvTooManyRowsError extends Error {}

/** Header names are matched ignoring case, spaces, `_` and `-` (and a BOM). */
export function normalizeHeader(header: string): string {
  return header
    .replace(/^\uFEFF/, '')
    .replace(/[\s_-]+/g, '')
    .toLowerCase();
}

const ALIAS_TO_FIELD = new Map<string, CsvField>(
  (Object.entries(HEADER_ALIASES) as [CsvField, string[]][]).flatMap(([field, aliases]) =>
    aliases.map((a) => [normalizeHeader(a), field] as const),
  ),
);

/** Column index per known field (the first matching column wins; unknown columns are ignored). */
export function resolveColumns(header: string[]): Partial<Record<CsvField, number>> {
  const columns: Partial<Record<CsvField, number>> = {};
  header.forEach((cell, index) => {
    const field = ALIAS_TO_FIELD.get(normalizeHeader(cell));
    if (field && columns[field] === undefined) columns[field] = index;
  });
  return columns;
}

/** `;` when the header line has more semicolons than commas outside quotes, else `,`. */
export function detectDelimiter(firstLine: string): ',' | ';' {
  let commas = 0;
  let semicolons = 0;
  let quoted = false;
  for (const char of firstLine) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && char === ',') commas++;
    else if (!quoted && char === ';') semicolons++;
  }
  return semicolons > commas ? ';' : ',';
}

const isBlank = (cells: string[]) => cells.every((cell) => cell.trim() === '');

/** The header line: everything before the first line break of any kind. */
function firstLine(text: string): string {
  const end = text.search(/[\r\n]/);
  return end === -1 ? text : text.slice(0, end);
}

/**
 * Parses (papaparse reads the cells, see csvRecordReader) and validates a tracker CSV a chunk per
 * event-loop turn, so a big file never blocks the loop for long (timers, health probes and other
 * requests keep running).
 * Returns the valid rows and every row error; the run default, existence/visibility and duplicates
 * are the import service's (set-based) concern.
 */
export async function parseTrackerCsv(
  file: Buffer,
  options: { maxRows?: number } = {},
): Promise<{ rows: CsvTrackerRow[]; errors: CsvRowError[] }> {
  const maxRows = options.maxRows ?? IMPORT_MAX_ROWS;
  const body = file[0] === 0xef && file[1] === 0xbb && file[2] === 0xbf ? file.subarray(3) : file;
  if (!isUtf8(body)) throw new CsvFormatError('CSV file is not valid UTF-8');
  const head = body.subarray(0, Math.min(body.length, STREAM_CHUNK_BYTES)).toString('utf8');
  if (head.trim() === '' && body.toString('utf8').trim() === '') throw new CsvFormatError('CSV file is empty');
  const delimiter = detectDelimiter(firstLine(head));

  const rows: CsvTrackerRow[] = [];
  const errors: CsvRowError[] = [];
  let columns: Partial<Record<CsvField, number>> | null = null;
  let failure: Error | null = null;
  let dataRows = 0;

  const reader = csvRecordReader(delimiter, ({ line, cells, malformed }) => {
    // Broken quoting is always reported, also on a line that holds nothing else.
    if (failure || (malformed === undefined && isBlank(cells))) return;
    if (columns === null) {
      if (malformed) {
        failure = new CsvFormatError(`CSV header is malformed: ${malformed}`);
        return;
      }
      columns = resolveColumns(cells);
      if (Object.keys(columns).length === 0) {
        failure = new CsvFormatError(
          'CSV header row is missing: no recognised column (expected at least a name column)',
        );
      } else if (columns.name === undefined) {
        failure = new CsvFormatError('CSV header has no name column (expected one of: name, tracker_name, tracker)');
      }
      return;
    }
    if (++dataRows > maxRows) {
      failure = new CsvTooManyRowsError(TRACKER_ERRORS.csvTooManyRows(maxRows).detail);
      return;
    }
    if (malformed) {
      errors.push({ row: line, field: 'row', message: `malformed CSV: ${malformed}` });
      return;
    }
    const parsed = validateRow(line, cells, columns, errors);
    if (parsed) rows.push(parsed);
  });
  const decoder = new StringDecoder('utf8');
  for (let start = 0; start < body.length && !failure; start += STREAM_CHUNK_BYTES) {
    reader.push(decoder.write(body.subarray(start, start + STREAM_CHUNK_BYTES)));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (!failure) {
    reader.push(decoder.end());
    reader.end();
  }
  if (failure) throw failure as Error;
  if (columns === null) throw new CsvFormatError('CSV file is empty');
  if (dataRows === 0) throw new CsvFormatError('CSV file has a header but no data rows');
  return { rows, errors };
}
