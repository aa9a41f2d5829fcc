import { createTestAppWithUser, GEOFENCE_ON, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { expectKeys, HEALTH_ROUTES, ISO_WITH_OFFSET, seedConsistentPipeline, STEP_KEYS } from '../support/health.js';

const BASIC_KEYS = ['status', 'timestamp', 'components', 'response_time_ms'];
const PIPELINE_KEYS = [
  'status',
  'timestamp',
  'success_rate',
  'successful_steps',
  'total_steps',
  'test_steps',
  'recommendations',
  'response_time_ms',
];
const METRIC_KEYS = [
  'success_rate',
  'components_healthy',
  'components_total',
  'basic_response_time_ms',
  'pipeline_response_time_ms',
  'response_time_ms',
];

function expectBasicShape(body: Record<string, unknown>): void {
  expectKeys(body, BASIC_KEYS);
  expect(body.status).toMatch(/^(healthy|unhealthy)$/);
  expect(body.timestamp).toMatch(ISO_WITH_OFFSET);
  expect(typeof body.response_time_ms).toBe('number');
  const components = body.components as Record<string, Record<string, unknown>>;
  expectKeys(components, ['database', 'cache_store']);
  for (const component of Object.values(components)) {
    expectKeys(component, ['status', 'error']);
    expect(component.status).toMatch(/^(healthy|unhealthy)$/);
    expect(component.error === null || typeof component.error === 'string').toBe(true);
  }
}

function expectPipelineShape(body: Record<string, unknown>): void {
  expectKeys(body, PIPELINE_KEYS);
  expect(body.status).toMatch(/^(healthy|degraded|unhealthy|error)$/);
  expect(body.timestamp).toMatch(ISO_WITH_OFFSET);
  expect(typeof body.success_rate).toBe('number');
  expect(Number.isInteger(body.successful_steps)).toBe(true);
  expect(body.total_steps).toBe(11);
  expect(typeof body.response_time_ms).toBe('number');
  const steps = body.test_steps as Record<string, Record<string, unknown>>;
  expectKeys(steps, STEP_KEYS);
  for (const step of Object.values(steps)) {
    expectKeys(step, ['name', 'success', 'details', 'issues']);
    expect(typeof step.name).toBe('string');
    expect(typeof step.success).toBe('boolean');
    expect(step.details).toEqual(expect.any(Object));
    expect(Array.isArray(step.issues)).toBe(true);
    expect(step.success).toBe((step.issues as unknown[]).length === 0);
  }
  expect(body.successful_steps).toBe(Object.values(steps).filter((s) => s.success).length);
  const views = steps.check_views_and_policies.details as Record<string, Record<string, unknown>>;
  expectKeys(views.views_status, ['location_history_hourly', 'location_history_daily', 'location_history']);
  for (const value of Object.values(views.views_status)) expect(typeof value).toBe('boolean');
  for (const rec of body.recommendations as Record<string, unknown>[]) {
    expectKeys(rec, ['severity', 'issue', 'action', 'documentation']);
    expect(rec.severity).toMatch(/^(critical|warning|info)$/);
    for (const field of ['issue', 'action', 'documentation']) expect(typeof rec[field]).toBe('string');
  }
}

/** The recommendation of each failed step, in step order (one per failed step). */
function failedSteps(pipeline: Record<string, unknown>): string[] {
  const steps = pipeline.test_steps as Record<string, { success: boolean }>;
  return STEP_KEYS.filter((key) => !steps[key].success);
}

describe('Health: access, shapes and the healthy case', () => {
  let t: TestApp;
  let admin: CreatedUser;
  beforeAll(async () => {
    ({ t, user: admin } = await createTestAppWithUser('admin'));
    await seedConsistentPipeline(t);
  });
  afterAll(() => t.close());

  it.each(HEALTH_ROUTES)('%s: 401 without a token, 403 for user and ingest', async (route) => {
    const none = await t.http().get(route);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ detail: 'Not authenticated' });
    const user = await t.factories.user();
    const ingest = await t.factories.ingest();
    for (const who of [user, ingest]) {
      const res = await t.http().get(route).set(who.auth);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ detail: 'Not enough permissions' });
    }
  });

  it('reports ingested through the API keep every pipeline step passing', async () => {
    const tracker = await t.factories.tracker();
    const ingest = await t.factories.ingest();
    const now = Date.now();
    const reports = Array.from({ length: 40 }, (_, i) => ({
      tracker_id: tracker.id,
      // Out of order, several per hour, some low-confidence and some inside the box.
      timestamp: new Date(now - ((i * 7919) % 40) * 17 * 60_000).toISOString(),
      latitude: i % 5 === 0 ? 31.2 : 40 + (i % 7),
      longitude: i % 5 === 0 ? 121.5 : -3 - (i % 11),
      confidence: i % 4,
    }));
    const res = await t.http().post('/api/v1/locations/reports').set(ingest.auth).send({ reports });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(40);
    const body = (await t.http().get('/api/v1/health/pipeline').set(admin.auth).expect(200)).body;
    expect(failedSteps(body)).toEqual([]);
    expect(body.test_steps.check_aggregation_freshness.details.eligible_reports).toBeGreaterThan(0);
    expect(body.test_steps.check_aggregation_rules.details.hourly.recomputed_buckets).toBeGreaterThan(0);
  });

  it('basic: both components healthy, exact shape', async () => {
    const res = await t.http().get('/api/v1/health/basic').set(admin.auth).expect(200);
    expectBasicShape(res.body);
    expect(res.body.status).toBe('healthy');
    expect(res.body.components).toEqual({
      database: { status: 'healthy', error: null },
      cache_store: { status: 'healthy', error: null },
    });
  });

  it('status: {status, timestamp} from the basic checks', async () => {
    const res = await t.http().get('/api/v1/health/status').set(admin.auth).expect(200);
    expectKeys(res.body, ['status', 'timestamp']);
    expect(res.body.status).toBe('healthy');
    expect(res.body.timestamp).toMatch(ISO_WITH_OFFSET);
  });

  it('pipeline: every step passes on consistent data, with one info recommendation', async () => {
    const res = await t.http().get('/api/v1/health/pipeline').set(admin.auth).expect(200);
    expectPipelineShape(res.body);
    expect(failedSteps(res.body)).toEqual([]);
    expect(res.body).toMatchObject({ status: 'healthy', success_rate: 100, successful_steps: 11, total_steps: 11 });
    expect(res.body.recommendations).toHaveLength(1);
    expect(res.body.recommendations[0].severity).toBe('info');
    expect(res.body.recommendations[0].documentation).toMatch(/^docs\/operations\.md#/);
    const steps = res.body.test_steps;
    expect(steps.check_views_and_policies.details.views_status).toEqual({
      location_history_hourly: true,
      location_history_daily: true,
      location_history: true,
    });
    expect(steps.check_views_and_policies.details.policies_status).toMatchObject({
      hourly_bucket_key: true,
      daily_bucket_key: true,
      history_cutoff_function: true,
      raw_retention_job: false,
    });
    expect(steps.check_aggregation_freshness.details).toMatchObject({ stale_hourly: 0, stale_daily: 0 });
    expect(steps.check_aggregation_freshness.details.eligible_reports).toBeGreaterThanOrEqual(4);
    expect(steps.check_aggregation_rules.details.hourly).toMatchObject({
      below_min_confidence: 0,
      inside_excluded_region: 0,
      recompute_mismatches: 0,
    });
    expect(steps.check_aggregation_rules.details.hourly.recomputed_buckets).toBeGreaterThan(0);
    expect(steps.check_status_consistency.details).toMatchObject({ mismatched: 0 });
    expect(steps.check_status_consistency.details.sampled_trackers).toBeGreaterThanOrEqual(2);
  });

  it('system: healthy, embeds basic and pipeline, overall metrics add up', async () => {
    const res = await t.http().get('/api/v1/health/system').set(admin.auth).expect(200);
    expectKeys(res.body, ['status', 'timestamp', 'basic', 'pipeline', 'overall_metrics']);
    expect(res.body.status).toBe('healthy');
    expect(res.body.timestamp).toMatch(ISO_WITH_OFFSET);
    expectBasicShape(res.body.basic);
    expectPipelineShape(res.body.pipeline);
    expectKeys(res.body.overall_metrics, METRIC_KEYS);
    for (const key of METRIC_KEYS) expect(typeof res.body.overall_metrics[key]).toBe('number');
    expect(res.body.overall_metrics).toMatchObject({
      success_rate: 100,
      components_healthy: 13,
      components_total: 13,
      basic_response_time_ms: res.body.basic.response_time_ms,
      pipeline_response_time_ms: res.body.pipeline.response_time_ms,
    });
  });

  it('db-pool: the pool numbers are consistent', async () => {
    const res = await t.http().get('/health/db-pool').set(admin.auth).expect(200);
    expectKeys(res.body, ['status', 'pool_stats', 'configuration']);
    const stats = res.body.pool_stats;
    expectKeys(stats, ['size', 'checked_in', 'checked_out', 'overflow', 'total', 'utilization_percent']);
    for (const key of ['size', 'checked_in', 'checked_out', 'overflow', 'total'])
      expect(Number.isInteger(stats[key])).toBe(true);
    expect(stats.size).toBe(5); // DB_POOL_SIZE of the test app
    expect(stats.checked_in + stats.checked_out).toBe(stats.size);
    expect(stats.utilization_percent).toBeCloseTo((stats.checked_out / stats.size) * 100, 2);
    expect(stats.total).toBeGreaterThanOrEqual(stats.checked_out);
    expect(res.body.status).toBe(
      stats.checked_in === 0 ? 'critical' : stats.utilization_percent > 80 ? 'warning' : 'healthy',
    );
    expect(res.body.configuration).toEqual({ using_pgbouncer: false, environment: 'test' });
  });

  it('documents every health route and the step schema in OpenAPI', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    for (const route of HEALTH_ROUTES) expect(doc.paths[route]?.get).toBeDefined();
    expect(doc.components.schemas.PipelineStepResponse).toBeDefined();
    expect(doc.paths['/api/v1/health/basic'].get.responses['200']).toBeDefined();
  });

  it('is not under /api/v1 for the pool, nor outside it for the others', async () => {
    await t.http().get('/api/v1/health/db-pool').set(admin.auth).expect(404);
    await t.http().get('/health/basic').set(admin.auth).expect(404);
  });
});

describe('Health: forced failures move the right step and the overall status', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let trackerIds: number[];
  const pipeline = async () => (await t.http().get('/api/v1/health/pipeline').set(admin.auth).expect(200)).body;
  const system = async () => (await t.http().get('/api/v1/health/system').set(admin.auth).expect(200)).body;

  beforeAll(async () => {
    // Automation on, so a mark waiting too long is a failure (the last test uses one).
    ({ t, user: admin } = await createTestAppWithUser('admin', { env: GEOFENCE_ON }));
    ({ trackerIds } = await seedConsistentPipeline(t));
  });
  afterAll(() => t.close());

  it('an hourly row below confidence 2 fails check_aggregation_rules only', async () => {
    await t.db.query(
      `INSERT INTO location_history_hourly (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
       VALUES ($1, '2025-01-01T05:00:00Z', 999999, '2025-01-01T05:10:00Z', 40.0, -3.7, 1)`,
      [trackerIds[0]],
    );
    try {
      const body = await pipeline();
      expectPipelineShape(body);
      expect(failedSteps(body)).toEqual(['check_aggregation_rules']);
      expect(body.test_steps.check_aggregation_rules.details.hourly.below_min_confidence).toBe(1);
      expect(body.test_steps.check_aggregation_rules.issues[0]).toMatch(/confidence below 2/);
      expect(body).toMatchObject({ status: 'healthy', success_rate: 90.91, successful_steps: 10 });
      expect(body.recommendations).toEqual([
        expect.objectContaining({ severity: 'critical', documentation: 'docs/operations.md#check_aggregation_rules' }),
      ]);
    } finally {
      await t.db.query(`DELETE FROM location_history_hourly WHERE report_id = 999999`);
    }
    expect(failedSteps(await pipeline())).toEqual([]);
  });

  it('a daily row inside the manufacturing-region box fails check_aggregation_rules', async () => {
    await t.db.query(
      `INSERT INTO location_history_daily (tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence)
       VALUES ($1, '2025-01-01T00:00:00Z', 999998, '2025-01-01T05:10:00Z', 31.2, 121.5, 5)`,
      [trackerIds[0]],
    );
    try {
      const body = await pipeline();
      expect(failedSteps(body)).toEqual(['check_aggregation_rules']);
      expect(body.test_steps.check_aggregation_rules.details.daily.inside_excluded_region).toBe(1);
    } finally {
      await t.db.query(`DELETE FROM location_history_daily WHERE report_id = 999998`);
    }
  });

  it('an eligible raw report newer than its aggregate fails freshness (and the recomputation sample)', async () => {
    const [report] = await t.db.query(
      `INSERT INTO location_reports (tracker_id, timestamp, latitude, longitude, confidence, eligible)
       VALUES ($1, '2026-03-02T09:55:00Z', 51.0, 5.0, 3, true) RETURNING id`,
      [trackerIds[0]],
    );
    try {
      const body = await pipeline();
      expect(failedSteps(body)).toEqual(['check_aggregation_freshness', 'check_aggregation_rules']);
      expect(body.test_steps.check_aggregation_freshness.details).toMatchObject({ stale_hourly: 1, stale_daily: 1 });
      expect(body.test_steps.check_aggregation_freshness.details.examples[0]).toMatchObject({
        report_id: String(report.id),
      });
      expect(body.test_steps.check_aggregation_rules.details.hourly.recompute_mismatches).toBe(1);
      expect(body.test_steps.check_aggregation_rules.details.daily.recompute_mismatches).toBe(1);
      expect(body.test_steps.check_aggregation_rules.details.hourly.below_min_confidence).toBe(0);
      // Two of ten steps failed: 80 % is still the healthy band (two critical recommendations say why).
      expect(body).toMatchObject({ status: 'healthy', success_rate: 81.82 });
    } finally {
      await t.db.query(`DELETE FROM location_reports WHERE id = $1`, [report.id]);
    }
  });

  it('a tracker whose status disagrees with its latest entry fails check_status_consistency', async () => {
    await t.db.query(`UPDATE trackers SET status = 'DELIVERED' WHERE id = $1`, [trackerIds[0]]);
    try {
      const body = await pipeline();
      expect(failedSteps(body)).toEqual(['check_status_consistency']);
      expect(body.test_steps.check_status_consistency.details).toMatchObject({
        mismatched: 1,
        examples: [{ tracker_id: trackerIds[0], status: 'DELIVERED', latest_entry_status: 'IN_TRANSIT' }],
      });
      expect(body.recommendations).toEqual([
        expect.objectContaining({ severity: 'warning', documentation: 'docs/operations.md#check_status_consistency' }),
      ]);
    } finally {
      await t.db.query(`UPDATE trackers SET status = 'IN_TRANSIT' WHERE id = $1`, [trackerIds[0]]);
    }
  });

  // Destructive: runs last in this file's own cloned database.
  it('a dropped view shows in views_status; more failures move the pipeline and system down the table', async () => {
    await t.db.query('DROP VIEW location_history');
    let body = await system();
    expect(body.pipeline.test_steps.check_views_and_policies).toMatchObject({ success: false });
    expect(body.pipeline.test_steps.check_views_and_policies.details.views_status).toEqual({
      location_history_hourly: true,
      location_history_daily: true,
      location_history: false,
    });
    expect(failedSteps(body.pipeline)).toEqual(['check_views_and_policies']);
    expect(body.pipeline.recommendations).toEqual([
      expect.objectContaining({ severity: 'critical', documentation: 'docs/operations.md#check_views_and_policies' }),
    ]);
    expect(body.pipeline.status).toBe('healthy'); // 10/11 = 90.91 %
    expect(body.status).toBe('healthy');

    // 8/11 = 72.73 % → pipeline degraded → system degraded. A webhook delivery held by a stuck worker
    // 20 minutes past its due time is the third failure.
    await t.db.query(`UPDATE trackers SET status = 'DELIVERED' WHERE id = $1`, [trackerIds[0]]);
    const [{ id: webhookId }] = await t.db.query(
      `INSERT INTO webhooks (user_id, url, event_types, secret) VALUES ($1, 'http://127.0.0.1:9/', '{tracker.status_changed}', 'unused') RETURNING id`,
      [admin.id],
    );
    await t.db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_type, next_attempt_at, claimed_until) VALUES ($1, 'webhook.test', now() - interval '20 minutes', now() + interval '1 hour')`,
      [webhookId],
    );
    body = await system();
    expect(body.pipeline.test_steps.check_webhook_delivery).toMatchObject({ success: false });
    expect(body.pipeline).toMatchObject({ status: 'degraded', success_rate: 72.73, successful_steps: 8 });
    expect(body.status).toBe('degraded');
    expect(body.pipeline.recommendations).toHaveLength(3);

    // 6/11 = 54.55 % → pipeline unhealthy → system unhealthy (basic is still fine). A geofence mark
    // held by a stuck worker for two minutes is the fifth failure.
    await t.db.query('DROP TABLE images');
    await t.db.query(
      `INSERT INTO geofence_pending (tracker_id, from_ts, marked_at, claimed_until) VALUES ($1, now(), now() - interval '2 minutes', now() + interval '1 hour')`,
      [trackerIds[0]],
    );
    body = await system();
    expect(body.pipeline.test_steps.check_required_tables.details.missing_tables).toEqual(['images']);
    expect(body.pipeline).toMatchObject({ status: 'unhealthy', success_rate: 54.55, successful_steps: 6 });
    expect(body.basic.status).toBe('healthy');
    expect(body.status).toBe('unhealthy');
    expect(body.overall_metrics).toMatchObject({ success_rate: 54.55, components_healthy: 8, components_total: 13 });
  });
});

describe('Health: a dead cache store', () => {
  let t: TestApp;
  let admin: CreatedUser;
  beforeAll(
    async () =>
      ({ t, user: admin } = await createTestAppWithUser('admin', { env: { REDIS_URL: 'redis://127.0.0.1:1' } })),
  );
  afterAll(() => t.close());

  it('basic and status are unhealthy with cache_store unhealthy; the database stays healthy', async () => {
    const basic = await t.http().get('/api/v1/health/basic').set(admin.auth).expect(200);
    expectBasicShape(basic.body);
    expect(basic.body.status).toBe('unhealthy');
    expect(basic.body.components.database).toEqual({ status: 'healthy', error: null });
    expect(basic.body.components.cache_store.status).toBe('unhealthy');
    expect(basic.body.components.cache_store.error).toEqual(expect.any(String));
    const status = await t.http().get('/api/v1/health/status').set(admin.auth).expect(200);
    expect(status.body.status).toBe('unhealthy');
  });

  it('system is critical; the pipeline fails check_cache_store only', async () => {
    const res = await t.http().get('/api/v1/health/system').set(admin.auth).expect(200);
    expect(res.body.status).toBe('critical');
    expect(res.body.basic.status).toBe('unhealthy');
    expect(failedSteps(res.body.pipeline)).toEqual(['check_cache_store']);
    expect(res.body.pipeline.recommendations).toEqual([
      expect.objectContaining({ severity: 'warning', documentation: 'docs/operations.md#check_cache_store' }),
    ]);
    expect(res.body.overall_metrics).toMatchObject({ components_healthy: 11, components_total: 13 });
  });
});

describe('Health: production mode', () => {
  let t: TestApp;
  let admin: CreatedUser;
  beforeAll(
    async () => ({ t, user: admin } = await createTestAppWithUser('admin', { env: { NODE_ENV: 'production' } })),
  );
  afterAll(() => t.close());

  it('has no /health/db-pool (404 Not Found, even before authentication)', async () => {
    const withToken = await t.http().get('/health/db-pool').set(admin.auth);
    expect(withToken.status).toBe(404);
    expect(withToken.body).toEqual({ detail: 'Not Found' });
    const anonymous = await t.http().get('/health/db-pool');
    expect(anonymous.status).toBe(404);
    expect(anonymous.body).toEqual({ detail: 'Not Found' });
  });

  it('still serves the other health routes', async () => {
    const res = await t.http().get('/api/v1/health/basic').set(admin.auth).expect(200);
    expect(res.body.status).toBe('healthy');
  });
});
