import { catalogueError as e } from './catalogue-error.js';

/**
 * Errors of the stored resources: missing or invisible (404 — a resource outside the caller's
 * client_list answers exactly like a missing one), name conflicts and references that block a
 * delete (409), and the errors of uploads and imports.
 */
export const RESOURCE_ERRORS = {
  clientNotFound: e('CLIENT_NOT_FOUND', 404, 'Client not found', {
    summary: "Missing, or not in the caller's client_list",
  }),
  brandNotFound: e('BRAND_NOT_FOUND', 404, 'Brand not found', {
    summary: "Missing, or of a client not in the caller's client_list",
  }),
  productionRunNotFound: e('PRODUCTION_RUN_NOT_FOUND', 404, 'Production run not found', {
    summary: "Missing, or of a client not in the caller's client_list",
  }),
  trackerNotFound: e('TRACKER_NOT_FOUND', 404, 'Tracker not found', {
    summary: "Missing, or of a client not in the caller's client_list",
  }),
  storageLocationNotFound: e('STORAGE_LOCATION_NOT_FOUND', 404, 'Storage location not found'),
  deliveryLocationNotFound: e('DELIVERY_LOCATION_NOT_FOUND', 404, 'Delivery location not found'),
  imageNotFound: e('IMAGE_NOT_FOUND', 404, 'Image not found'),
  notificationNotFound: e('NOTIFICATION_NOT_FOUND', 404, 'Notification not found', {
    summary: "Missing, or another user's",
  }),

  clientExists: (name = 'NAME') => e('CLIENT_EXISTS', 409, `Client '${name}' already exists`),
  brandExists: (name = 'NAME', clientId: number | string = 'ID') =>
    e('BRAND_EXISTS', 409, `Brand '${name}' already exists for client ${clientId}`),
  trackerExists: (name = 'NAME', runId: number | string = 'ID') =>
    e('TRACKER_EXISTS', 409, `Tracker '${name}' already exists in production run ${runId}`),
  /** A delete refused while other rows point at the resource: "Brand is still referenced by production runs". */
  stillReferencedBy: (resource = 'Resource', what = 'other resources') =>
    e('STILL_REFERENCED_BY', 409, `${resource} is still referenced by ${what}`),

  invalidFileType: (allowed = 'image/jpeg, image/png, image/gif, image/webp, image/svg+xml') =>
    e('INVALID_FILE_TYPE', 400, `Invalid file type. Allowed types: ${allowed}`, {
      summary: 'Type not accepted, content not of the declared type, undecodable/truncated, or over 100 megapixels',
    }),
  /** An uploaded file over its route's limit, the limit written for people ("10 MB"). */
  fileOverLimit: (limit = '10 MB') => e('FILE_OVER_LIMIT', 413, `File too large. Maximum size is ${limit}`),
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
  analyticsFailed: e('ANALYTICS_FAILED', 500, 'Analytics calculation failed'),
} as const;
