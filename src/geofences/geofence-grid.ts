import { EXIT_FACTOR, type Geofence } from './geofence-replay.js';

/** Cell edge in degrees (about 5.5 km of latitude). */
const CELL_DEG = 0.05;
/** Metres per degree of latitude, rounded down so the boxes come out slightly too large, never too small. */
const METRES_PER_DEGREE = 111_000;
/** A report is "not outside" a geofence within EXIT_FACTOR × radius plus an accuracy of at most the radius. */
const REACH_FACTOR = EXIT_FACTOR + 1;
/** A geofence whose box would cover more cells than this (huge radius, near a pole) is checked for every report. */
const MAX_CELLS_PER_FENCE = 20_000;

const cellOf = (deg: number) => Math.floor(deg / CELL_DEG);
const key = (latCell: number, lonCell: number) => latCell * 100_000 + lonCell;

/**
 * The geofences of one replay pass, indexed by a grid of CELL_DEG cells: each geofence is listed
 * in every cell its reach (the farthest a report can be without being outside it) overlaps, so the
 * candidates of a report are the lists of its one cell — never a scan of every location. The
 * replay judges each candidate exactly; a candidate too many does no harm.
 */
export class GeofenceGrid {
  private readonly cells = new Map<number, Geofence[]>();
  private readonly everywhere: Geofence[] = [];

  constructor(fences: readonly Geofence[]) {
    for (const fence of fences) this.add(fence);
  }

  /** Every geofence a report at this position may be inside of or near. */
  candidates(latitude: number, longitude: number): Geofence[] {
    const listed = this.cells.get(key(cellOf(latitude), cellOf(longitude)));
    if (this.everywhere.length === 0) return listed ?? [];
    return listed ? [...listed, ...this.everywhere] : this.everywhere;
  }

  private add(fence: Geofence): void {
    const reachDeg = (REACH_FACTOR * fence.radiusM + 1) / METRES_PER_DEGREE;
    const south = fence.latitude - reachDeg;
    const north = fence.latitude + reachDeg;
    // Longitude degrees shrink with the cosine of the latitude: take the box's widest latitude.
    const cos = Math.cos((Math.min(90, Math.max(Math.abs(south), Math.abs(north))) * Math.PI) / 180);
    const lonReach = cos > 0 ? reachDeg / cos : Infinity;
    const west = fence.longitude - lonReach;
    const east = fence.longitude + lonReach;
    const [lat0, lat1, lon0, lon1] = [cellOf(south), cellOf(north), cellOf(west), cellOf(east)];
    // Boxes crossing the antimeridian or a pole, or too large to list, are simply checked everywhere.
    if (
      west < -180 ||
      east > 180 ||
      south < -90 ||
      north > 90 ||
      (lat1 - lat0 + 1) * (lon1 - lon0 + 1) > MAX_CELLS_PER_FENCE
    ) {
      this.everywhere.push(fence);
      return;
    }
    for (let la = lat0; la <= lat1; la++) {
      for (let lo = lon0; lo <= lon1; lo++) {
        const k = key(la, lo);
        const list = this.cells.get(k);
        if (list) list.push(fence);
        else this.cells.set(k, [fence]);
      }
    }
  }
}
