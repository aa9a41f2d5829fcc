import type { Counts } from './geofence-metrics.js';
import type { EntryRow, ReportRow, StartRow, VisitJson } from './geofence-inputs.repository.js';
import { GeofenceIndex } from './geofence-index.js';
import {
  INITIAL_STATE,
  replaySteps,
  type AutomaticEntry,
  type Geofence,
  type ManualEntry,
  type ReplayReport,
  type ReplayState,
  type Visit,
} from './geofence-replay.js';

/**
 * How one tracker's replay starts, decided from what the previous replays left (StartRow):
 * - `resume`: its marks all lie after the last report taken into account: go on from there, with
 *   the open visit and the current status as stored; nothing stored is dropped.
 * - `rewind`: something earlier changed (a late report, a back-dated manual entry, reports of a
 *   batch that committed after a later one): restart at `cut`, the entry time of the latest visit
 *   that began at or before the earliest change. Visits and automatic entries from the cut on are
 *   recomputed; before it, the stored ones stand. The visit before the cut is reopened when it was
 *   left at the cut itself. A tracker that had entered no visit by the earliest change restarts at
 *   that change (no visit open, the entries before it as the state). Only used where the stored
 *   rows describe the state at the cut exactly
 *   (the visit before was not also seen at the cut's timestamp); otherwise:
 * - `full`: replay every report from the beginning.
 * The three end in the same visits and entries as a full replay (test/e2e/geofences-property).
 */
export interface TrackerStart {
  trackerId: number;
  mode: 'resume' | 'rewind' | 'full';
  /** Reports strictly after (lowUs, lowId) are read; null lowUs: all. */
  lowUs: string | null;
  lowId: string;
  /** Entries after the cut are input, before it they make the state (null: no cut). */
  cutUs: string | null;
  /** Resuming: entries at the cut's own timestamp belong to the state (the last report's time). */
  inclusive: boolean;
  open: VisitJson | null;
}

export function planStart(row: StartRow): TrackerStart {
  const base = { trackerId: row.tracker_id };
  if (row.resume) {
    const open = row.latest && row.latest[5] === null ? row.latest : null;
    return {
      ...base,
      mode: 'resume',
      lowUs: row.last_us,
      lowId: row.last_report_id ?? '0',
      cutUs: row.last_us,
      inclusive: true,
      open,
    };
  }
  if (row.cut_us !== null) {
    const cut = Number(row.cut_us);
    const w = row.before;
    const exited = w && w[5] !== null ? Number(w[5]) : null;
    const safe = w === null || (exited !== null && (exited < cut || (exited === cut && Number(w[4]) < cut)));
    if (safe)
      return {
        ...base,
        mode: 'rewind',
        lowUs: row.cut_us,
        lowId: '0',
        cutUs: row.cut_us,
        inclusive: false,
        open: exited === cut ? w : null,
      };
  }
  return { ...base, mode: 'full', lowUs: null, lowId: '0', cutUs: null, inclusive: false, open: null };
}

/** What a tracker's replay computed and what it replaces. */
export interface TrackerResult {
  trackerId: number;
  start: TrackerStart;
  /** The continued (reopened) stored visit, updated in place. */
  continued: Visit | null;
  added: Visit[];
  entries: AutomaticEntry[];
  /** Whether the automatic entries change (resume: new ones; otherwise: differ from those stored from the cut on). */
  entriesChanged: boolean;
  /** The last report read (null: none). */
  last: { ts: string; reportId: string } | null;
  /** Counts before (without the dropped visits, known only after the writes) and after, for the metrics. */
  before: Counts;
  after: Counts;
}

export interface PassInputs {
  fences: Geofence[];
  /** Current dwell (minutes, the default resolved) of every location, by `s:ID` / `d:ID`. */
  dwell: Map<string, number>;
  defaultDwellMinutes: number;
}

const toVisit = (v: VisitJson, dwellMinutes: number): Visit => ({
  id: v[0],
  type: v[1] !== null ? 'storage' : 'delivery',
  locationId: (v[1] ?? v[2]) as number,
  enteredAt: Number(v[3]),
  lastSeenAt: Number(v[4]),
  exitedAt: null,
  reportCount: v[6],
  confirmed: v[7],
  dwell: dwellMinutes * 60_000_000,
});

/** Comparable text of a list of automatic entries (both sides list them in time order). */
export function signature(entries: readonly AutomaticEntry[]): string {
  return JSON.stringify(entries.map((e) => [e.status, e.timestamp, e.storageLocationId, e.deliveryLocationId]));
}

/** Longest stretch of replay work between two turns of the event loop, in milliseconds. */
const SLICE_MS = 25;

/**
 * Lets the event loop run (timers, I/O, other requests) once a slice of work has gone by: a pass
 * over many reports and large overlapping locations is spread over many turns instead of one.
 */
export class Slicer {
  private since = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Whether the current slice is used up (cheap enough to ask before every report). */
  due(): boolean {
    return performance.now() - this.since >= this.sliceMs;
  }

  /** Waits for a macrotask (after pending I/O and timers), then starts a new slice. */
  async pause(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

/**
 * Runs the replay of every tracker of a pass over the rows read for it, in slices of at most about
 * `slicer`'s length (a pause may fall between any two reports). Each report's candidates are looked
 * up as the replay reaches it, so at most one report's list exists at a time.
 */
export async function replayPass(
  starts: readonly TrackerStart[],
  entryRows: readonly EntryRow[],
  reportRows: readonly ReportRow[],
  inputs: PassInputs,
  slicer = new Slicer(),
): Promise<TrackerResult[]> {
  const index = new GeofenceIndex(inputs.fences);
  const reportsOf = groupBy(reportRows);
  const entriesOf = groupBy(entryRows);
  const results: TrackerResult[] = [];
  for (const start of starts) {
    if (slicer.due()) await slicer.pause();
    const reports = (reportsOf.get(start.trackerId) ?? []).sort((a, b) => a.ts - b.ts || a.id - b.id);
    const rows = entriesOf.get(start.trackerId) ?? [];
    const after = rows.filter((r) => r.kind === 'after');
    const stateRow = rows.find((r) => r.kind === 'state');
    const manual: ManualEntry[] = after
      .filter((e) => e.source !== 'geofence')
      .map((e) => ({ timestamp: Number(e.ts), status: e.status!, storageLocationId: e.storage_location_id }));
    const stored: AutomaticEntry[] = after
      .filter((e) => e.source === 'geofence')
      .map((e) => ({
        status: e.status!,
        timestamp: Number(e.ts),
        storageLocationId: e.storage_location_id,
        deliveryLocationId: e.delivery_location_id,
      }));
    const open =
      start.open &&
      toVisit(
        start.open,
        inputs.dwell.get(`${start.open[1] !== null ? 's' : 'd'}:${start.open[1] ?? start.open[2]}`) ??
          inputs.defaultDwellMinutes,
      );
    const state: ReplayState =
      start.mode === 'full'
        ? INITIAL_STATE
        : {
            open,
            status: stateRow?.status
              ? { status: stateRow.status, storageLocationId: stateRow.storage_location_id }
              : null,
            latestManual: stateRow?.manual_us ? Number(stateRow.manual_us) : -Infinity,
          };
    const steps = replaySteps(withCandidates(reports, index), manual, state);
    let step = steps.next();
    for (; !step.done; step = steps.next()) if (slicer.due()) await slicer.pause();
    const result = step.value;
    const continued = open ? result.visits[0] : null;
    const entriesChanged =
      start.mode === 'resume' ? result.entries.length > 0 : signature(result.entries) !== signature(stored);
    const lastRow = reports.at(-1);
    results.push({
      trackerId: start.trackerId,
      start,
      continued,
      added: continued ? result.visits.slice(1) : result.visits,
      entries: result.entries,
      entriesChanged,
      last: lastRow ? { ts: String(lastRow.ts), reportId: String(lastRow.id) } : null,
      before: {
        visits: open ? 1 : 0,
        confirmed: open?.confirmed ? 1 : 0,
        entries: start.mode === 'resume' ? 0 : stored.length,
      },
      after: {
        visits: result.visits.length,
        confirmed: result.visits.filter((v) => v.confirmed).length,
        entries: result.entries.length,
      },
    });
  }
  return results;
}

/** The replay's view of each report, its candidates found when the replay reaches it. */
function* withCandidates(reports: readonly ReportRow[], index: GeofenceIndex): Generator<ReplayReport> {
  for (const r of reports)
    yield {
      timestamp: r.ts,
      latitude: r.latitude,
      longitude: r.longitude,
      accuracyM: r.accuracy_m,
      candidates: index.candidates(r.latitude, r.longitude),
    };
}

function groupBy<T extends { tracker_id: number }>(rows: readonly T[]): Map<number, T[]> {
  const map = new Map<number, T[]>();
  for (const row of rows) {
    const list = map.get(row.tracker_id);
    if (list) list.push(row);
    else map.set(row.tracker_id, [row]);
  }
  return map;
}
