import { GeofenceGrid } from '../../src/geofences/geofence-grid.js';
import type { StartRow, VisitJson } from '../../src/geofences/geofence-inputs.repository.js';
import { planStart } from '../../src/geofences/geofence-pass.js';
import { EXIT_FACTOR, haversineM, type Geofence } from '../../src/geofences/geofence-replay.js';

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

describe('geofence grid: the candidates of a report', () => {
  it('include every geofence the report is not outside of, wherever it lies (poles, antimeridian, huge radii)', () => {
    const next = random(42);
    const fences: Geofence[] = [];
    for (let id = 1; id <= 400; id++) {
      // Clusters near the poles and the antimeridian, radii from 10 m to 100 km.
      const latitude = id % 10 === 0 ? 89.9 - next() * 0.5 : -90 + next() * 180;
      const longitude = id % 7 === 0 ? 179.95 + next() * 0.1 - (next() < 0.5 ? 360 : 0) : -180 + next() * 360;
      fences.push({
        type: id % 2 ? 'storage' : 'delivery',
        id,
        latitude: Math.min(90, latitude),
        longitude: Math.max(-180, Math.min(180, longitude)),
        radiusM: id % 13 === 0 ? 100_000 : 10 + Math.round(next() * 5000),
        dwellMinutes: 0,
      });
    }
    const grid = new GeofenceGrid(fences);
    let near = 0;
    const missed: unknown[] = [];
    for (let i = 0; i < 5000; i++) {
      // Half the reports close to some geofence (within 2.2 radii), half anywhere.
      const f = fences[Math.floor(next() * fences.length)];
      const close = i % 2 === 0;
      const bearing = next() * 2 * Math.PI;
      const metres = next() * 2.2 * f.radiusM;
      let latitude = close ? f.latitude + (metres * Math.cos(bearing)) / 111_195 : -90 + next() * 180;
      let longitude = close
        ? f.longitude +
          (metres * Math.sin(bearing)) / (111_195 * Math.max(0.01, Math.cos((f.latitude * Math.PI) / 180)))
        : -180 + next() * 360;
      latitude = Math.max(-90, Math.min(90, latitude));
      longitude = ((((longitude + 180) % 360) + 360) % 360) - 180;
      const accuracy = next() * 3000;
      const candidates = new Set(grid.candidates(latitude, longitude).map((c) => c.id));
      for (const fence of fences) {
        const d = haversineM(latitude, longitude, fence.latitude, fence.longitude);
        const notOutside = d - Math.min(accuracy, fence.radiusM) <= EXIT_FACTOR * fence.radiusM;
        if (notOutside) near++;
        if (notOutside && !candidates.has(fence.id)) missed.push({ report: [latitude, longitude], accuracy, fence });
      }
    }
    expect(missed).toEqual([]);
    expect(near).toBeGreaterThan(1200);
  });

  it('lists a report only the geofences of its cell, not every location', () => {
    const fences: Geofence[] = Array.from({ length: 1000 }, (_, i) => ({
      type: 'storage',
      id: i + 1,
      latitude: 36 + (i % 40) * 0.6,
      longitude: -10 + Math.floor(i / 40) * 1.6,
      radiusM: 2000,
      dwellMinutes: 0,
    }));
    const grid = new GeofenceGrid(fences);
    expect(grid.candidates(36, -10).map((f) => f.id)).toEqual([1]);
    expect(grid.candidates(37.3, -9)).toEqual([]);
  });
});

describe('geofence pass: where a tracker replay starts', () => {
  const visit = (id: string, entered: number, last: number, exited: number | null): VisitJson => [
    id,
    1,
    null,
    String(entered),
    String(last),
    exited === null ? null : String(exited),
    1,
    false,
  ];
  const row = (over: Partial<StartRow>): StartRow => ({
    tracker_id: 7,
    last_us: '1000',
    last_report_id: '55',
    resume: false,
    latest: null,
    cut_us: null,
    before: null,
    ...over,
  });

  it('resumes after the last report taken into account, with the open visit', () => {
    const open = visit('9', 900, 1000, null);
    expect(planStart(row({ resume: true, latest: open }))).toMatchObject({
      mode: 'resume',
      lowUs: '1000',
      lowId: '55',
      cutUs: '1000',
      inclusive: true,
      open,
    });
    expect(planStart(row({ resume: true, latest: visit('9', 900, 950, 1000) })).open).toBeNull();
  });

  it('rewinds to the latest visit entered at or before the change; the visit before is reopened when it was left at that time', () => {
    expect(planStart(row({ cut_us: '500', before: null }))).toMatchObject({
      mode: 'rewind',
      lowUs: '500',
      lowId: '0',
      cutUs: '500',
      inclusive: false,
      open: null,
    });
    expect(planStart(row({ cut_us: '500', before: visit('3', 100, 300, 400) }))).toMatchObject({
      mode: 'rewind',
      open: null,
    });
    const left = visit('3', 100, 300, 500);
    expect(planStart(row({ cut_us: '500', before: left }))).toMatchObject({ mode: 'rewind', open: left });
  });

  it('replays from the beginning when the stored rows do not describe the state at the cut', () => {
    // The visit before was also seen at the cut's own timestamp: its count and sighting at the cut are not known.
    expect(planStart(row({ cut_us: '500', before: visit('3', 100, 500, 500) })).mode).toBe('full');
    // No visit began at or before the change.
    expect(planStart(row({ cut_us: null })).mode).toBe('full');
  });
});
