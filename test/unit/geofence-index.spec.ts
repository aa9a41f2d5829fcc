import fc from 'fast-check';
import { GeofenceIndex } from '../../src/geofences/geofence-index.js';
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

describe('geofence index: the candidates of a report', () => {
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
    const index = new GeofenceIndex(fences);
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
      const candidates = new Set(index.candidates(latitude, longitude).map((c) => c.id));
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

  it('lists a report only the geofences whose reach holds it, not every location', () => {
    const fences: Geofence[] = Array.from({ length: 1000 }, (_, i) => ({
      type: 'storage',
      id: i + 1,
      latitude: 36 + (i % 40) * 0.6,
      longitude: -10 + Math.floor(i / 40) * 1.6,
      radiusM: 2000,
      dwellMinutes: 0,
    }));
    const index = new GeofenceIndex(fences);
    expect(index.candidates(36, -10).map((f) => f.id)).toEqual([1]);
    expect(index.candidates(37.3, -9)).toEqual([]);
  });
});

/** Whether a report with this accuracy at this position is not outside the geofence (the replay's rule). */
const notOutside = (latitude: number, longitude: number, accuracy: number, fence: Geofence) =>
  haversineM(latitude, longitude, fence.latitude, fence.longitude) - Math.min(accuracy, fence.radiusM) <=
  EXIT_FACTOR * fence.radiusM;

describe('geofence index: against a brute-force check (property)', () => {
  const latitudeArb = fc.oneof(
    fc.double({ min: -90, max: 90, noNaN: true }),
    fc.double({ min: 88, max: 90, noNaN: true }),
    fc.double({ min: -90, max: -88, noNaN: true }),
  );
  const longitudeArb = fc.oneof(
    fc.double({ min: -180, max: 180, noNaN: true }),
    fc.double({ min: 179, max: 180, noNaN: true }),
    fc.double({ min: -180, max: -179, noNaN: true }),
  );
  const fenceArb = fc.record({
    latitude: latitudeArb,
    longitude: longitudeArb,
    radiusM: fc.oneof(fc.integer({ min: 10, max: 100_000 }), fc.constantFrom(10, 50_000, 100_000)),
  });
  /** A report near a fence: up to 2.3 radii away in any direction, longitude wrapped into range. */
  const nearArb = fc.record({
    fence: fc.nat(),
    bearing: fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
    reach: fc.double({ min: 0, max: 2.3, noNaN: true }),
    accuracy: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 200_000, noNaN: true })),
  });

  it('a report is never missing a geofence it is not outside of (antimeridian and poles included)', () => {
    fc.assert(
      fc.property(
        fc.array(fenceArb, { minLength: 1, maxLength: 30 }),
        fc.array(nearArb, { minLength: 1, maxLength: 40 }),
        fc.array(fc.tuple(latitudeArb, longitudeArb), { maxLength: 20 }),
        (raw, near, anywhere) => {
          const fences: Geofence[] = raw.map((f, i) => ({ type: 'storage', id: i + 1, dwellMinutes: 0, ...f }));
          const index = new GeofenceIndex(fences);
          const points = [
            ...near.map((n) => {
              const f = fences[n.fence % fences.length];
              // Destination point on the sphere at distance reach × radius along the bearing.
              const d = (n.reach * f.radiusM) / 6_371_008.8;
              const [φ, λ] = [(f.latitude * Math.PI) / 180, (f.longitude * Math.PI) / 180];
              const φ2 = Math.asin(Math.sin(φ) * Math.cos(d) + Math.cos(φ) * Math.sin(d) * Math.cos(n.bearing));
              const λ2 =
                λ +
                Math.atan2(Math.sin(n.bearing) * Math.sin(d) * Math.cos(φ), Math.cos(d) - Math.sin(φ) * Math.sin(φ2));
              const longitude = (((((λ2 * 180) / Math.PI + 540) % 360) + 360) % 360) - 180;
              return { latitude: (φ2 * 180) / Math.PI, longitude, accuracy: n.accuracy };
            }),
            ...anywhere.map(([latitude, longitude]) => ({ latitude, longitude, accuracy: 150_000 })),
          ];
          for (const p of points) {
            const found = new Set(index.candidates(p.latitude, p.longitude).map((f) => f.id));
            const missed = fences.filter((f) => notOutside(p.latitude, p.longitude, p.accuracy, f) && !found.has(f.id));
            expect({ point: p, missed }).toEqual({ point: p, missed: [] });
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds one box per geofence: two across the antimeridian, one of every longitude at a pole', () => {
    const fence = (id: number, latitude: number, longitude: number, radiusM = 100_000): Geofence => ({
      type: 'storage',
      id,
      latitude,
      longitude,
      radiusM,
      dwellMinutes: 0,
    });
    const overlapping = Array.from({ length: 2000 }, (_, i) => fence(i + 1, 40 + (i % 50) * 0.01, -40 + i * 0.0002));
    expect(new GeofenceIndex(overlapping).size).toBe(2000);
    expect(new GeofenceIndex([fence(1, 0, 179.5)]).size).toBe(2);
    expect(new GeofenceIndex([fence(1, 0, 179.5)]).candidates(0, -179.8).map((f) => f.id)).toEqual([1]);
    expect(new GeofenceIndex([fence(1, 0, -179.5)]).size).toBe(2);
    expect(new GeofenceIndex([fence(1, 0, -179.5)]).candidates(0, 179.8).map((f) => f.id)).toEqual([1]);
    expect(new GeofenceIndex([fence(1, 10, -179.9, 50)]).candidates(10, 179.9999)).toEqual([]);
    const polar = new GeofenceIndex([fence(1, 89, 10)]);
    expect(polar.size).toBe(1);
    expect(polar.candidates(89.5, -170).map((f) => f.id)).toEqual([1]);
    expect(new GeofenceIndex([]).candidates(0, 0)).toEqual([]);
  });
});
