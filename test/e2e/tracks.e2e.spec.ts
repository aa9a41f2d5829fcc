import { gpx, kml } from '@tmcw/togeojson';
import { DOMParser } from '@xmldom/xmldom';
import type { TestApp } from '../support/app.js';
import { at, createGeofenceWorld, FAR, IN_D, north, ORIGIN, sendTimeline, settled } from '../support/geofences.js';
import type { TrackerWorld } from '../support/trackers.js';

/**
 * GET /trackers/{id}/track in its three formats and GET /production-runs/{id}/positions, on a
 * tracker whose visits and automatic status entries the geofence worker made from its reports.
 */
const east = (metres: number, from: { latitude: number; longitude: number }) => ({
  latitude: from.latitude,
  longitude: from.longitude + metres / (111_195 * Math.cos((from.latitude * Math.PI) / 180)),
});

/** Eligible reports of the tracker: [minute, where]. */
const ROUTE: [number, { latitude: number; longitude: number }][] = [
  [1, FAR],
  [4, east(3000, north(-30_000))],
  [7, north(-10_000)],
  [10, ORIGIN], // opens the storage visit at S
  [20, east(100, ORIGIN)],
  [50, ORIGIN], // 40 min inside: confirmed, IN_STORAGE at minute 10
  [60, north(5000)], // closes it; IN_TRANSIT
  [70, east(2000, north(10_000))],
  [80, north(15_000)],
  [90, IN_D], // opens the delivery visit (dwell 0): DELIVERED
  [100, IN_D],
];
const TIMES = ROUTE.map(([minute]) => at(minute));

interface Feature {
  geometry: { type: string; coordinates: number[] | number[][] } | null;
  properties: Record<string, unknown>;
}

function xml(text: string) {
  return new DOMParser().parseFromString(text, 'text/xml') as unknown as Parameters<typeof gpx>[0];
}

describe('Tracks and run positions', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let S: { id: number; name: string };
  let D: { id: number; name: string };
  let tracker: { id: number; name: string };
  let url: string;

  beforeAll(async () => {
    ({ t, w, S, D } = await createGeofenceWorld());
    tracker = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    url = `/api/v1/trackers/${tracker.id}/track`;
    await sendTimeline(t, w.ingest, tracker.id, [
      ...ROUTE,
      [30, ORIGIN, { confidence: 1 }], // low confidence: stored, never on the track
      [35, { latitude: 30, longitude: 100 }], // manufacturing region: the same
    ]);
    await settled(t);
  });
  afterAll(() => t.close());

  const get = (query = '', auth = w.admin.auth) => t.http().get(`${url}${query}`).set(auth);

  it('GeoJSON: the eligible reports as a LineString, then the located status entries and the visits', async () => {
    const res = await get().expect(200);
    expect(res.headers['content-type']).toBe('application/geo+json; charset=utf-8');
    const body = JSON.parse(res.text) as { type: string; features: Feature[] };
    expect(body.type).toBe('FeatureCollection');
    const [line, ...markers] = body.features;
    expect(line.geometry).toEqual({
      type: 'LineString',
      coordinates: ROUTE.map(([, where]) => [where.longitude, where.latitude]),
    });
    expect(line.properties).toEqual({
      tracker_id: tracker.id,
      tracker_name: tracker.name,
      point_count: ROUTE.length,
      source_point_count: ROUTE.length,
      start: at(1),
      end: at(100),
      timestamps: TIMES,
    });
    expect(markers).toEqual([
      {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [ORIGIN.longitude, ORIGIN.latitude] },
        properties: {
          kind: 'status',
          status: 'IN_STORAGE',
          timestamp: at(10),
          location_type: 'storage',
          location_name: S.name,
        },
      },
      {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [IN_D.longitude, IN_D.latitude] },
        properties: {
          kind: 'status',
          status: 'DELIVERED',
          timestamp: at(90),
          location_type: 'delivery',
          location_name: D.name,
        },
      },
      {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [ORIGIN.longitude, ORIGIN.latitude] },
        properties: {
          kind: 'visit',
          location_type: 'storage',
          location_name: S.name,
          entered_at: at(10),
          exited_at: at(60),
          confirmed: true,
        },
      },
      {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [IN_D.longitude, IN_D.latitude] },
        properties: {
          kind: 'visit',
          location_type: 'delivery',
          location_name: D.name,
          entered_at: at(90),
          exited_at: null,
          confirmed: true,
        },
      },
    ]);
  });

  it('GPX 1.1 and KML 2.2 parse back (togeojson) to the GeoJSON points, times and status markers', async () => {
    const geo = JSON.parse((await get('?simplify_m=500').expect(200)).text) as { features: Feature[] };
    const [line, ...markers] = geo.features;
    const statuses = markers.filter((m) => m.properties.kind === 'status');
    const visits = markers.filter((m) => m.properties.kind === 'visit');

    const gpxRes = await get('?format=gpx&simplify_m=500').expect(200);
    expect(gpxRes.headers['content-type']).toBe('application/gpx+xml; charset=utf-8');
    const fromGpx = gpx(xml(gpxRes.text)).features as Feature[];
    const track = fromGpx.find((f) => f.geometry?.type === 'LineString')!;
    expect(track.geometry!.coordinates).toEqual(line.geometry!.coordinates);
    expect((track.properties.coordinateProperties as { times: string[] }).times).toEqual(line.properties.timestamps);
    const waypoints = fromGpx.filter((f) => f.geometry?.type === 'Point');
    expect(waypoints.map((p) => [p.geometry!.coordinates, p.properties.time])).toEqual(
      statuses.map((s) => [s.geometry!.coordinates, s.properties.timestamp]),
    );

    const kmlRes = await get('?format=kml&simplify_m=500').expect(200);
    expect(kmlRes.headers['content-type']).toBe('application/vnd.google-earth.kml+xml; charset=utf-8');
    const fromKml = kml(xml(kmlRes.text)).features as Feature[];
    const kmlTrack = fromKml.find((f) => f.geometry?.type === 'LineString')!;
    // gx:coord carries an altitude of 0.
    expect(kmlTrack.geometry!.coordinates).toEqual(
      (line.geometry!.coordinates as number[][]).map(([lon, lat]) => [lon, lat, 0]),
    );
    expect((kmlTrack.properties.coordinateProperties as { times: string[] }).times).toEqual(line.properties.timestamps);
    const placemarks = fromKml.filter((f) => f.geometry?.type === 'Point');
    expect(placemarks.map((p) => [p.geometry!.coordinates, p.properties.timestamp])).toEqual([
      ...statuses.map((s) => [s.geometry!.coordinates, s.properties.timestamp]),
      ...visits.map((v) => [v.geometry!.coordinates, v.properties.entered_at]),
    ]);
  });

  it('simplify_m keeps the first and last report and those that opened and closed a visit', async () => {
    const body = JSON.parse((await get('?simplify_m=10000').expect(200)).text) as { features: Feature[] };
    expect(body.features[0].properties).toMatchObject({
      point_count: 5,
      source_point_count: ROUTE.length,
      timestamps: [at(1), at(10), at(60), at(90), at(100)],
    });
  });

  it('start and end bound the reports and the status entries; visits that overlap the window stay', async () => {
    const body = JSON.parse(
      (await get(`?start=${encodeURIComponent(at(20))}&end=${encodeURIComponent(at(80))}`).expect(200)).text,
    ) as { features: Feature[] };
    const [line, ...markers] = body.features;
    expect(line.properties.timestamps).toEqual([at(20), at(50), at(60), at(70), at(80)]);
    expect(markers.map((m) => [m.properties.kind, m.properties.location_name])).toEqual([['visit', S.name]]);
  });

  it('with fewer than two points the line has no geometry', async () => {
    const one = JSON.parse((await get(`?start=${encodeURIComponent(at(100))}`).expect(200)).text);
    expect(one.features[0].geometry).toBeNull();
    expect(one.features[0].properties).toMatchObject({ point_count: 1, start: at(100), end: at(100) });
    const empty = await t.factories.tracker({ runId: w.runA.id });
    const none = JSON.parse((await t.http().get(`/api/v1/trackers/${empty.id}/track`).set(w.admin.auth)).text);
    expect(none.features).toEqual([
      {
        type: 'Feature',
        geometry: null,
        properties: {
          tracker_id: empty.id,
          tracker_name: expect.any(String),
          point_count: 0,
          source_point_count: 0,
          start: null,
          end: null,
          timestamps: [],
        },
      },
    ]);
  });

  it('more points than max_points → 422 with the advice; bad values → 422', async () => {
    const over = await get('?max_points=4').expect(422);
    expect(over.body.detail).toBe(
      'Validation failed: max_points: the track has more than 4 points: ask for a narrower window (start, end), a larger simplify_m, or a larger max_points (at most 50000)',
    );
    await get('?max_points=5&simplify_m=10000').expect(200);
    const cases: [string, string][] = [
      ['?format=shp', 'format: must be one of geojson, gpx, kml'],
      [`?start=${encodeURIComponent(at(50))}&end=${encodeURIComponent(at(10))}`, 'start: must not be after end'],
      ['?simplify_m=-1', 'simplify_m: must be a number from 0 to 10000'],
      ['?simplify_m=10001', 'simplify_m: must be a number from 0 to 10000'],
      ['?simplify_m=1e3', 'simplify_m: must be a number from 0 to 10000'],
      ['?max_points=1', 'max_points: must be an integer from 2 to 50000'],
      ['?max_points=50001', 'max_points: must be an integer from 2 to 50000'],
      ['?start=yesterday', 'start: '],
    ];
    for (const [query, detail] of cases) {
      const res = await get(query);
      expect([query, res.status]).toEqual([query, 422]);
      expect(res.body.detail).toContain(`Validation failed: ${detail}`);
    }
  });

  it('is scoped like the tracker: invisible and missing trackers are 404', async () => {
    await get('', w.userA.auth).expect(200);
    const theirs = await t.factories.tracker({ runId: w.runB.id });
    const res = await t.http().get(`/api/v1/trackers/${theirs.id}/track`).set(w.userA.auth).expect(404);
    expect(res.body).toEqual({ detail: 'Tracker not found' });
    await t.http().get('/api/v1/trackers/2147483000/track').set(w.admin.auth).expect(404);
  });

  it('run positions: one Point per visible tracker of the run with a latest location, filtered by status', async () => {
    const res = await t.http().get(`/api/v1/production-runs/${w.runA.id}/positions`).set(w.userA.auth).expect(200);
    expect(res.headers['content-type']).toBe('application/geo+json; charset=utf-8');
    expect(JSON.parse(res.text)).toEqual({
      type: 'FeatureCollection',
      features: [
        {
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [IN_D.longitude, IN_D.latitude] },
          properties: {
            tracker_id: tracker.id,
            tracker_name: tracker.name,
            status: 'DELIVERED',
            timestamp: '2026-06-01T01:00:00.000Z',
            reported_at: at(100),
            delivery_location_name: D.name,
          },
        },
      ],
    });
    const filtered = await t
      .http()
      .get(`/api/v1/production-runs/${w.runA.id}/positions?status=IN_TRANSIT,CREATED`)
      .set(w.userA.auth)
      .expect(200);
    expect(JSON.parse(filtered.text).features).toEqual([]);
    await t.http().get(`/api/v1/production-runs/${w.runA.id}/positions?status=LOST`).set(w.userA.auth).expect(422);
    const hidden = await t.http().get(`/api/v1/production-runs/${w.runB.id}/positions`).set(w.userA.auth).expect(404);
    expect(hidden.body).toEqual({ detail: 'Production run not found' });
  });
});
