import { MetricsService } from '../../src/metrics/metrics.service.js';
import { closeApps, createPeerApp, createTestApp, type TestApp } from '../support/app.js';
import { ReliabilityProbeModule } from '../support/reliability.js';

/** Value of one sample line (`name{labels} value`) in a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => present[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe('Metrics: GET /metrics (Prometheus)', () => {
  let t: TestApp;
  let other: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({ imports: [ReliabilityProbeModule] });
    // A second app in the same process: its own registry, no "metric already registered" clash.
    other = await createPeerApp(t);
    token = (await t.factories.admin()).token;
  });

  afterAll(() => closeApps(other, t));

  const scrape = async (app: TestApp = t) => {
    const res = await app.http().get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text;
  };

  it('is served without the /api/v1 prefix and without a token when METRICS_TOKEN is unset', async () => {
    await t.http().get('/api/v1/metrics').expect(404);
    const text = await scrape();
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
  });

  it('times requests by route template, method and status', async () => {
    await t.http().get('/api/v1/clients').set('Authorization', `Bearer ${token}`).expect(200);
    await t.http().get('/api/v1/clients/999999').set('Authorization', `Bearer ${token}`).expect(404);
    await t.http().get('/api/v1/clients').expect(401);
    await t.http().get('/api/v1/no-such-route/123').expect(404);
    const text = await scrape();
    const count = (route: string, status: string) =>
      sample(text, 'http_request_duration_seconds_count', { method: 'GET', route, status });
    expect(count('/api/v1/clients', '200')).toBe(1);
    expect(count('/api/v1/clients', '401')).toBe(1);
    expect(count('/api/v1/clients/:id', '404')).toBe(1);
    // Unmatched paths share one label value, so random URLs cannot blow up the series count.
    expect(count('unmatched', '404')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('no-such-route');
    expect(text).not.toContain('/clients/999999');
    // Only the scrape in progress is in flight.
    expect(sample(text, 'http_requests_in_flight')).toBe(1);
  });

  it('counts cache hits and misses', async () => {
    const before = await scrape();
    const hits = sample(before, 'cache_requests_total', { result: 'hit' }) ?? 0;
    const misses = sample(before, 'cache_requests_total', { result: 'miss' }) ?? 0;
    await t
      .http()
      .post('/api/v1/reliability-probe/write')
      .set('Authorization', `Bearer ${token}`)
      .send({ name: 'metrics-probe' })
      .expect(201);
    expect(
      (await t.http().get('/api/v1/reliability-probe/read').set('Authorization', `Bearer ${token}`)).body.cached,
    ).toBe(false);
    expect(
      (await t.http().get('/api/v1/reliability-probe/read').set('Authorization', `Bearer ${token}`)).body.cached,
    ).toBe(true);
    const after = await scrape();
    // At least the probe's own miss and hit (the guard's revocation lookups add more).
    expect(sample(after, 'cache_requests_total', { result: 'hit' })).toBeGreaterThanOrEqual(hits + 1);
    expect(sample(after, 'cache_requests_total', { result: 'miss' })).toBeGreaterThanOrEqual(misses + 1);
    expect(sample(after, 'cache_store_errors_total')).toBe(0);
  });

  it('exposes pool usage and database availability', async () => {
    const text = await scrape();
    expect(sample(text, 'db_pool_connections', { state: 'size' })).toBe(t.config.dbPoolSize);
    expect(sample(text, 'db_pool_connections', { state: 'waiting' })).toBe(0);
    expect(sample(text, 'db_pool_connections', { state: 'open' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'db_available')).toBe(1);
    expect(sample(text, 'db_pool_refused_total', { reason: 'exhausted' })).toBe(0);
  });

  it('counts the reports of a real ingest batch by outcome', async () => {
    const before = await scrape();
    const value = (text: string, outcome: string) => sample(text, 'ingest_reports_total', { outcome }) ?? 0;
    const tracker = await t.factories.tracker();
    const report = {
      tracker_id: tracker.id,
      timestamp: '2026-03-01T10:00:00Z',
      latitude: 48.1,
      longitude: 11.5,
      confidence: 3,
    };
    const res = await t
      .http()
      .post('/api/v1/locations/reports')
      .set('Authorization', `Bearer ${token}`)
      .send({
        reports: [
          report,
          report,
          { ...report, timestamp: '2026-03-01T11:00:00Z', confidence: 1 },
          { ...report, latitude: 123 },
        ],
      })
      .expect(200);
    expect(res.body).toMatchObject({ accepted: 2, duplicates: 1, filtered_low_confidence: 1 });
    expect(res.body.rejected).toHaveLength(1);
    const after = await scrape();
    expect(value(after, 'accepted') - value(before, 'accepted')).toBe(2);
    expect(value(after, 'duplicate') - value(before, 'duplicate')).toBe(1);
    expect(value(after, 'rejected') - value(before, 'rejected')).toBe(1);
    expect(value(after, 'filtered_low_confidence') - value(before, 'filtered_low_confidence')).toBe(1);
    expect(value(after, 'filtered_manufacturing_region') - value(before, 'filtered_manufacturing_region')).toBe(0);
  });

  it('counts ingested reports by outcome, per app', async () => {
    const metrics = t.app.get(MetricsService);
    metrics.recordIngest('accepted', 7);
    metrics.recordIngest('duplicate', 2);
    metrics.recordIngest('filtered_low_confidence', 1);
    metrics.recordIngest('accepted', 3);
    const text = await scrape();
    expect(sample(text, 'ingest_reports_total', { outcome: 'accepted' })).toBeGreaterThanOrEqual(10);
    expect(sample(text, 'ingest_reports_total', { outcome: 'filtered_manufacturing_region' })).toBeGreaterThanOrEqual(
      0,
    );
    expect(sample(await scrape(other), 'ingest_reports_total', { outcome: 'accepted' })).toBe(0);
  });
});

describe('Metrics: protected by METRICS_TOKEN', () => {
  let t: TestApp;
  const METRICS_TOKEN = 'scrape-secret-0123456789';

  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_TOKEN } });
  });
  afterAll(() => t?.close());

  it('answers 401 without the token, with a wrong one or with a user JWT, and 200 with it', async () => {
    const missing = await t.http().get('/metrics').expect(401);
    expect(missing.body).toEqual({ detail: 'Not authenticated' });
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    const wrong = await t.http().get('/metrics').set('Authorization', 'Bearer scrape-secret-0123456780').expect(401);
    expect(wrong.body).toEqual({ detail: 'Could not validate credentials' });
    const admin = await t.factories.admin();
    await t.http().get('/metrics').set(admin.auth).expect(401);
    const ok = await t.http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    expect(ok.text).toContain('http_request_duration_seconds');
  });
});
