import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of trackers and their CSV import. */
export const TRACKER_ERRORS = {
  trackerNotFound: e('TRACKER_NOT_FOUND', 404, 'Tracker not found', {
    summary: "Missing, or of a client not in the caller's client_list",
  }),
  trackerExists: (name = 'NAME', runId: number | string = 'ID') =>
    e('TRACKER_EXISTS', 409, `Tracker '${name}' already exists in production run ${runId}`),
  deviceIdInUse: (deviceId = 'DEVICE') => e('DEVICE_ID_IN_USE', 409, `Device id '${deviceId}' is already in use`),
  csvInvalid: (reason = 'CSV file is empty') =>
    e('CSV_INVALID', 422, reason, { summary: 'Not UTF-8, empty, no header or no name column, no data rows' }),
  csvTooManyRows: (maxRows: number | string = 100000) =>
    e('CSV_TOO_MANY_ROWS', 413, `Too many rows: the maximum is ${maxRows} data rows`),
  importRowsInvalid: (count: number | string = 'N') =>
    e('IMPORT_ROWS_INVALID', 422, `Import failed: ${count} errors`, {
      summary: 'Rows with invalid values or unknown references (listed in `errors`)',
    }),
  importDuplicates: (count: number | string = 'N') =>
    e('IMPORT_DUPLICATES', 409, `Import failed: ${count} duplicates`, {
      summary: 'Names already used in their run, or repeated in the file (listed in `errors`)',
    }),
  importDataChanged: e(
    'IMPORT_DATA_CHANGED',
    409,
    'Import failed: the data changed during the import; nothing was imported',
    {
      body: { errors: [], imported: 0 },
    },
  ),
  importNamesTaken: e(
    'IMPORT_NAMES_TAKEN',
    409,
    'Import failed: trackers with these names were created concurrently; nothing was imported',
    {
      body: { errors: [], imported: 0 },
    },
  ),
} as const;
