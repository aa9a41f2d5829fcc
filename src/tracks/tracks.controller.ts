import { Controller, Get, Logger, Query, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiProduces, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { Access } from '../common/auth/access.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { PRODUCTION_RUN_ERRORS } from '../production-runs/production-runs.errors.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { RunPositionsQuery } from './dto/positions.query.js';
import { RunPositionsResponse } from './dto/run-positions.response.js';
import { TrackQuery } from './dto/track.query.js';
import { TRACK_CONTENT_TYPES, TRACK_FORMATS, trackText } from './track-formats.js';
import { TracksService } from './tracks.service.js';

/** A client that accepts nothing for this long is treated as gone. */
const STREAM_STALL_TIMEOUT_MS = 60_000;

const TRACK_FEATURE_COLLECTION = {
  type: 'object',
  required: ['type', 'features'],
  description:
    'The first Feature is the LineString of the kept reports ([longitude, latitude]; `geometry` null with fewer than 2) with ' +
    '`properties {tracker_id, tracker_name, point_count, source_point_count, start, end, timestamps}`; then a Point per status ' +
    'entry with a located location (`{kind:"status", status, timestamp, location_type, location_name}`) and per visit ' +
    '(`{kind:"visit", location_type, location_name, entered_at, exited_at, confirmed}`).',
  properties: {
    type: { type: 'string', enum: ['FeatureCollection'] },
    features: { type: 'array', items: { type: 'object' } },
  },
};

@ApiTags('maps')
@ApiExtraModels(RunPositionsResponse)
@Controller()
@Access('admin', 'user')
export class TracksController {
  private readonly logger = new Logger(TracksController.name);

  constructor(private readonly tracks: TracksService) {}

  @Get('trackers/:id/track')
  @ApiOperation({
    summary: "A tracker's route as GeoJSON, GPX 1.1 or KML 2.2",
    description:
      "The tracker's eligible reports in (timestamp, id) order between `start` and `end`, simplified with Douglas–Peucker " +
      '(`simplify_m`, metres; the first and last report and those that opened or closed a visit are always kept), with status ' +
      'and visit markers. GPX: one trk/trkseg of trkpt with time, and a wpt per located status entry. KML: a Placemark with ' +
      'gx:Track (when + gx:coord), then a Placemark per located status entry and per visit. Read from a cursor: memory does not ' +
      'grow with the track.',
  })
  @ApiProduces(...TRACK_FORMATS.map((format) => TRACK_CONTENT_TYPES[format]))
  @ApiOkResponse({
    description: 'The track in the requested format',
    content: {
      [TRACK_CONTENT_TYPES.geojson]: { schema: TRACK_FEATURE_COLLECTION },
      [TRACK_CONTENT_TYPES.gpx]: { schema: { type: 'string', description: 'GPX 1.1 document' } },
      [TRACK_CONTENT_TYPES.kml]: { schema: { type: 'string', description: 'KML 2.2 document' } },
    },
  })
  @ApiErrors(
    TRACKER_ERRORS.trackerNotFound,
    { ...ERRORS.invalidField('format', 'must be one of geojson, gpx, kml'), summary: 'Bad format, window or limits' },
    ERRORS.invalidField('start', 'must not be after end'),
    ERRORS.invalidField(
      'max_points',
      'the track has more than 10000 points after simplification with simplify_m=5: ask for a narrower window (start, end), a larger simplify_m, or a larger max_points (at most 50000)',
    ),
  )
  async track(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: TrackQuery,
    @Res() res: Response,
  ): Promise<void> {
    const doc = await this.tracks.track(
      scope,
      id,
      { start: query.start ?? null, end: query.end ?? null },
      { simplifyM: query.simplify_m, maxPoints: query.max_points },
    );
    res.status(200);
    res.setHeader('Content-Type', `${TRACK_CONTENT_TYPES[query.format]}; charset=utf-8`);
    res.setHeader('Content-Disposition', `inline; filename="tracker_${id}_track.${query.format}"`);
    res.setTimeout(STREAM_STALL_TIMEOUT_MS);
    try {
      await pipeline(Readable.from(trackText(query.format, doc), { objectMode: false }), res);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw error;
      this.logger.warn(`track of tracker ${id}: client went away, stream stopped`);
    }
  }

  @Get('production-runs/:id/positions')
  @ApiOperation({
    summary: 'Latest positions of the visible trackers of a run (GeoJSON points for a map)',
    description:
      'One Point per visible tracker of the run that has a latest location, by tracker id; `status` filters by state.',
  })
  @ApiProduces(TRACK_CONTENT_TYPES.geojson)
  @ApiOkResponse({
    content: { [TRACK_CONTENT_TYPES.geojson]: { schema: { $ref: getSchemaPath(RunPositionsResponse) } } },
  })
  @ApiErrors(PRODUCTION_RUN_ERRORS.productionRunNotFound, {
    ...ERRORS.invalidField('status', 'must be one or more of CREATED, IN_TRANSIT, IN_STORAGE, DELIVERED'),
    summary: 'Bad id or status',
  })
  async positions(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Query() query: RunPositionsQuery,
    @Res() res: Response,
  ): Promise<void> {
    const body: RunPositionsResponse = await this.tracks.runPositions(scope, id, query.status);
    res.status(200).type(TRACK_CONTENT_TYPES.geojson).send(JSON.stringify(body));
  }
}
