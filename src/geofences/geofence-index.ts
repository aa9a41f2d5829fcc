import Flatbush from 'flatbush';
import { EXIT_FACTOR, type Geofence } from './geofence-replay.js';

/** Metres per degree of latitude, rounded down so the boxes come out slightly too large, never too small. */
const METRES_PER_DEGREE = 111_000;
/** A report is "not outside" a geofence within EXIT_FACTOR × radius plus an accuracy of at most the radius. */
const REACH_FACTOR = EXIT_FACTOR + 1;

/** A box in degrees: [west, south, east, north]. */
type Box = [number, number, number, number];

/**
 * The boxes (one, or two across the antimeridian) holding a geofence's reach: the farthest a report
 * can be without being outside it. A reach touching a pole spans every longitude.
 */
function reachBoxes(fence: Geofence): Box[] {
  const reachDeg = (REACH_FACTOR * fence.radiusM + 1) / METRES_PER_DEGREE;
  const south = fence.latitude - reachDeg;
  const north = fence.latitude + reachDeg;
  if (south <= -90 || north >= 90) return [[-180, Math.max(-90, south), 180, Math.min(90, north)]];
  // Longitude degrees shrink with the cosine of the latitude: take the box's widest latitude.
  const cos = Math.cos((Math.max(Math.abs(south), Math.abs(north)) * Math.PI) / 180);
  const lonReach = reachDeg / cos;
  if (!(lonReach < 180)) return [[-180, south, 180, north]];
  const west = fence.longitude - lonReach;
  const east = fence.longitude + lonReach;
  if (west < -180)
    return [
      [west + 360, south, 180, north],
      [-180, south, east, north],
    ];
  if (east > 180)
    return [
      [west, south, 180, north],
      [-180, south, east - 360, north],
    ];
  return [[west, south, east, north]];
}

/**
 * The geofences of one replay pass in a static packed R-tree (flatbush) over their reach boxes:
 * memory is one box per geofence (two across the antimeridian), and the candidates of a report are
 * found by descending the tree, never by scanning every location. The replay judges each candidate
 * exactly; a candidate too many does no harm, one too few would be a wrong result.
 */
export class GeofenceIndex {
  /** How many boxes the tree holds. */
  readonly size: number;
  private readonly tree: Flatbush | null;
  /** The geofence of each box, by the box's index in the tree. */
  private readonly owner: Int32Array;

  constructor(private readonly fences: readonly Geofence[]) {
    const boxes = fences.flatMap((fence, i) => reachBoxes(fence).map((box) => [i, box] as const));
    this.size = boxes.length;
    this.owner = new Int32Array(boxes.length);
    this.tree = boxes.length > 0 ? new Flatbush(boxes.length) : null;
    if (!this.tree) return;
    for (const [i, [west, south, east, north]] of boxes) this.owner[this.tree.add(west, south, east, north)] = i;
    this.tree.finish();
  }

  /** Every geofence a report at this position may be inside of or near. */
  candidates(latitude: number, longitude: number): Geofence[] {
    const found: Geofence[] = [];
    // The filter collects the geofences itself, so the tree's own list of indices stays empty.
    this.tree?.search(longitude, latitude, longitude, latitude, (box) => {
      found.push(this.fences[this.owner[box]]);
      return false;
    });
    return found;
  }
}
