/**
 * Douglas–Peucker simplification of a track that arrives point by point, with the tolerance in
 * metres on the sphere the geofences use (radius 6 371 008.8 m): a dropped point is never farther
 * than the tolerance from the great-circle segment between the kept points around it.
 *
 * Memory does not grow with the track: points are held in a window of `windowSize`, simplified
 * when it is full, and only the kept ones are retained — at most `maxPoints`, after which the
 * simplifier refuses further points (the caller stops reading and answers 422). The last point of a
 * window is kept and starts the next one, so a window edge is one more fixed point, like the
 * first, the last and every point marked `fixed` (the reports that open and close visits); the
 * distance bound holds between any two consecutive kept points. Tolerance 0 keeps every point.
 */
export const EARTH_RADIUS_M = 6_371_008.8;
const DEFAULT_WINDOW = 16_384;

export interface KeptPoints {
  longitude: number[];
  latitude: number[];
  /** Epoch milliseconds. */
  time: number[];
}

export class TrackSimplifier {
  readonly kept: KeptPoints = { longitude: [], latitude: [], time: [] };
  /** Points pushed (before simplification). */
  sourceCount = 0;
  /** More than `maxPoints` would be kept: nothing more is accepted. */
  overflowed = false;

  private readonly tolerance: number;
  private readonly lon: Float64Array;
  private readonly lat: Float64Array;
  private readonly time: Float64Array;
  private readonly fixed: Uint8Array;
  private readonly keep: Uint8Array;
  private readonly x: Float64Array;
  private readonly y: Float64Array;
  private readonly z: Float64Array;
  private n = 0;

  constructor(
    toleranceM: number,
    private readonly maxPoints: number,
    private readonly windowSize = DEFAULT_WINDOW,
  ) {
    if (windowSize < 2) throw new Error('TrackSimplifier: the window holds at least 2 points');
    this.tolerance = toleranceM / EARTH_RADIUS_M;
    const size = toleranceM > 0 ? windowSize : 0;
    this.lon = new Float64Array(size);
    this.lat = new Float64Array(size);
    this.time = new Float64Array(size);
    this.fixed = new Uint8Array(size);
    this.keep = new Uint8Array(size);
    this.x = new Float64Array(size);
    this.y = new Float64Array(size);
    this.z = new Float64Array(size);
  }

  /** Adds the next point (in track order); false once more than `maxPoints` would be kept. */
  push(longitude: number, latitude: number, timeMs: number, fixed: boolean): boolean {
    if (this.overflowed) return false;
    this.sourceCount += 1;
    if (this.tolerance === 0) return this.emit(longitude, latitude, timeMs);
    const i = this.n;
    this.lon[i] = longitude;
    this.lat[i] = latitude;
    this.time[i] = timeMs;
    this.fixed[i] = fixed ? 1 : 0;
    this.n += 1;
    if (this.n === this.windowSize) {
      this.simplifyWindow();
      if (!this.emitWindow(this.n - 1)) return false;
      this.carryLast();
    }
    return true;
  }

  /** Ends the track; false when more than `maxPoints` are kept. */
  finish(): boolean {
    if (this.overflowed) return false;
    if (this.n === 0) return true;
    this.simplifyWindow();
    return this.emitWindow(this.n);
  }

  private emit(longitude: number, latitude: number, timeMs: number): boolean {
    if (this.kept.time.length >= this.maxPoints) {
      this.overflowed = true;
      return false;
    }
    this.kept.longitude.push(longitude);
    this.kept.latitude.push(latitude);
    this.kept.time.push(timeMs);
    return true;
  }

  /** Emits the kept points among the window's first `count`. */
  private emitWindow(count: number): boolean {
    for (let i = 0; i < count; i += 1)
      if (this.keep[i] && !this.emit(this.lon[i], this.lat[i], this.time[i])) return false;
    return true;
  }

  /** The window's last point (kept, not yet emitted) becomes the first of the next window. */
  private carryLast(): void {
    const last = this.n - 1;
    this.lon[0] = this.lon[last];
    this.lat[0] = this.lat[last];
    this.time[0] = this.time[last];
    this.fixed[0] = 1;
    this.n = 1;
  }

  /** Marks in `keep` the points Douglas–Peucker keeps among the window's `n`, between its fixed points. */
  private simplifyWindow(): void {
    const n = this.n;
    for (let i = 0; i < n; i += 1) {
      const lat = (this.lat[i] * Math.PI) / 180;
      const lon = (this.lon[i] * Math.PI) / 180;
      this.x[i] = Math.cos(lat) * Math.cos(lon);
      this.y[i] = Math.cos(lat) * Math.sin(lon);
      this.z[i] = Math.sin(lat);
      this.keep[i] = this.fixed[i];
    }
    this.keep[0] = 1;
    this.keep[n - 1] = 1;
    let from = 0;
    for (let i = 1; i < n; i += 1) {
      if (!this.keep[i]) continue;
      this.douglasPeucker(from, i);
      from = i;
    }
  }

  private douglasPeucker(first: number, last: number): void {
    const stack = [first, last];
    while (stack.length > 0) {
      const b = stack.pop()!;
      const a = stack.pop()!;
      if (b - a < 2) continue;
      let farthest = -1;
      let farthestAngle = this.tolerance;
      const segment = new Segment(this.x, this.y, this.z, a, b);
      for (let i = a + 1; i < b; i += 1) {
        const angle = segment.angleTo(this.x[i], this.y[i], this.z[i]);
        if (angle > farthestAngle) {
          farthestAngle = angle;
          farthest = i;
        }
      }
      if (farthest < 0) continue;
      this.keep[farthest] = 1;
      stack.push(a, farthest, farthest, b);
    }
  }
}

/** A great-circle segment A→B between unit vectors, measuring angular distances to it (radians). */
class Segment {
  private readonly ax: number;
  private readonly ay: number;
  private readonly az: number;
  private readonly bx: number;
  private readonly by: number;
  private readonly bz: number;
  /** Unit normal of the great circle through A and B; null when A and B (nearly) coincide. */
  private readonly normal: [number, number, number] | null;
  /** N × A and B × N: P lies between A and B along the arc iff P·(N×A) ≥ 0 and P·(B×N) ≥ 0. */
  private readonly na: [number, number, number] = [0, 0, 0];
  private readonly bn: [number, number, number] = [0, 0, 0];

  constructor(x: Float64Array, y: Float64Array, z: Float64Array, a: number, b: number) {
    [this.ax, this.ay, this.az, this.bx, this.by, this.bz] = [x[a], y[a], z[a], x[b], y[b], z[b]];
    const n = cross(this.ax, this.ay, this.az, this.bx, this.by, this.bz);
    const length = Math.hypot(n[0], n[1], n[2]);
    this.normal = length < 1e-15 ? null : [n[0] / length, n[1] / length, n[2] / length];
    if (!this.normal) return;
    const [nx, ny, nz] = this.normal;
    this.na = cross(nx, ny, nz, this.ax, this.ay, this.az);
    this.bn = cross(this.bx, this.by, this.bz, nx, ny, nz);
  }

  angleTo(px: number, py: number, pz: number): number {
    const toA = angleBetween(px, py, pz, this.ax, this.ay, this.az);
    if (!this.normal) return toA;
    const alongA = px * this.na[0] + py * this.na[1] + pz * this.na[2];
    const alongB = px * this.bn[0] + py * this.bn[1] + pz * this.bn[2];
    if (alongA >= 0 && alongB >= 0) {
      const s = Math.abs(px * this.normal[0] + py * this.normal[1] + pz * this.normal[2]);
      return Math.asin(Math.min(1, s));
    }
    return Math.min(toA, angleBetween(px, py, pz, this.bx, this.by, this.bz));
  }
}

function cross(ax: number, ay: number, az: number, bx: number, by: number, bz: number): [number, number, number] {
  return [ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx];
}

function angleBetween(ax: number, ay: number, az: number, bx: number, by: number, bz: number): number {
  const c = cross(ax, ay, az, bx, by, bz);
  return Math.atan2(Math.hypot(c[0], c[1], c[2]), ax * bx + ay * by + az * bz);
}
