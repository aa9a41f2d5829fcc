import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { found } from '../common/errors/domain-error.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { PRODUCTION_RUN_ERRORS } from '../production-runs/production-runs.errors.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import type { TrackerStatus } from '../tracker-states/tracker-status.js';
import type { RunPositionsResponse } from './dto/run-positions.response.js';
import type { TrackDocument } from './track-formats.js';
import { TrackSimplifier } from './track-simplifier.js';
import { TracksRepository, type TrackWindow } from './tracks.repository.js';

/** Reports fetched from the cursor per round trip. */
const CURSOR_BATCH = 5000;

export interface TrackOptions {
  simplifyM: number;
  maxPoints: number;
}

/**
 * Tracks of trackers and positions of runs. A track is read from a cursor through the streaming
 * simplifier: memory holds one cursor batch, one simplification window and the kept points (at
 * most `max_points`), whatever the track's length. Nothing is answered before the whole track is
 * read, so a track with too many points is a clean 422, never a cut-off download.
 */
@Injectable()
export class TracksService {
  constructor(private readonly tracks: TracksRepository) {}

  async track(
    scope: AccessScope,
    trackerId: number,
    window: TrackWindow,
    options: TrackOptions,
  ): Promise<TrackDocument> {
    if (window.start && window.end && window.start.getTime() > window.end.getTime())
      throw RequestValidationException.field('start', 'must not be after end');
    const read = found(await this.tracks.openTrack(scope, trackerId, window), TRACKER_ERRORS.trackerNotFound);
    try {
      const simplifier = new TrackSimplifier(options.simplifyM, options.maxPoints);
      reading: for await (const batch of read.reports(CURSOR_BATCH)) {
        for (const [longitude, latitude, time, fixed] of batch)
          if (!simplifier.push(longitude, latitude, time, fixed)) break reading;
      }
      if (!simplifier.finish()) throw tooManyPoints(options);
      return {
        trackerId: read.tracker.id,
        trackerName: read.tracker.name,
        sourcePointCount: simplifier.sourceCount,
        points: simplifier.kept,
        statuses: read.statuses,
        visits: read.visits,
      };
    } finally {
      await read.close();
    }
  }

  async runPositions(scope: AccessScope, runId: number, statuses?: TrackerStatus[]): Promise<RunPositionsResponse> {
    const rows = await this.tracks.runPositions(scope, runId, statuses);
    // An empty answer may be an invisible run: only then is the run looked up.
    if (rows.length === 0 && !(await this.tracks.runVisible(scope, runId)))
      found(null, PRODUCTION_RUN_ERRORS.productionRunNotFound);
    return {
      type: 'FeatureCollection',
      features: rows.map((row) => ({
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [Number(row.longitude), Number(row.latitude)] },
        properties: {
          tracker_id: row.tracker_id,
          tracker_name: row.tracker_name,
          status: row.status as TrackerStatus,
          timestamp: row.timestamp,
          reported_at: row.reported_at,
          delivery_location_name: row.delivery_location_name,
        },
      })),
    };
  }
}

export function tooManyPoints(options: TrackOptions): RequestValidationException {
  return RequestValidationException.field(
    'max_points',
    `the track has more than ${options.maxPoints} points` +
      (options.simplifyM > 0 ? ` after simplification with simplify_m=${options.simplifyM}` : '') +
      ': ask for a narrower window (start, end), a larger simplify_m, or a larger max_points (at most 50000)',
  );
}
