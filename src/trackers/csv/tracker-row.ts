import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { flattenValidationErrors } from '../../common/errors/validation.exception.js';
import { MAX_INT4 } from '../../common/int4.js';
import { textProblem } from '../../common/http/text-input.js';
import { CreateTrackerDto } from '../dto/tracker.dto.js';
import { TRACKER_STATES, type TrackerStatus } from '../../tracker-states/tracker-status.js';

export type CsvField =
  'name' | 'production_run_id' | 'status' | 'delivery_location_id' | 'storage_location_id' | 'notes' | 'device_id';

export interface CsvTrackerRow {
  /** 1-based line number of the row's first line in the file (header = 1). */
  row: number;
  name: string;
  productionRunId: number | null;
  status: TrackerStatus;
  deliveryLocationId: number | null;
  storageLocationId: number | null;
  notes: string | null;
  deviceId: string | null;
}

export interface CsvRowError {
  row: number;
  field: string;
  message: string;
}

/** CSV columns holding multi-line text (tab and line breaks allowed), as `@MultilineText()` marks them in the DTO. */
const MULTI_LINE_FIELDS: ReadonlySet<CsvField> = new Set(['notes']);

/** `in transit`, `In-Transit`, `in_transit` → IN_TRANSIT; null when not a state. */
export function normalizeStatus(value: string): TrackerStatus | null {
  const candidate = value
    .trim()
    .toUpperCase()
    .replace(/[\s-]+/g, '_');
  return (TRACKER_STATES as readonly string[]).includes(candidate) ? (candidate as TrackerStatus) : null;
}

/**
 * The one validation of an imported row. First the CSV spellings (ids as text, status aliases,
 * location rules) with messages naming the CSV value, then the very rules of `POST /trackers`: the
 * row, as the JSON body it stands for, is validated with CreateTrackerDto, so no field can be
 * imported that the API would refuse (length limits included). Appends its problems to `errors`
 * and returns the row only when there are none.
 */
export function validateRow(
  row: number,
  cells: string[],
  columns: Partial<Record<CsvField, number>>,
  errors: CsvRowError[],
): CsvTrackerRow | null {
  const before = errors.length;
  const fail = (field: string, message: string) => errors.push({ row, field, message });
  const raw = (field: CsvField) => {
    const index = columns[field];
    return index === undefined ? '' : (cells[index] ?? '');
  };
  // The text rule every body and query obeys (NUL, control characters, lone surrogates).
  for (const field of Object.keys(columns) as CsvField[]) {
    const problem = textProblem(raw(field), MULTI_LINE_FIELDS.has(field) ? 'multi-line' : 'single-line');
    if (problem !== null) fail(field, problem);
  }
  if (errors.length > before) return null;

  const cell = (field: CsvField) => raw(field).trim();
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

  const notes = cell('notes') === '' ? null : cell('notes');
  const deviceId = cell('device_id') === '' ? null : cell('device_id');
  const body = {
    name,
    // The run may come from the query instead; the service checks that one exists.
    production_run_id: productionRunId ?? 1,
    status,
    delivery_location_id: deliveryLocationId,
    storage_location_id: storageLocationId,
    notes,
    device_id: deviceId,
  };
  const problems = flattenValidationErrors(
    validateSync(plainToInstance(CreateTrackerDto, body), { forbidUnknownValues: true }),
  );
  for (const problem of problems) fail(problem.field, problem.message);
  if (errors.length > before) return null;
  return { row, name, productionRunId, status, deliveryLocationId, storageLocationId, notes, deviceId };
}
