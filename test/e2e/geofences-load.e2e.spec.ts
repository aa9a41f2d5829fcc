import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GeofenceProcessor } from '../../src/geofences/geofence-processor.service.js';
import { createTestApp, GEOFENCE_ON, type TestApp } from '../support/app.js';
import { referenceReplay, type RefFence, type RefReport } from '../support/geofence-reference.js';
import { at, BASE, M_PER_DEG, settled } from '../support/geofences.js';
import { postReports, report } from '../support/locations.js';
import { trackerWorld, type TrackerWorld } from '../support/trackers.js';

/**
 * A geofence pass over many large, overlapping locations and a full batch of reports never holds
 * the event loop for long: 1 000 storage locations of 100 km radius whose circles all overlap, and
 * 4 000 reports of one tracker in one batch (a fifth of the finding's 2 000 × 10 000 candidate
 * checks, so the suite stays quick; unsliced, this pass still stalls for seconds). The pass ends in the visits and automatic entries of
 * a plain reading of the rules (test/support/geofence-reference.ts), and no stretch of it blocks
 * timers (and so every other request of the instance) for anything near a second.
 * GEOFENCE_LOAD_FIGURES=1 prints the pass's CPU time, longest stall and RSS.
 */

const FENCES = 1000;
const REPORTS = 4_000;
const RADIUS_M = 100_000;
const DWELL_MINUTES = 10;
/** Open Atlantic: far from every other place of the test data. */
const CENTRE = { latitude: 40, longitude: -40 };
/** Generous, so a loaded machine never fails it; a pass that is not sliced stalls for seconds. */
const MAX_STALL_MS = 1000;

/** A deterministic pseudo-random sequence (xorshift), so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) % 1_000_000) / 1_000_000;
  };
}

/** `metres` east and north of a point, on the sphere the service measures on. */
function offset(from: { latitude: number; longitude: number }, east: number, north: number) {
  const latitude = from.latitude + north / M_PER_DEG;
  return { latitude, longitude: from.longitude + east / (M_PER_DEG * Math.cos((latitude * Math.PI) / 180)) };
}

describe('geofences: a pass over many overlapping locations', () => {
  let t: TestApp;
  let w: TrackerWorld;
  const fences: RefFence[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: GEOFENCE_ON });
    w = await trackerWorld(t);
    const next = random(2026);
    const centres = Array.from({ length: FENCES }, () => {
      // Uniform in a disc of 40 km: every circle overlaps every other.
      const [r, bearing] = [40_000 * Math.sqrt(next()), next() * 2 * Math.PI];
      return offset(CENTRE, r * Math.sin(bearing), r * Math.cos(bearing));
    });
    const rows: { id: number; latitude: number; longitude: number }[] = await t.db.query(
      `INSERT INTO storage_locations (name, latitude, longitude, radius_m, dwell_minutes)
       SELECT 'load-' || n, lat, lon, $4, $5 FROM unnest($1::int[], $2::float8[], $3::float8[]) AS u(n, lat, lon)
       RETURNING id, latitude, longitude`,
      [
        centres.map((_, i) => i),
        centres.map((c) => c.latitude),
        centres.map((c) => c.longitude),
        RADIUS_M,
        DWELL_MINUTES,
      ],
    );
    for (const r of rows)
      fences.push({ kind: 'storage', id: r.id, lat: r.latitude, lon: r.longitude, radius: RADIUS_M, dwellMin: 10 });
  });
  afterAll(() => t.close());

  it('is sliced: no stall near a second, an index of one box per location, the result of the rules', async () => {
    const rssStart = process.memoryUsage().rss;
    const trk = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    // Stays of 15 reports a minute apart at one location's centre, every tenth stay 600 km away (every circle
    // holds every other centre, so a visit lasts until the tracker leaves them all).
    const next = random(7);
    const refReports: RefReport[] = [];
    for (let stay = 0; refReports.length < REPORTS; stay++) {
      const far = stay % 10 === 9;
      const f = fences[Math.floor(next() * fences.length)];
      const base = far ? offset(CENTRE, 600_000, 0) : { latitude: f.lat, longitude: f.lon };
      for (let i = 0; i < 15 && refReports.length < REPORTS; i++) {
        const p = offset(base, (next() - 0.5) * 60, (next() - 0.5) * 60);
        const accuracy = next() < 0.3 ? null : Math.round(next() * 200);
        refReports.push({ ms: BASE + (refReports.length + 1) * 60_000, lat: p.latitude, lon: p.longitude, accuracy });
      }
    }
    const batch = refReports.map((r) =>
      report(trk.id, new Date(r.ms).toISOString(), { latitude: r.lat, longitude: r.lon, accuracy_m: r.accuracy }),
    );
    const res = await postReports(t, w.ingest, batch);
    expect(res.status).toBe(200);
    await settled(t, 120_000);

    const expected = referenceReplay(fences, refReports, [{ ms: BASE, status: 'CREATED', storage: null }]);
    expect(expected.visits.filter((v) => v.confirmed).length).toBeGreaterThan(20);
    expect(expected.entries.filter((e) => e.status === 'IN_TRANSIT').length).toBeGreaterThan(8);
    const matchesReference = async () => {
      const visits = await t.db.query(
        `SELECT storage_location_id AS id, (extract(epoch FROM entered_at) * 1000)::float8 AS entered,
                (extract(epoch FROM last_seen_at) * 1000)::float8 AS last,
                (extract(epoch FROM exited_at) * 1000)::float8 AS exited, report_count AS count, confirmed
           FROM geofence_visits WHERE tracker_id = $1 ORDER BY entered_at`,
        [trk.id],
      );
      expect(visits).toEqual(
        expected.visits.map((v) => ({
          id: v.id,
          entered: v.entered,
          last: v.last,
          exited: v.exited,
          count: v.count,
          confirmed: v.confirmed,
        })),
      );
      const entries = await t.db.query(
        `SELECT status, (extract(epoch FROM timestamp) * 1000)::float8 AS ms, storage_location_id AS storage,
                delivery_location_id AS delivery
           FROM tracker_status_history WHERE tracker_id = $1 AND source = 'geofence' ORDER BY timestamp, id`,
        [trk.id],
      );
      expect(entries).toEqual(expected.entries);
    };
    await matchesReference();

    // The same replay again, from the first report, measured: the longest gap of a 10 ms ticker.
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    let [last, longest, rssPeak] = [performance.now(), 0, process.memoryUsage().rss];
    const rssBefore = rssPeak;
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 10);
    histogram.enable();
    const [cpu, started] = [process.cpuUsage(), performance.now()];
    const replayed = await t.app.get(GeofenceProcessor).rebuild({ trackerId: trk.id });
    const used = process.cpuUsage(cpu);
    const [cpuMs, wallMs] = [(used.user + used.system) / 1000, performance.now() - started];
    histogram.disable();
    clearInterval(ticker);
    longest = Math.max(longest, performance.now() - last);
    if (process.env.GEOFENCE_LOAD_FIGURES)
      process.stderr.write(
        `geofence load: wall ${wallMs.toFixed(0)} ms, cpu ${cpuMs.toFixed(0)} ms, longest stall ${longest.toFixed(0)} ms ` +
          `(event-loop delay max ${(histogram.max / 1e6).toFixed(0)} ms), rss ${(rssStart / 2 ** 20).toFixed(0)} at the start, ${(rssBefore / 2 ** 20).toFixed(0)} → ` +
          `${(rssPeak / 2 ** 20).toFixed(0)} MB\n`,
      );
    expect(replayed).toBe(1);
    expect(longest).toBeLessThan(MAX_STALL_MS);
    expect(histogram.max / 1e6).toBeLessThan(MAX_STALL_MS);
    await matchesReference();
  }, 600_000);
});
