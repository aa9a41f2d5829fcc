import { AccessScope } from '../../src/common/auth/access-scope.js';
import { locationsRebuildCommand } from '../../src/cli/commands/locations-rebuild.command.js';
import { filterReason } from '../../src/location-reports/location-rules.js';
import { LocationRebuildService } from '../../src/locations/location-rebuild.service.js';
import { LocationsDemoSeeder } from '../../src/locations/locations-demo.service.js';
import { LOCATION_WRITES_LOCK_KEY } from '../../src/location-reports/location-writes-lock.js';
import { LocationsModule } from '../../src/locations/locations.module.js';
import type { CreatedUser } from '../support/factories.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';
import {
  aggregateTables,
  ingestReports,
  rawReports,
  referenceAggregates,
  report,
  type ReportIn,
} from '../support/locations.js';

describe('Locations: rebuild from raw and demo reports (service level)', () => {
  let t: MediumContext;
  let ingest: CreatedUser;
  let trackers: number[];

  beforeAll(async () => {
    t = await createMediumContext({ imports: [LocationsModule] });
    ingest = await t.factories.ingest();
    const run = (await t.factories.run()).id;
    trackers = [];
    for (let i = 0; i < 4; i++) trackers.push((await t.factories.tracker({ runId: run })).id);
    // A mixed data set sent out of order over several batches: eligible, low-confidence, in-box, late.
    const reports: ReportIn[] = [];
    for (const [n, id] of trackers.entries()) {
      for (let i = 0; i < 120; i++) {
        const at = Date.UTC(2026, 4, 1) + ((i * 7919 + n * 104_729) % (72 * 60)) * 60_000;
        reports.push(
          report(id, new Date(at).toISOString(), {
            latitude: i % 9 === 0 ? 30 : 40 + (i % 17) / 10,
            longitude: i % 9 === 0 ? 100 : 10 + (i % 13) / 10,
            confidence: i % 5,
          }),
        );
      }
    }
    for (let from = 0; from < reports.length; from += 97) {
      await ingestReports(t, ingest, reports.slice(from, from + 97));
    }
  });
  afterAll(() => t.close());

  const rebuild = (trackerId?: number) => t.get(LocationRebuildService).rebuild(AccessScope.admin(), { trackerId });

  it('leaves incrementally maintained aggregates unchanged (they already equal a recomputation)', async () => {
    const incremental = await aggregateTables(t.db, trackers);
    expect(incremental.hourly.length).toBeGreaterThan(50);
    expect(incremental).toEqual(referenceAggregates(await rawReports(t.db, trackers)));
    const progress: number[] = [];
    const count = await t.get(LocationRebuildService).rebuild(AccessScope.admin(), {
      progress: { start: (total) => progress.push(-total), advance: (done) => progress.push(done) },
    });
    expect(count).toBeGreaterThanOrEqual(4);
    expect(progress[0]).toBe(-count);
    expect(progress.at(-1)).toBe(count);
    expect(await aggregateTables(t.db, trackers)).toEqual(incremental);
  });

  it('repairs damaged aggregates and eligibility, for one tracker or for all', async () => {
    const good = await aggregateTables(t.db, trackers);
    const [a, b] = trackers;
    // Damage: lost rows, a wrong position, a row for a bucket with no eligible report, a wrong verdict.
    await t.db.query(
      `DELETE FROM location_history_hourly WHERE tracker_id = ANY($1) AND bucket IN (SELECT bucket FROM location_history_hourly WHERE tracker_id = $2 ORDER BY bucket LIMIT 5)`,
      [[a, b], a],
    );
    await t.db.query(`UPDATE location_history_daily SET latitude = 0 WHERE tracker_id = ANY($1)`, [[a, b]]);
    await t.db.query(
      `INSERT INTO location_history_hourly (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
       SELECT DISTINCT ON (tracker_id) tracker_id, '2020-01-01T00:00:00Z'::timestamptz, id, timestamp, 1, 1, 2
         FROM location_reports WHERE tracker_id = ANY($1) ORDER BY tracker_id, id`,
      [[a, b]],
    );
    await t.db.query(
      `UPDATE location_reports SET eligible = NOT eligible WHERE id IN (SELECT id FROM location_reports WHERE tracker_id = ANY($1) AND confidence < 2 LIMIT 3)`,
      [[a, b]],
    );
    const goodA = {
      hourly: good.hourly.filter((r) => r.tracker_id === a),
      daily: good.daily.filter((r) => r.tracker_id === a),
    };
    const damagedB = await aggregateTables(t.db, [b]);
    expect(await aggregateTables(t.db, [a])).not.toEqual(goodA);

    expect(await rebuild(a)).toBe(1);
    expect(await aggregateTables(t.db, [a])).toEqual(goodA);
    expect(await aggregateTables(t.db, [b])).toEqual(damagedB);

    await rebuild();
    expect(await aggregateTables(t.db, trackers)).toEqual(good);
    for (const row of await rawReports(t.db, trackers)) expect(row.eligible).toBe(filterReason(row) === null);
  });

  it('with raw retention on, rows whose report was pruned are kept; the rest is recomputed', async () => {
    const id = (await t.factories.tracker()).id;
    await ingestReports(t, ingest, [
      report(id, '2026-05-01T10:10:00Z', { latitude: 1 }),
      report(id, '2026-05-01T10:50:00Z', { latitude: 2 }),
      report(id, '2026-05-02T08:00:00Z', { latitude: 3 }),
    ]);
    const before = await aggregateTables(t.db, [id]);
    // Retention pruned the winner of 2026-05-01 10:00 (and of that day); a damaged row still has its report.
    await t.db.query(`DELETE FROM location_reports WHERE tracker_id = $1 AND latitude = 2`, [id]);
    await t.db.query(
      `UPDATE location_history_hourly SET latitude = 0 WHERE tracker_id = $1 AND bucket = '2026-05-02T08:00:00Z'`,
      [id],
    );
    await t.get(LocationRebuildService).rebuild(AccessScope.admin(), { trackerId: id, keepPrunedWinners: true });
    expect(await aggregateTables(t.db, [id])).toEqual(before);
    // Without the guard (retention off) the rebuild follows the raw table exactly.
    await rebuild(id);
    const after = await aggregateTables(t.db, [id]);
    expect(after).toEqual(referenceAggregates(await rawReports(t.db, [id])));
    expect(after.hourly.map((r) => r.latitude)).toEqual([1, 3]);
  });

  it('rebuild of an unknown tracker touches nothing; the CLI command validates --tracker', async () => {
    expect(await rebuild(999_999)).toBe(0);
    await expect(locationsRebuildCommand.run(t.ctx, { tracker: 'abc' })).rejects.toThrow(
      '--tracker must be a positive integer',
    );
    await expect(locationsRebuildCommand.run(t.ctx, { tracker: '999999' })).rejects.toThrow('tracker 999999 not found');
  });

  it('deleting a tracker deletes its reports and history (and nothing else); its reports are then rejected', async () => {
    const run = (await t.factories.run()).id;
    const [gone, kept] = [
      (await t.factories.tracker({ runId: run })).id,
      (await t.factories.tracker({ runId: run })).id,
    ];
    await ingestReports(t, ingest, [report(gone, '2026-05-01T10:00:00Z'), report(kept, '2026-05-01T10:00:00Z')]);
    const keptBefore = { raw: await rawReports(t.db, [kept]), aggregates: await aggregateTables(t.db, [kept]) };
    await t.db.query('DELETE FROM trackers WHERE id = $1', [gone]);
    expect(await rawReports(t.db, [gone])).toEqual([]);
    expect(await aggregateTables(t.db, [gone])).toEqual({ hourly: [], daily: [] });
    expect({ raw: await rawReports(t.db, [kept]), aggregates: await aggregateTables(t.db, [kept]) }).toEqual(
      keptBefore,
    );
    const res = await ingestReports(t, ingest, [report(gone, '2026-05-01T11:00:00Z')]);
    expect(res).toMatchObject({ accepted: 0, rejected: [{ index: 0, detail: 'tracker_id: tracker not found' }] });
  });

  /** A transaction holding the location-writes lock as an ingest batch does, with one report in it. */
  async function ingestHoldingTheLock(trackerId: number) {
    const runner = t.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    await runner.query('SELECT pg_advisory_xact_lock_shared($1)', [LOCATION_WRITES_LOCK_KEY]);
    await runner.query(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible) VALUES ($1, now(), 1, 1, 2, true)`,
      [trackerId],
    );
    return runner;
  }
  const settledWithin = (promise: Promise<unknown>, ms: number) =>
    Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), ms))]);

  it('a tracker delete waits for an ingest batch in flight, then removes what it stored', async () => {
    const id = (await t.factories.tracker()).id;
    const runner = await ingestHoldingTheLock(id);
    try {
      const deletion = t.db.query('DELETE FROM trackers WHERE id = $1', [id]);
      expect(await settledWithin(deletion, 300)).toBe(false);
      await runner.commitTransaction();
      await deletion;
    } finally {
      await runner.release();
    }
    expect(await rawReports(t.db, [id])).toEqual([]);
  });

  it('a batch that starts while a tracker delete is under way sees the tracker gone', async () => {
    const id = (await t.factories.tracker()).id;
    const deleter = t.db.createQueryRunner();
    await deleter.connect();
    try {
      await deleter.startTransaction();
      await deleter.query('DELETE FROM trackers WHERE id = $1', [id]); // its trigger now holds the lock
      const batch = ingestReports(t, ingest, [report(id, '2026-05-02T10:00:00Z')]);
      expect(await settledWithin(batch, 300)).toBe(false);
      await deleter.commitTransaction();
      const res = await batch;
      expect(res).toMatchObject({ accepted: 0, rejected: [{ index: 0, detail: 'tracker_id: tracker not found' }] });
    } finally {
      await deleter.release();
    }
    expect(await rawReports(t.db, [id])).toEqual([]);
  });

  it('a rebuild waits for an ingest batch in flight and includes its reports', async () => {
    const id = (await t.factories.tracker()).id;
    const runner = await ingestHoldingTheLock(id);
    try {
      const rebuilt = rebuild(id);
      expect(await settledWithin(rebuilt, 300)).toBe(false);
      await runner.commitTransaction();
      await rebuilt;
    } finally {
      await runner.release();
    }
    expect(await aggregateTables(t.db, [id])).toEqual(referenceAggregates(await rawReports(t.db, [id])));
    expect((await aggregateTables(t.db, [id])).hourly).toHaveLength(1);
  });

  it('demo seeder adds trails with low-confidence, in-box and late reports through ingestion', async () => {
    const before = (await rawReports(t.db)).length;
    const { reports } = await t.get(LocationsDemoSeeder).seed();
    const raw = await rawReports(t.db);
    expect(raw.length - before).toBe(reports);
    const added = raw.slice(before);
    expect(added.some((r) => filterReason(r) === 'low_confidence')).toBe(true);
    expect(added.some((r) => filterReason(r) === 'manufacturing_region')).toBe(true);
    const late = added.filter((r) => r.source === 'late-sync');
    expect(late.length).toBeGreaterThan(0);
    const all = await aggregateTables(t.db);
    expect(all).toEqual(referenceAggregates(raw));
    // Late reports arrived after newer ones of their hour and never became the hour's point.
    const winners = new Set(all.hourly.map((r) => r.report_id));
    expect(late.filter((r) => winners.has(r.id))).toEqual([]);
    // Both daily history (older than the hourly window) and recent hourly points exist.
    const seededTracker = added[0].tracker_id;
    const history = await t.db.query(
      `SELECT granularity, count(*)::int AS n FROM location_history WHERE tracker_id = $1 GROUP BY 1 ORDER BY 1`,
      [seededTracker],
    );
    expect(history.map((r: { granularity: string }) => r.granularity)).toEqual(['daily', 'hourly']);
  });
});
