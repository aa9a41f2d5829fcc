import type { TrackerStatus } from '../tracker-states/tracker-status.js';

/**
 * The replay of a tracker's history that yields its visits and automatic status entries: a pure
 * function of its eligible reports, the locations near them and its manual entries, so any order
 * or batching of the same reports ends in the same result (docs/api.md, geofences).
 */

/** Mean Earth radius of the haversine distance, in metres. */
const EARTH_RADIUS_M = 6_371_008.8;
/** A visit is left only beyond this multiple of the radius (hysteresis against jitter at the edge). */
export const EXIT_FACTOR = 1.1;

export type LocationType = 'storage' | 'delivery';

export interface Geofence {
  type: LocationType;
  id: number;
  latitude: number;
  longitude: number;
  radiusM: number;
  /** Already resolved (the location's own or the configured default). */
  dwellMinutes: number;
}

/** Timestamps of the replay are microseconds since the epoch (the database's precision). */
const MICROS_PER_MINUTE = 60_000_000;

export interface ReplayReport {
  timestamp: number;
  latitude: number;
  longitude: number;
  accuracyM: number | null;
  /** Every geofence the report is not outside of (more do no harm: each is judged exactly). */
  candidates: Geofence[];
}

export interface ManualEntry {
  timestamp: number;
  status: TrackerStatus;
  storageLocationId: number | null;
}

export interface Visit {
  /** Set on the visit a resumed replay continues (the stored row it updates). */
  id?: string;
  type: LocationType;
  locationId: number;
  enteredAt: number;
  lastSeenAt: number;
  exitedAt: number | null;
  reportCount: number;
  confirmed: boolean;
  /** Microseconds inside needed to confirm. */
  dwell: number;
}

export interface AutomaticEntry {
  status: TrackerStatus;
  timestamp: number;
  storageLocationId: number | null;
  deliveryLocationId: number | null;
}

export function haversineM(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

interface Judged {
  fence: Geofence;
  distance: number;
  inside: boolean;
  outside: boolean;
}

function judge(report: ReplayReport): Judged[] {
  return report.candidates.map((fence) => {
    const distance = haversineM(report.latitude, report.longitude, fence.latitude, fence.longitude);
    const a = Math.min(report.accuracyM ?? 0, fence.radiusM);
    return {
      fence,
      distance,
      inside: distance <= fence.radiusM + a,
      outside: distance - a > EXIT_FACTOR * fence.radiusM,
    };
  });
}

/** Nearest first; equal distances: storage before delivery, then the lower id. */
function nearer(a: Judged, b: Judged): number {
  if (a.distance !== b.distance) return a.distance - b.distance;
  if (a.fence.type !== b.fence.type) return a.fence.type === 'storage' ? -1 : 1;
  return a.fence.id - b.fence.id;
}

const same = (visit: Visit, fence: Geofence) => visit.type === fence.type && visit.locationId === fence.id;

export interface CurrentStatus {
  status: TrackerStatus;
  storageLocationId: number | null;
}

/** Where a replay stood after some report: enough to go on with the reports after it. */
export interface ReplayState {
  open: Visit | null;
  /** The current status (latest entry in replay order); null before the tracker's first entry. */
  status: CurrentStatus | null;
  /** Timestamp of the latest manual entry so far (-Infinity: none). */
  latestManual: number;
}

export const INITIAL_STATE: ReplayState = { open: null, status: null, latestManual: -Infinity };

export interface ReplayResult {
  visits: Visit[];
  entries: AutomaticEntry[];
}

/**
 * `reports` and `manual` each in (timestamp, id) order. A manual entry is taken before a report
 * of the same timestamp. From `start` (default: the beginning), `reports` and `manual` then being
 * only those after the state's point: the result is what a replay from the beginning would add
 * after that point (the continued open visit comes first in `visits`, with its id).
 * It pauses (yields) before each report: its caller decides when to go on, so a long replay can be
 * spread over several turns of the event loop; `reports` is read one at a time as it goes on.
 */
export function* replaySteps(
  reports: Iterable<ReplayReport>,
  manual: readonly ManualEntry[],
  start: ReplayState = INITIAL_STATE,
): Generator<void, ReplayResult, void> {
  const visits: Visit[] = start.open ? [{ ...start.open }] : [];
  const entries: AutomaticEntry[] = [];
  let open: Visit | null = visits[0] ?? null;
  let status: CurrentStatus | null = start.status;
  let latestManual = start.latestManual;
  let m = 0;
  const set = (entry: AutomaticEntry) => {
    entries.push(entry);
    status = { status: entry.status, storageLocationId: entry.storageLocationId };
  };

  for (const report of reports) {
    yield;
    for (; m < manual.length && manual[m].timestamp <= report.timestamp; m++) {
      status = { status: manual[m].status, storageLocationId: manual[m].storageLocationId };
      latestManual = manual[m].timestamp;
    }
    const judged = judge(report);
    const inside = judged.filter((j) => j.inside).sort(nearer);
    const outsideEvery = judged.every((j) => j.outside);
    const t = report.timestamp;

    let confirmedNow: Visit | null = null;
    const openAt = (fence: Geofence) => {
      open = {
        type: fence.type,
        locationId: fence.id,
        enteredAt: t,
        lastSeenAt: t,
        exitedAt: null,
        reportCount: 1,
        confirmed: false,
        dwell: fence.dwellMinutes * MICROS_PER_MINUTE,
      };
      visits.push(open);
    };
    const current = open as Visit | null;
    if (current) {
      const atOpen = judged.find((j) => same(current, j.fence));
      if (atOpen?.inside) {
        current.lastSeenAt = t;
        current.reportCount++;
      } else if (inside.length > 0) {
        current.exitedAt = t;
        openAt(inside[0].fence);
      } else if (!atOpen || atOpen.outside) {
        current.exitedAt = t;
        open = null;
      }
    } else if (inside.length > 0) {
      openAt(inside[0].fence);
    }
    const visit = open as Visit | null;
    if (visit && !visit.confirmed && visit.lastSeenAt - visit.enteredAt >= visit.dwell) {
      visit.confirmed = true;
      confirmedNow = visit;
    }

    const now = status as { status: TrackerStatus; storageLocationId: number | null } | null;
    if (!now) continue;
    if (outsideEvery && (now.status === 'CREATED' || now.status === 'IN_STORAGE')) {
      set({ status: 'IN_TRANSIT', timestamp: t, storageLocationId: null, deliveryLocationId: null });
    } else if (confirmedNow && confirmedNow.enteredAt >= latestManual && now.status !== 'DELIVERED') {
      if (confirmedNow.type === 'delivery') {
        set({
          status: 'DELIVERED',
          timestamp: confirmedNow.enteredAt,
          storageLocationId: null,
          deliveryLocationId: confirmedNow.locationId,
        });
      } else if (!(now.status === 'IN_STORAGE' && now.storageLocationId === confirmedNow.locationId)) {
        set({
          status: 'IN_STORAGE',
          timestamp: confirmedNow.enteredAt,
          storageLocationId: confirmedNow.locationId,
          deliveryLocationId: null,
        });
      }
    }
  }
  return { visits, entries };
}
