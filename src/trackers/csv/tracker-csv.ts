import Papa from 'papaparse';
import { isUtf8 } from 'node:buffer';
import { Readable } from 'node:stream';
import { TRACKER_STATES, type TrackerStatus } from '../entities/tracker-status.js';
import { MAX_INT4 } from '../../common/http/id-field.js';

/** Contract §4: at most this many data rows per import. */
export const IMPORT_MAX_ROWS = 100_000;
const STREAM_CHUNK_BYTES = 64 * 1024;

export type CsvField = 'name' | 'production_run_id' | 'status' | 'delivery_location_id' | 'storage_location_id' | 'notes';

/**
 * Accepted header spellings (contract §4), compared after normalizeHeader. storage_location_id is
 * an addition of this service: without it an IN_STORAGE row could not be imported.
 */
const HEADER_ALIASES: Record<CsvField, string[]> = {
  name: ['name', 'tracker_name', 'tracker'],
  production_run_id: ['production_run_id', 'production_run', 'run_id'],
  status: ['status', 'current_status', 'state'],
  delivery_location_id: ['delivery_location_id', 'delivery_location'],
  storage_location_id: ['storage_location_id', 'storage_location'],
  notes: ['notes', 'note', 'comment'],
};

export interface CsvTrackerRow {
  /** 1-based line number of the row's first line in the file (header = 1). */
  row: number;
  name: string;
  productionRunId: number | null;
  status: TrackerStatus;
  deliveryLocationId: number | null;
  storageLocationId: number | null;
  notes: string | null;
}

export interface CsvRowError {
  row: number;
  field: string;
  message: string;
}

/** The file as a whole is unusable (empty, no header, no name column): 422 with this detail. */
export class CsvFormatError extends Error {}
/** More data rows than the limit: parsing stops at the first row over it. */
export class CsvTooManyRowsError extends Error {}

/** Header names are matched ignoring case, spaces, `_` and `-` (and a BOM). */
export function normalizeHeader(header: string): string {
  return header.replace(/^\uFEFF/, '').replace(/[\s_-]+/g, '').toLowerCase();
}

const ALIAS_TO_FIELD = new Map<string, CsvField>(
  (Object.entries(HEADER_ALIASES) as [CsvField, string[]][]).flatMap(([field, aliases]) => aliases.map((a) => [normalizeHeader(a), field] as const)),
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

/** `in transit`, `In-Transit`, `in_transit` → IN_TRANSIT; null when not a state. */
export function normalizeStatus(value: string): TrackerStatus | null {
  const candidate = value.trim().toUpperCase().replace(/[\s-]+/g, '_');
  return (TRACKER_STATES as readonly string[]).includes(candidate) ? (candidate as TrackerStatus) : null;
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

/**
 * The file in chunks, one per event-loop turn: papaparse parses each chunk as it arrives, so a big
 * file never blocks the loop for long (timers, health probes and other requests keep running).
 */
async function* chunks(buffer: Buffer): AsyncGenerator<Buffer> {
  for (let start = 0; start < buffer.length; start += STREAM_CHUNK_BYTES) {
    yield buffer.subarray(start, start + STREAM_CHUNK_BYTES);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

const isBlank = (cells: string[]) => cells.every((cell) => cell.trim() === '');

/**
 * Parses and validates a tracker CSV with papaparse in streaming step mode (one row at a time,
 * never the whole file split into lines). Returns the valid rows and every row error; the run
 * default, existence/visibility and duplicates are the import service's (set-based) concern.
 */
export async function parseTrackerCsv(
  file: Buffer,
  options: { maxRows?: number } = {},
): Promise<{ rows: CsvTrackerRow[]; errors: CsvRowError[] }> {
  const maxRows = options.maxRows ?? IMPORT_MAX_ROWS;
  const body = file[0] === 0xef && file[1] === 0xbb && file[2] === 0xbf ? file.subarray(3) : file;
  if (!isUtf8(body)) throw new CsvFormatError('CSV file is not valid UTF-8');
  if (body.toString('utf8').trim() === '') throw new CsvFormatError('CSV file is empty');
  const newline = body.indexOf(0x0a);
  const delimiter = detectDelimiter(body.subarray(0, newline === -1 ? body.length : newline).toString('utf8'));

  const rows: CsvTrackerRow[] = [];
  const errors: CsvRowError[] = [];
  // Mutated by the step callback (kept in an object so the type checker does not narrow it away).
  const state: { columns: Partial<Record<CsvField, number>> | null; failure: Error | null; line: number; dataRows: number } = {
    columns: null,
    failure: null,
    line: 1,
    dataRows: 0,
  };

  await new Promise<void>((resolve, reject) => {
    const input = Readable.from(chunks(body)).setEncoding('utf8');
    Papa.parse<string[]>(input, {
      delimiter,
      skipEmptyLines: false,
      step: (result, parser) => {
        const cells = result.data;
        const row = state.line;
        // The next row starts after this one's line break plus any quoted line breaks inside it.
        state.line += 1 + cells.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0);
        if (isBlank(cells)) return;
        if (state.columns === null) {
          const columns = resolveColumns(cells);
          state.columns = columns;
          if (Object.keys(columns).length === 0) {
            state.failure = new CsvFormatError('CSV header row is missing: no recognised column (expected at least a name column)');
          } else if (columns.name === undefined) {
            state.failure = new CsvFormatError('CSV header has no name column (expected one of: name, tracker_name, tracker)');
          }
          if (state.failure) parser.abort();
          return;
        }
        if (++state.dataRows > maxRows) {
          state.failure = new CsvTooManyRowsError(`Too many rows: the maximum is ${maxRows} data rows`);
          parser.abort();
          return;
        }
        for (const error of result.errors) errors.push({ row, field: 'row', message: `malformed CSV: ${error.message}` });
        const parsed = validateRow(row, cells, state.columns, errors);
        if (parsed) rows.push(parsed);
      },
      complete: () => resolve(),
      error: (error: Error) => reject(error),
    });
  });
  if (state.failure) throw state.failure;
  if (state.columns === null) throw new CsvFormatError('CSV file is empty');
  if (state.dataRows === 0) throw new CsvFormatError('CSV file has a header but no data rows');
  return { rows, errors };
}

function validateRow(row: number, cells: string[], columns: Partial<Record<CsvField, number>>, errors: CsvRowError[]): CsvTrackerRow | null {
  const before = errors.length;
  const cell = (field: CsvField) => {
    const index = columns[field];
    return index === undefined ? '' : (cells[index] ?? '').trim();
  };
  const fail = (field: CsvField, message: string) => errors.push({ row, field, message });
  const id = (field: CsvField): number | null => {
    const value = cell(field);
    if (value === '') return null;
    if (!/^\d{1,10}$/.test(value) || Number(value) < 1 || Number(value) > MAX_INT4) {
      fail(field, `must be a positive integer (got "${value.slice(0, 50)}")`);
      return null;
    }
    return Number(value);
  };

  const name = cell('name');
  if (name === '') fail('name', 'is required');
  else if (name.length > 255) fail('name', 'must be at most 255 characters');
  const productionRunId = id('production_run_id');
  const statusText = cell('status');
  const status = statusText === '' ? 'CREATED' : normalizeStatus(statusText);
  if (status === null) fail('status', `must be one of ${TRACKER_STATES.join(', ')} (got "${statusText.slice(0, 50)}")`);
  const deliveryLocationId = id('delivery_location_id');
  const storageLocationId = id('storage_location_id');
  if (status === 'IN_STORAGE' && storageLocationId === null && cell('storage_location_id') === '') {
    fail('storage_location_id', 'is required when status is IN_STORAGE');
  }
  if (status !== null && status !== 'IN_STORAGE' && storageLocationId !== null) {
    fail('storage_location_id', 'is only allowed when status is IN_STORAGE');
  }
  if (status === 'DELIVERED' && deliveryLocationId === null && cell('delivery_location_id') === '') {
    fail('delivery_location_id', 'is required when status is DELIVERED');
  }
  if (errors.length > before || status === null) return null;
  const notes = cell('notes');
  return { row, name, productionRunId, status, deliveryLocationId, storageLocationId, notes: notes === '' ? null : notes };
}
