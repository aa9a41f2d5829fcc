import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db, sql } from '../infrastructure/database/db.js';
import type { RebuildProgress } from '../location-reports/rebuild-progress.js';
import { GeofenceInbox } from './geofence-inbox.js';
import { GeofenceInputsRepository, type ReportRow } from './geofence-inputs.repository.js';
import { GeofenceMetrics } from './geofence-metrics.js';
import { planStart, replayPass, type PassInputs, type TrackerResult, type TrackerStart } from './geofence-pass.js';
import { GeofencePendingRepository, pickRows } from './geofence-pending.repository.js';
import type { Geofence } from './geofence-replay.js';
import { GeofenceWritesRepository } from './geofence-writes.repository.js';

/** A tracker to replay: from the earliest time its marks cover (null: from its first report). */
export interface ReplayRequest {
  trackerId: number;
  fromUs: string | null;
  /** When the oldest of its marks was written (feeds the lag metric). */
  markedAt?: Date;
}

interface PassOutcome {
  /** The locked trackers that exist, with their production run. */
  found: Map<number, number>;
  results: TrackerResult[];
  markedAt: Map<number, Date | undefined>;
}

/** Trackers one rebuild transaction replays. */
const REBUILD_CHUNK = 200;

/**
 * Replays trackers in passes: one transaction for the whole pass that locks its trackers (manual
 * entries and deletes of a tracker wait for it, and it for them), reads every input with one
 * statement per kind, computes each tracker's visits and automatic entries in memory
 * (geofence-replay.ts, candidates from an R-tree over the locations, in slices that let the
 * event loop run between them) and writes them with one
 * statement per table. A replay from the first report is a function of what is stored, so its
 * result never depends on the order in which reports arrived; a resumed or rewound replay
 * (geofence-pass.ts) ends exactly where that one would.
 */
@Injectable()
export class GeofenceProcessor {
  private readonly logger = new Logger(GeofenceProcessor.name);

  constructor(
    private readonly db: Db,
    private readonly inputs: GeofenceInputsRepository,
    private readonly writes: GeofenceWritesRepository,
    private readonly pending: GeofencePendingRepository,
    private readonly inbox: GeofenceInbox,
    private readonly invalidation: CacheInvalidation,
    private readonly metrics: GeofenceMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Replays every tracker (or the one asked for) from its first report with the locations as
   * they are now; returns how many it replayed (0 when `trackerId` is unknown).
   */
  async rebuild(options: { trackerId?: number; progress?: RebuildProgress } = {}): Promise<number> {
    const rows = await this.db.rows<{ id: number }>(
      options.trackerId === undefined
        ? sql`SELECT id FROM trackers ORDER BY id`
        : sql`SELECT id FROM trackers WHERE id = ${options.trackerId}`,
    );
    options.progress?.start?.(rows.length);
    for (let i = 0; i < rows.length; i += REBUILD_CHUNK) {
      const requests = rows.slice(i, i + REBUILD_CHUNK).map((r) => ({ trackerId: r.id, fromUs: null }));
      const outcome = await this.db.transaction(async () =>
        this.replayLocked(requests, await this.inputs.lockTrackers(requests.map((r) => r.trackerId))),
      );
      await this.after(outcome);
      options.progress?.advance?.(Math.min(rows.length, i + REBUILD_CHUNK));
    }
    return rows.length;
  }

  /**
   * One pass of the queue (or of just `only`'s own marks): in one REPEATABLE READ transaction it
   * claims the longest-waiting queue rows whose trackers stay within `limit` (pickRows), locks
   * those of their trackers no other transaction holds, deletes the rows and replays the locked
   * trackers; what the rows mark for trackers another transaction holds (a manual entry in
   * progress, another instance's pass) is written back, one row per tracker, for a later pass. Its statements share one snapshot, so the
   * rows it deletes are exactly those of the reports and entries it reads; rows committed meanwhile
   * stay for the next pass. Answers how many trackers it found waiting and how many it replayed.
   */
  async pass(limit: number, only?: number): Promise<{ waiting: number; replayed: number }> {
    const outcome = await this.db.transaction(async () => {
      const queue = only === undefined ? await this.pending.available() : await this.pending.rowsOf(only);
      const trackersOf = new Map(queue.map((r) => [r.id, r.trackers]));
      const chosen = only === undefined ? pickRows(queue, limit) : queue.map((r) => r.id);
      const rows = chosen.length > 0 ? await this.pending.claim(chosen) : [];
      if (rows.length === 0) return null;
      const carried = this.inbox.take(rows, (id) => trackersOf.get(id) ?? []);
      const marks = await this.pending.marks(rows);
      const locked = await this.inputs.lockTrackers(
        marks.map((m) => m.tracker_id),
        true,
      );
      const held = new Set(locked.map((t) => t.id));
      await this.pending.settle(
        rows,
        marks.filter((m) => !held.has(m.tracker_id)).map((m) => m.tracker_id),
      );
      const replayed = await this.replayLocked(
        marks
          .filter((m) => held.has(m.tracker_id))
          .map((m) => ({ trackerId: m.tracker_id, fromUs: m.from_us, markedAt: m.marked_at })),
        locked,
        carried,
      );
      return { waiting: marks.length, replayed };
    }, 'REPEATABLE READ');
    if (outcome === null) return { waiting: 0, replayed: 0 };
    await this.after(outcome.replayed);
    return { waiting: outcome.waiting, replayed: outcome.replayed.results.length };
  }

  /**
   * Replays trackers this transaction has locked (`locked`: those that exist). `carried`: per
   * tracker, the reports its taken queue rows carry (GeofenceInbox); a resumed replay takes its
   * reports from there instead of reading them back.
   */
  private async replayLocked(
    requests: readonly ReplayRequest[],
    locked: readonly { id: number; production_run_id: number }[],
    carried: ReadonlyMap<number, ReportRow[]> = new Map(),
  ): Promise<PassOutcome> {
    // Phase timings for the debug log (LOG_LEVEL=debug): where a pass spends its time.
    const T: [string, number][] = [['lock', performance.now()]];
    const tick = (name: string) => T.push([name, performance.now()]);
    const found = new Map(locked.map((t) => [t.id, t.production_run_id]));
    const wanted = requests.filter((r) => found.has(r.trackerId));
    if (wanted.length === 0) return { found, results: [], markedAt: new Map() };
    const ids = wanted.map((r) => r.trackerId);
    const starts = (
      await this.inputs.starts(
        ids,
        wanted.map((r) => r.fromUs),
      )
    ).map(planStart);
    tick('starts');
    const locations = await this.passInputs();
    tick('locations');
    const entryRows = await this.inputs.entries(
      ids,
      starts.map((s) => s.cutUs),
      starts.map((s) => s.inclusive),
    );
    tick('entries');
    const read = starts.filter((s) => !(s.mode === 'resume' && carried.has(s.trackerId)));
    const reportRows =
      read.length > 0
        ? await this.inputs.reports(
            read.map((s) => s.trackerId),
            read.map((s) => s.lowUs),
            read.map((s) => s.lowId),
          )
        : [];
    for (const s of starts)
      if (s.mode === 'resume') for (const r of after(carried.get(s.trackerId) ?? [], s)) reportRows.push(r);
    tick('reports');
    const results = await replayPass(starts, entryRows, reportRows, locations);
    tick('compute');

    const recomputed = results.filter((r) => r.start.mode !== 'resume');
    const dropped = await this.writes.dropFrom(
      recomputed.map((r) => ({ trackerId: r.trackerId, cutUs: r.start.cutUs, entries: r.entriesChanged })),
    );
    await this.writes.updateVisits(results.flatMap((r) => (r.continued ? [r.continued] : [])));
    tick('drop-update');
    await this.writes.insertVisits(results.flatMap((r) => r.added.map((visit) => ({ trackerId: r.trackerId, visit }))));
    tick('visits');
    const changed = results.filter((r) => r.entriesChanged);
    await this.writes.insertEntries(
      changed.flatMap((r) => r.entries.map((entry) => ({ trackerId: r.trackerId, entry }))),
    );
    await this.writes.syncTrackers(changed.map((r) => r.trackerId));
    tick('entries-trackers');
    await this.writes.saveProgress(
      results
        .filter((r) => r.last !== null || r.start.mode !== 'resume')
        .map((r) => ({ trackerId: r.trackerId, ts: r.last?.ts ?? null, reportId: r.last?.reportId ?? null })),
    );
    tick('progress');
    const modes = starts.reduce((m: Record<string, number>, s) => ((m[s.mode] = (m[s.mode] ?? 0) + 1), m), {});
    this.logger.debug(
      `pass: ${ids.length} trackers ${JSON.stringify(modes)}, ${reportRows.length} reports; ms ${T.slice(1)
        .map(([n, t], i) => `${n} ${(t - T[i][1]).toFixed(0)}`)
        .join(', ')}`,
    );
    for (const r of results) {
      const d = dropped.get(r.trackerId);
      if (d)
        r.before = { ...r.before, visits: r.before.visits + d.visits, confirmed: r.before.confirmed + d.confirmed };
    }
    return { found, results, markedAt: new Map(wanted.map((r) => [r.trackerId, r.markedAt])) };
  }

  /** After the commit: caches of the runs whose trackers changed, and the metrics. */
  private async after(outcome: PassOutcome): Promise<void> {
    const runs = new Set(outcome.results.filter((r) => r.entriesChanged).map((r) => outcome.found.get(r.trackerId)!));
    if (runs.size > 0) await this.invalidation.trackersChanged([...runs]);
    const now = Date.now();
    for (const r of outcome.results) {
      const at = outcome.markedAt.get(r.trackerId);
      this.metrics.replayed(r.before, r.after, at ? (now - at.getTime()) / 1000 : null);
    }
  }

  /** The locations as they are now: geofences (those with coordinates) and every location's dwell. */
  private async passInputs(): Promise<PassInputs> {
    const rows = await this.inputs.locations();
    const defaultDwellMinutes = this.config.geofenceDwellMinutes;
    const fences: Geofence[] = [];
    const dwell = new Map<string, number>();
    for (const r of rows) {
      const dwellMinutes = r.dwell_minutes ?? defaultDwellMinutes;
      dwell.set(`${r.kind}:${r.id}`, dwellMinutes);
      if (r.latitude !== null && r.longitude !== null) {
        fences.push({
          type: r.kind === 's' ? 'storage' : 'delivery',
          id: r.id,
          latitude: r.latitude,
          longitude: r.longitude,
          radiusM: r.radius_m,
          dwellMinutes,
        });
      }
    }
    return { fences, dwell, defaultDwellMinutes };
  }
}

/** The reports that lie after where a replay starts reading (lowUs null: all of them). */
function after(rows: readonly ReportRow[], s: TrackerStart): readonly ReportRow[] {
  if (s.lowUs === null) return rows;
  const [low, lowId] = [Number(s.lowUs), Number(s.lowId)];
  return rows.filter((r) => r.ts > low || (r.ts === low && r.id > lowId));
}
