import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import {
  CsvFormatError,
  CsvTooManyRowsError,
  IMPORT_MAX_ROWS,
  parseTrackerCsv,
  type CsvRowError,
  type CsvTrackerRow,
} from './csv/tracker-csv.js';
import type { ImportTrackersQuery } from './dto/list-trackers.query.js';
import type { ImportDuplicate, ImportResultResponse } from './dto/tracker.response.js';
import { Db } from '../infrastructure/database/db.js';
import { isUniqueViolation } from '../infrastructure/database/sql-state.js';
import { DEVICE_ID_INDEX } from './tracker-rules.js';
import { pairKey, TrackerBulkRepository } from './tracker-bulk.repository.js';
import { TrackerReferencesRepository } from './tracker-references.repository.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { DomainError } from '../common/errors/domain-error.js';
import { type CatalogueError } from '../common/errors/error-catalogue.js';
import { PLACE_ERRORS } from '../places/places.errors.js';
import { PRODUCTION_RUN_ERRORS } from '../production-runs/production-runs.errors.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';

/** A 422/409 lists at most this many rows (the count in `detail` is always the full one). */
const MAX_LISTED_PROBLEMS = 1000;

/**
 * `POST /trackers/import-csv` (see docs/api.md): parse and validate every row, check runs, locations
 * and duplicates set-based, then insert everything in one transaction — or nothing.
 */
@Injectable()
export class TrackerImportService {
  constructor(
    private readonly db: Db,
    private readonly bulk: TrackerBulkRepository,
    private readonly references: TrackerReferencesRepository,
    private readonly invalidation: CacheInvalidation,
  ) {}

  async import(scope: AccessScope, file: Buffer, options: ImportTrackersQuery): Promise<ImportResultResponse> {
    const { rows, errors } = await this.parse(file);

    for (const row of rows) {
      if (row.productionRunId === null && options.production_run_id === undefined) {
        errors.push({
          row: row.row,
          field: 'production_run_id',
          message: 'is required (no value in the row and no production_run_id query parameter)',
        });
      }
      row.productionRunId ??= options.production_run_id ?? null;
    }
    await this.checkReferences(scope, rows, errors);
    // Duplicates first: a duplicate row is skipped or answered as a duplicate (409), never imported,
    // so its device id (often the very tracker's it repeats) is not checked.
    const duplicates = await this.findDuplicates(
      scope,
      rows.filter((row) => row.productionRunId !== null),
    );
    const duplicateRows = new Set(duplicates.map((d) => d.row));
    const toInsert = rows.filter((row) => !duplicateRows.has(row.row));
    await this.checkDeviceIds(toInsert, errors);
    if (errors.length > 0) throw importFailure(TRACKER_ERRORS.importRowsInvalid(errors.length), errors);

    if (duplicates.length > 0 && !options.skip_duplicates) {
      throw importFailure(
        TRACKER_ERRORS.importDuplicates(duplicates.length),
        duplicates.map((d) => ({
          row: d.row,
          field: 'name',
          message: `${TRACKER_ERRORS.trackerExists(d.name, d.production_run_id).detail}${d.inFile ? ` (repeated in the file)` : ''}`,
        })),
      );
    }

    if (!options.dry_run && toInsert.length > 0) {
      await this.insert(scope, toInsert);
      await this.invalidation.trackersChanged([...new Set(toInsert.map((row) => row.productionRunId as number))]);
    }
    return {
      imported: toInsert.length,
      skipped: duplicates.length,
      duplicates: duplicates.map(({ row, name, production_run_id }) => ({ row, name, production_run_id })),
      errors: [],
    };
  }

  private async parse(file: Buffer): Promise<{ rows: CsvTrackerRow[]; errors: CsvRowError[] }> {
    try {
      return await parseTrackerCsv(file);
    } catch (error) {
      if (error instanceof CsvTooManyRowsError) throw new DomainError(TRACKER_ERRORS.csvTooManyRows(IMPORT_MAX_ROWS));
      if (error instanceof CsvFormatError) throw new DomainError(TRACKER_ERRORS.csvInvalid(error.message));
      throw error;
    }
  }

  /** Runs must exist and be visible; locations must exist. Three set-based queries. */
  private async checkReferences(scope: AccessScope, rows: CsvTrackerRow[], errors: CsvRowError[]): Promise<void> {
    const distinct = (pick: (row: CsvTrackerRow) => number | null) => [
      ...new Set(rows.map(pick).filter((id): id is number => id !== null)),
    ];
    const [runs, deliveries, storages] = await Promise.all([
      this.references.visibleRunIds(
        scope,
        distinct((r) => r.productionRunId),
      ),
      this.references.existingLocationIds(
        'delivery',
        distinct((r) => r.deliveryLocationId),
      ),
      this.references.existingLocationIds(
        'storage',
        distinct((r) => r.storageLocationId),
      ),
    ]);
    for (const row of rows) {
      if (row.productionRunId !== null && !runs.has(row.productionRunId)) {
        errors.push({
          row: row.row,
          field: 'production_run_id',
          message: PRODUCTION_RUN_ERRORS.productionRunNotFound.detail,
        });
      }
      if (row.deliveryLocationId !== null && !deliveries.has(row.deliveryLocationId)) {
        errors.push({
          row: row.row,
          field: 'delivery_location_id',
          message: PLACE_ERRORS.deliveryLocationNotFound.detail,
        });
      }
      if (row.storageLocationId !== null && !storages.has(row.storageLocationId)) {
        errors.push({
          row: row.row,
          field: 'storage_location_id',
          message: PLACE_ERRORS.storageLocationNotFound.detail,
        });
      }
    }
    errors.sort((a, b) => a.row - b.row);
  }

  /**
   * A device id already held by a tracker, or repeated among the rows to import (every occurrence
   * after the first): a row error on device_id (device ids are unique among all trackers; such a
   * row is never skipped).
   */
  private async checkDeviceIds(rows: CsvTrackerRow[], errors: CsvRowError[]): Promise<void> {
    const first = new Map<string, number>();
    for (const row of rows) if (row.deviceId !== null && !first.has(row.deviceId)) first.set(row.deviceId, row.row);
    const stored = await this.bulk.existingDeviceIds([...first.keys()]);
    for (const row of rows) {
      if (row.deviceId === null) continue;
      const repeated = first.get(row.deviceId) !== row.row;
      if (!repeated && !stored.has(row.deviceId)) continue;
      const detail = TRACKER_ERRORS.deviceIdInUse(row.deviceId).detail;
      errors.push({
        row: row.row,
        field: 'device_id',
        message: repeated ? `${detail} (repeated in the file)` : detail,
      });
    }
    errors.sort((a, b) => a.row - b.row);
  }

  /** A (name, run) pair repeated in the file (every occurrence after the first) or already stored. */
  private async findDuplicates(
    scope: AccessScope,
    rows: CsvTrackerRow[],
  ): Promise<(ImportDuplicate & { inFile: boolean })[]> {
    const firstSeen = new Set<string>();
    const firsts: CsvTrackerRow[] = [];
    const inFile = new Set<number>();
    for (const row of rows) {
      const key = pairKey(row.productionRunId as number, row.name);
      if (firstSeen.has(key)) inFile.add(row.row);
      else {
        firstSeen.add(key);
        firsts.push(row);
      }
    }
    const stored = await this.bulk.existingPairs(
      scope,
      firsts.map((row) => ({ productionRunId: row.productionRunId as number, name: row.name })),
    );
    return rows
      .filter((row) => inFile.has(row.row) || stored.has(pairKey(row.productionRunId as number, row.name)))
      .map((row) => ({
        row: row.row,
        name: row.name,
        production_run_id: row.productionRunId as number,
        inFile: inFile.has(row.row),
      }));
  }

  private async insert(scope: AccessScope, rows: CsvTrackerRow[]): Promise<void> {
    try {
      await this.db.transaction(async () => {
        const inserted = await this.bulk.insertMany(
          scope,
          rows.map((row) => ({
            name: row.name,
            productionRunId: row.productionRunId as number,
            status: row.status,
            storageLocationId: row.storageLocationId,
            deliveryLocationId: row.deliveryLocationId,
            notes: row.notes,
            deviceId: row.deviceId,
          })),
          scope.userId,
          'import',
        );
        // A run that became invisible since validation: refuse rather than import part of the file.
        if (inserted !== rows.length) throw new DomainError(TRACKER_ERRORS.importDataChanged);
      });
    } catch (error) {
      // A device id taken concurrently since it was checked.
      if (isUniqueViolation(error, DEVICE_ID_INDEX)) throw new DomainError(TRACKER_ERRORS.importDataChanged);
      if (isUniqueViolation(error)) {
        throw new DomainError(TRACKER_ERRORS.importNamesTaken);
      }
      throw error;
    }
  }
}

function importFailure(error: CatalogueError, errors: CsvRowError[]): DomainError {
  return new DomainError(error, { body: { errors: errors.slice(0, MAX_LISTED_PROBLEMS), imported: 0 } });
}
