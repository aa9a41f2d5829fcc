import { lineString, point } from '@turf/helpers';
import { nearestPointOnLine } from '@turf/nearest-point-on-line';
import fc from 'fast-check';
import { TrackSimplifier } from '../../src/tracks/track-simplifier.js';

/**
 * The streaming Douglas–Peucker simplifier, measured with an independent implementation of the
 * distance from a point to a great-circle segment (@turf/nearest-point-on-line, same sphere).
 */
interface Track {
  points: [number, number][];
  fixed: boolean[];
}

/** A random walk of `n` steps of up to `stepM` metres near a random origin. */
const trackArb = fc
  .record({
    origin: fc.tuple(fc.double({ min: -170, max: 170, noNaN: true }), fc.double({ min: -70, max: 70, noNaN: true })),
    steps: fc.array(
      fc.tuple(
        fc.double({ min: -1, max: 1, noNaN: true }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        fc.boolean(),
        fc.nat(30),
      ),
      { minLength: 0, maxLength: 300 },
    ),
    stepDegrees: fc.constantFrom(0.00001, 0.001, 0.05),
  })
  .map(({ origin, steps, stepDegrees }): Track => {
    let [lon, lat] = origin;
    const points: [number, number][] = [];
    const fixed: boolean[] = [];
    for (const [dx, dy, repeat, fixedDraw] of steps) {
      if (!repeat || points.length === 0) {
        lon += dx * stepDegrees;
        lat += dy * stepDegrees;
      }
      points.push([lon, lat]);
      fixed.push(fixedDraw === 0);
    }
    return { points, fixed };
  });

function simplify(track: Track, toleranceM: number, windowSize: number, maxPoints = 1_000_000) {
  const simplifier = new TrackSimplifier(toleranceM, maxPoints, windowSize);
  let accepted = true;
  track.points.forEach(([lon, lat], i) => {
    if (accepted) accepted = simplifier.push(lon, lat, i * 1000, track.fixed[i]);
  });
  const finished = accepted && simplifier.finish();
  return { simplifier, finished, keptIndexes: simplifier.kept.time.map((t) => t / 1000) };
}

/** Distance in metres from source point `i` to the kept segment (a, b). */
function distanceToSegment(track: Track, i: number, a: number, b: number): number {
  const line = lineString([track.points[a], track.points[b]]);
  return nearestPointOnLine(line, point(track.points[i]), { units: 'meters' }).properties.pointDistance;
}

describe('TrackSimplifier', () => {
  it('keeps the first, last and fixed points, and never drops a point farther than the tolerance', () => {
    fc.assert(
      fc.property(
        trackArb,
        fc.double({ min: 0.5, max: 10_000, noNaN: true }),
        fc.integer({ min: 2, max: 40 }),
        (track, toleranceM, windowSize) => {
          const { finished, keptIndexes, simplifier } = simplify(track, toleranceM, windowSize);
          expect(finished).toBe(true);
          expect(simplifier.sourceCount).toBe(track.points.length);
          const n = track.points.length;
          if (n === 0) return expect(keptIndexes).toEqual([]);
          expect(keptIndexes[0]).toBe(0);
          expect(keptIndexes.at(-1)).toBe(n - 1);
          for (let k = 1; k < keptIndexes.length; k += 1) expect(keptIndexes[k]).toBeGreaterThan(keptIndexes[k - 1]);
          const kept = new Set(keptIndexes);
          track.fixed.forEach((fixed, i) => fixed && expect(kept.has(i)).toBe(true));
          keptIndexes.forEach((i) => {
            expect(simplifier.kept.longitude[keptIndexes.indexOf(i)]).toBe(track.points[i][0]);
            expect(simplifier.kept.latitude[keptIndexes.indexOf(i)]).toBe(track.points[i][1]);
          });
          for (let k = 1; k < keptIndexes.length; k += 1) {
            const [a, b] = [keptIndexes[k - 1], keptIndexes[k]];
            for (let i = a + 1; i < b; i += 1)
              expect(distanceToSegment(track, i, a, b)).toBeLessThanOrEqual(toleranceM * (1 + 1e-9) + 1e-6);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('drops points: 1 000 points along the equator (a great circle) keeps its two ends (one window) and its window edges', () => {
    const track: Track = {
      points: Array.from({ length: 1000 }, (_, i) => [10 + i * 0.0001, 0] as [number, number]),
      fixed: Array.from({ length: 1000 }, () => false),
    };
    expect(simplify(track, 1, 2000).keptIndexes).toEqual([0, 999]);
    // Windows of 400 points overlap by one: the edges 399 and 798 are kept as well.
    expect(simplify(track, 1, 400).keptIndexes).toEqual([0, 399, 798, 999]);
  });

  it('keeps every point with tolerance 0', () => {
    fc.assert(
      fc.property(trackArb, (track) => {
        expect(simplify(track, 0, 2).keptIndexes).toEqual(track.points.map((_, i) => i));
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a track that keeps more than max_points, and stops accepting points', () => {
    const zigzag: Track = {
      points: Array.from({ length: 100 }, (_, i) => [i * 0.01, i % 2 === 0 ? 0 : 0.01] as [number, number]),
      fixed: Array.from({ length: 100 }, () => false),
    };
    const over = simplify(zigzag, 10, 16, 99);
    expect(over.finished).toBe(false);
    expect(over.simplifier.overflowed).toBe(true);
    expect(over.simplifier.push(0, 0, 0, false)).toBe(false);
    const fits = simplify(zigzag, 10, 16, 100);
    expect([fits.finished, fits.keptIndexes.length]).toEqual([true, 100]);
    expect(simplify(zigzag, 0, 16, 99).finished).toBe(false);
  });
});
