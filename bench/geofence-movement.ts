import { reportBodies } from './standalone.js';

/**
 * How the geofence bench's trackers move (bench/geofences.ts): in-order reports per tracker over
 * 1 000 locations spread over Europe.
 */

export interface Place {
  latitude: number;
  longitude: number;
  radius_m: number;
}

/**
 * How trackers move (BENCH_MOVEMENT):
 * - `routes`: each tracker stays at a location for 4–24 reports (1–7 hours at this bench's
 *   1 000 s between a tracker's reports), then travels in a straight line to another one over
 *   10–40 reports; about a third of the reports lie inside a location, a visit spans several.
 * - `jumps` (the worst case): every third report lies inside a location, a different one each
 *   time, the others anywhere in Europe: a visit (and often an automatic entry) every three reports.
 */
export type Movement = 'routes' | 'jumps';

export interface Route {
  from: Place;
  to: Place;
  /** How many routes the tracker had before this one (seeds the next). */
  leg: number;
  /** Reports left at `from`, then on the way to `to`. */
  stay: number;
  steps: number;
  step: number;
}

/** A deterministic pseudo-random integer in [0, n) from a seed. */
const pick = (seed: number, n: number) => Math.abs(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ (seed >>> 13)) % n;

/** A point within half the radius of a place (inside whatever the report's accuracy). */
function near(place: Place): Place {
  const m = place.radius_m * 0.5 * Math.sqrt(Math.random());
  const angle = Math.random() * 2 * Math.PI;
  const dLat = (m * Math.cos(angle)) / 111_320;
  const dLon = (m * Math.sin(angle)) / (111_320 * Math.cos((place.latitude * Math.PI) / 180));
  return { latitude: place.latitude + dLat, longitude: place.longitude + dLon, radius_m: place.radius_m };
}

/** The next position of a tracker on its route (routes are kept per tracker across calls). */
function onRoute(routes: Map<number, Route>, trackerId: number, places: Place[]): Place {
  let route = routes.get(trackerId);
  if (!route || route.step >= route.stay + route.steps) {
    const from = route ? route.to : places[pick(trackerId, places.length)];
    const leg = route ? route.leg + 1 : 0;
    const seed = trackerId * 7919 + leg * 104_729;
    route = {
      from,
      to: places[pick(seed, places.length)],
      leg,
      stay: 4 + pick(seed + 1, 21),
      steps: 10 + pick(seed + 2, 31),
      step: 0,
    };
    routes.set(trackerId, route);
  }
  const step = route.step++;
  if (step < route.stay) return near(route.from);
  const f = (step - route.stay + 1) / (route.steps + 1);
  return {
    latitude: route.from.latitude + f * (route.to.latitude - route.from.latitude),
    longitude: route.from.longitude + f * (route.to.longitude - route.from.longitude),
    radius_m: 0,
  };
}

/** In-order reports per tracker, moving as `movement` says. */
export function makeBodies(
  movement: Movement,
  batchSize: number,
  count: number,
  trackerIds: number[],
  places: Place[],
  seq: { next: number; routes: Map<number, Route> },
): string[] {
  const start = Date.now() - 400 * 86_400_000;
  return reportBodies(batchSize, count, seq, (n) => {
    const trackerId = trackerIds[n % trackerIds.length];
    let position: { latitude: number; longitude: number };
    if (movement === 'routes') position = onRoute(seq.routes, trackerId, places);
    else {
      const at = n % 3 === 0 ? places[(n * 7919) % places.length] : null;
      position = at
        ? {
            latitude: at.latitude + (Math.random() - 0.5) * 0.002,
            longitude: at.longitude + (Math.random() - 0.5) * 0.002,
          }
        : { latitude: 36 + Math.random() * 24, longitude: -10 + Math.random() * 40 };
    }
    return {
      tracker_id: trackerId,
      timestamp: new Date(start + n * 1000).toISOString(),
      latitude: position.latitude,
      longitude: position.longitude,
      confidence: 3,
      accuracy_m: Math.round(Math.random() * 50),
    };
  });
}
