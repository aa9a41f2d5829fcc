import { Injectable } from '@nestjs/common';
import { isSerializationConflict } from '../infrastructure/database/sql-state.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { DomainError } from '../common/errors/domain-error.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { ReportActivityUpkeep } from '../alerts/report-activity.port.js';
import { CARRIED_REPORT_FIELDS, GeofenceQueue, type Mark } from '../geofences/geofence-queue.port.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { LocationsRepository, type InsertOutcome } from './locations.repository.js';
import { parseReports, type RejectedReport, type ReportColumns } from './report-batch.js';

/** Response of both report routes (docs/api.md, location reports). */
export interface IngestResult {
  accepted: number;
  duplicates: number;
  rejected: RejectedReport[];
  aggregated: number;
  filtered_low_confidence: number;
  filtered_manufacturing_region: number;
}

const MAX_ATTEMPTS = 3;

const UNKNOWN_TRACKER_DETAIL = 'tracker_id: tracker not found';

/**
 * Location report ingestion: judges each report, stores the valid ones raw and maintains the
 * hourly/daily aggregates in the same statement (see LocationsRepository.insertBatch).
 */
@Injectable()
export class LocationIngestionService {
  constructor(
    private readonly db: Db,
    private readonly repository: LocationsRepository,
    private readonly metrics: MetricsService,
    private readonly geofences: GeofenceQueue,
    private readonly invalidation: CacheInvalidation,
    private readonly activity: ReportActivityUpkeep,
  ) {}

  /**
   * `items` are the request's plain report objects (already checked to be a list of 1..10 000).
   * `pathTrackerId`: the tracker route, where items carry no tracker_id.
   */
  async ingest(scope: AccessScope, items: readonly unknown[], pathTrackerId?: number): Promise<IngestResult> {
    const result = await this.judgeAndStore(scope, items, pathTrackerId);
    this.metrics.recordIngestResult(result);
    return result;
  }

  /** The tracker route: 404 when the tracker does not exist or is not in scope, else `ingest` with it. */
  async ingestForTracker(scope: AccessScope, items: readonly unknown[], trackerId: number): Promise<IngestResult> {
    if (!(await this.repository.trackerVisible(scope, trackerId)))
      throw new DomainError(TRACKER_ERRORS.trackerNotFound);
    return this.ingest(scope, items, trackerId);
  }

  private async judgeAndStore(
    scope: AccessScope,
    items: readonly unknown[],
    pathTrackerId?: number,
  ): Promise<IngestResult> {
    const reports = parseReports(items, { now: Date.now(), pathTrackerId });
    if (reports.index.length === 0) {
      return {
        accepted: 0,
        duplicates: 0,
        rejected: reports.rejected,
        aggregated: 0,
        filtered_low_confidence: 0,
        filtered_manufacturing_region: 0,
      };
    }
    const outcome = await this.insertWithRetry(scope, reports);
    if (outcome.aggregated > 0) this.invalidation.locationsChanged();
    // The replay pass that takes the batch's queue row gets the batch's new eligible reports from here.
    if (outcome.markId !== null && outcome.newEligible)
      this.geofences.carry(outcome.markId, outcome.newEligible, !outcome.skippedStored);
    const known = new Set(outcome.knownTrackerIds);
    const unknownTracker: RejectedReport[] = [];
    for (let i = 0; i < reports.index.length; i++) {
      if (!known.has(reports.trackerId[i]))
        unknownTracker.push({ index: reports.index[i], detail: UNKNOWN_TRACKER_DETAIL });
    }
    // Valid reports of known trackers are either newly stored or duplicates.
    const storable = reports.index.length - unknownTracker.length;
    return {
      accepted: outcome.accepted,
      duplicates: storable - outcome.accepted,
      rejected: mergeByIndex(reports.rejected, unknownTracker),
      aggregated: outcome.aggregated,
      filtered_low_confidence: outcome.filteredLowConfidence,
      filtered_manufacturing_region: outcome.filteredManufacturingRegion,
    };
  }

  /**
   * The batch statement (with the alerts' report-activity step fed by its inserted rows) and the
   * geofence mark of its new eligible reports, in one transaction (the mark last, right before the
   * commit: GeofenceQueue).
   */
  private async insertWithRetry(
    scope: AccessScope,
    reports: ReportColumns,
  ): Promise<InsertOutcome & { markId: string | null }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction(async () => {
          const outcome = await this.repository.insertBatch(scope, reports, this.geofences.enabled, (newReports) =>
            this.activity.step(newReports),
          );
          const markId = outcome.newEligible ? await this.geofences.mark(marksOf(outcome.newEligible)) : null;
          return { ...outcome, markId };
        });
      } catch (error) {
        // Deadlock or serialization failure: the statement is atomic, so running it again is safe.
        if (attempt >= MAX_ATTEMPTS || !isSerializationConflict(error)) throw error;
      }
    }
  }
}

const [TRACKER, TS_US] = [CARRIED_REPORT_FIELDS.indexOf('tracker_id'), CARRIED_REPORT_FIELDS.indexOf('ts_us')];

/** The (tracker, timestamp) of each new eligible report of a batch. */
function* marksOf(rows: Float64Array): Iterable<Mark> {
  for (let o = 0; o < rows.length; o += CARRIED_REPORT_FIELDS.length)
    yield { trackerId: rows[o + TRACKER], fromUs: rows[o + TS_US] };
}

/** Merges two index-ascending lists into one. */
function mergeByIndex(a: RejectedReport[], b: RejectedReport[]): RejectedReport[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out: RejectedReport[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i].index < b[j].index)) out.push(a[i++]);
    else out.push(b[j++]);
  }
  return out;
}
