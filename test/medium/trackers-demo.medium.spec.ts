import { AccessScope } from '../../src/common/auth/access-scope.js';
import { DemoDataService } from '../../src/seed/demo-data.service.js';
import { SeedModule } from '../../src/seed/seed.module.js';
import { TrackerListsService } from '../../src/trackers/tracker-lists.service.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

describe('Demo data through the tracker repository', () => {
  let t: MediumContext;
  beforeAll(async () => {
    t = await createMediumContext({ imports: [SeedModule] });
  });
  afterAll(() => t.close());

  it('creates trackers in every state whose status follows their history, with reports; can run twice', async () => {
    const { trackers } = await t.get(DemoDataService).seed(8);
    expect(trackers).toBe(12 * 8);
    const [stats] = await t.db.query(`
      SELECT count(*)::int AS trackers,
             count(DISTINCT status)::int AS states,
             count(*) FILTER (WHERE status = 'IN_STORAGE' AND storage_location_id IS NULL)::int AS storage_missing,
             count(*) FILTER (WHERE status <> 'IN_STORAGE' AND storage_location_id IS NOT NULL)::int AS storage_stray,
             count(*) FILTER (WHERE status IS DISTINCT FROM (
               SELECT h.status FROM tracker_status_history h WHERE h.tracker_id = t.id ORDER BY h.timestamp DESC, h.id DESC LIMIT 1
             ))::int AS inconsistent,
             (SELECT count(*)::int FROM tracker_status_history WHERE status = 'DELIVERED' AND delivery_location_id IS NULL) AS delivered_nowhere,
             (SELECT count(*)::int FROM tracker_status_history WHERE timestamp > now()) AS future_entries,
             (SELECT count(DISTINCT tracker_id)::int FROM tracker_status_history) AS with_history,
             (SELECT count(*)::int FROM location_reports) AS reports,
             (SELECT count(DISTINCT tracker_id)::int FROM location_history_hourly) AS located
        FROM trackers t`);
    expect(stats).toMatchObject({
      trackers: 96,
      states: 4,
      storage_missing: 0,
      storage_stray: 0,
      inconsistent: 0,
      delivered_nowhere: 0,
      future_entries: 0,
      with_history: 96,
      located: 96,
    });
    expect(stats.reports).toBeGreaterThan(96);

    const counts = (await t.get(TrackerListsService).statusCounts(AccessScope.admin())).value;
    expect(counts).toEqual({ CREATED: 24, IN_TRANSIT: 24, IN_STORAGE: 24, DELIVERED: 24, total: 96 });

    await t.get(DemoDataService).seed(2);
    const [{ n }] = await t.db.query('SELECT count(*)::int AS n FROM trackers');
    expect(n).toBe(96 + 24);
  });
});
